#include "stop_rule.h"

namespace loadgen {

const char* const kRanOutMessage =
    "Ending early: Ran out of generated queries to issue before the minimum query count and test duration "
    "were reached. Please update the relevant expected latency or target qps in the TestSettings so they "
    "are more accurate.";

std::string stop_message(const StopDecision& d, uint64_t thread) {
  const std::string early = "IssueQueryThread " + std::to_string(thread) + " Ending early: ";
  switch (d.reason) {
    case StopReason::Natural:
      return "Ending naturally: Minimum query count and test duration met.";
    case StopReason::TooManyOutstanding:
      return early + "Too many outstanding queries. issued " + std::to_string(d.issued) + " outstanding " +
             std::to_string(d.outstanding);
    case StopReason::MaxQueries:
      return early + "Max query count reached. query_count " + std::to_string(d.issued);
    case StopReason::MaxDuration:
      return early + "Max test duration reached. duration_ns " + std::to_string(d.elapsed_ns);
    default:
      return {};
  }
}

}  // namespace loadgen

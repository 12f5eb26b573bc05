#include "find_peak.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace loadgen {

namespace {

std::string qps_text(double qps) { return std::to_string(qps); }  // the reference's to_string: %f

// The overhead of the (last) trial run at `qps`.
RunOverhead overhead_of_trial(const std::vector<PeakTrial>& trials, double qps) {
  for (auto it = trials.rbegin(); it != trials.rend(); ++it) {
    if (it->target_qps == qps) return it->overhead;
  }
  return {};
}

}  // namespace

void find_peak_performance(const TestSettings& settings, Scenario scenario, const PeakTrials& trials,
                           const std::atomic<bool>& aborted, RunLog& log, RunOutcome& outcome) {
  auto message = [&](const std::string& text) { log.log("generic_message", text, false, false); };
  auto error = [&](const std::string& key, const std::string& text) { log.log(key, text, true, false); };
  auto report = [&](const PerformanceSummary& summary, double qps) {
    outcome.summary = summary;
    outcome.has_summary = true;
    outcome.peak_qps = qps;
    outcome.overhead = overhead_of_trial(outcome.peak_trials, qps);
  };
  message("Starting FindPeakPerformance mode");
  if (scenario != Scenario::Server) {
    error("error_invalid_config", "Finding peak performance is only supported in Server scenarios.");
    return;
  }
  const double step = settings.server_find_peak_qps_boundary_step_size;
  const double scale = std::pow(10.0, static_cast<uint8_t>(settings.server_find_peak_qps_decimals_of_precision));
  // Upper bounds beyond this would pre-generate more queries than a run can hold.
  const double max_qps = 4.0e9 / std::max(1.0, static_cast<double>(settings.min_duration_ms) / 1000.0);

  double lower_qps = settings.server_target_qps;
  PerformanceSummary lower;
  message("FindPeakPerformance: Check validity of the base settings field: " + qps_text(lower_qps));
  if (!trials.run(lower_qps, true, true, &lower)) return;
  if (!lower.perf_constraints_met) {
    error("error_runtime", "FindPeakPerformance: Initial lower bound does not satisfy performance constraints, msg: " +
                               lower.perf_constraints_recommendation);
    outcome.summary = lower;
    outcome.has_summary = true;
    outcome.overhead = outcome.peak_trials.front().overhead;
    return;
  }

  // FindBoundaries: widen until a trial fails the latency constraint.
  double upper_qps = 0;
  for (;;) {
    upper_qps = lower_qps * (1 + step);
    if (!(upper_qps > lower_qps) || upper_qps > max_qps) {
      error("error_runtime", "FindPeakPerformance: cannot widen the bounds beyond " + qps_text(lower_qps) +
                                 " (boundary step size or generation limit); reporting the lower bound.");
      report(lower, lower_qps);
      return;
    }
    message("FindBoundaries: Checking fields [" + qps_text(lower_qps) + ", " + qps_text(upper_qps) + ")");
    PerformanceSummary upper;
    if (!trials.run(upper_qps, true, true, &upper)) return;
    if (!upper.perf_constraints_met) break;
    lower_qps = upper_qps;
    lower = upper;
  }
  message("FindPeakPerformance: Found boundaries: [" + qps_text(lower_qps) + ", " + qps_text(upper_qps) + ")");

  // Binary search on one loaded set (the upper bound's), kept loaded throughout.
  bool loaded = false;
  auto finished = [&] { return std::floor(lower_qps * scale) + 1 >= std::floor(upper_qps * scale); };
  while (!finished() && !aborted.load(std::memory_order_acquire)) {
    const double mid_qps = lower_qps + (upper_qps - lower_qps) / 2;
    message("FindPeakPerformanceBinarySearch: Testing the mid value of bounds [" + qps_text(lower_qps) + ", " +
            qps_text(upper_qps) + "): " + qps_text(mid_qps));
    PerformanceSummary mid;
    if (!trials.run(mid_qps, !loaded, false, &mid)) break;
    loaded = true;
    if (mid.perf_constraints_met) {
      lower_qps = mid_qps;
      lower = mid;
    } else {
      upper_qps = mid_qps;
    }
  }
  if (loaded) trials.unload_kept();
  if (aborted.load(std::memory_order_acquire)) return;
  message("FindPeakPerformance: Found peak performance field: " + qps_text(lower_qps));
  report(lower, lower_qps);
}

}  // namespace loadgen

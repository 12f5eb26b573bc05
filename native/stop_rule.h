// Why issuing a series ends: the reference's stop checks (spec/30 §4),
// stated once. Whoever issues a query evaluates them (the issue thread, a
// completing call that hands the next query over, the poller, a spinning
// worker); the issue thread logs the outcome.
#pragma once

#include <cstdint>
#include <string>

#include "series.h"

namespace loadgen {

// After `issued` queries of `series` were issued, the last one `elapsed_ns`
// after the start: why issuing ends (None: it goes on). Checks in the
// reference's order: Server's outstanding count or the natural end, then
// max query count, then max duration, then the last generated query.
// Accuracy series end only with their last query.
// (Inline: it runs for every query issued.)
inline StopDecision decide_stop(const Series& series, uint64_t issued, int64_t elapsed_ns) {
  StopDecision d;
  d.elapsed_ns = elapsed_ns;
  d.issued = issued;
  const StopLimits& limit = series.limits;
  if (series.kind != SeriesKind::Accuracy) {  // accuracy series issue every query
    if (series.scenario == Scenario::Server) {
      if (limit.max_async != 0) {
        // Read only when needed: the completing threads write this counter.
        d.outstanding = issued - series.done_queries.load(std::memory_order_acquire);
        if (d.outstanding > limit.max_async) d.reason = StopReason::TooManyOutstanding;
      }
    } else if (issued >= limit.min_queries && elapsed_ns >= limit.target_ns) {
      d.reason = StopReason::Natural;
    }
    if (d.reason == StopReason::None && limit.max_queries != 0 && issued >= limit.max_queries) {
      d.reason = StopReason::MaxQueries;
    } else if (d.reason == StopReason::None && limit.max_ns != 0 && elapsed_ns > limit.max_ns) {
      d.reason = StopReason::MaxDuration;
    }
  }
  if (d.reason == StopReason::None && issued >= series.trace.query_count()) d.reason = StopReason::LastQuery;
  return d;
}

// The reference's log text for an end the issue thread reports, naming its
// issue thread `thread` (empty for None and LastQuery).
std::string stop_message(const StopDecision& decision, uint64_t thread);
// Whether that message is an error ("Ending early: ...") rather than a generic message.
inline bool stop_is_error(StopReason reason) { return reason != StopReason::Natural; }

// Logged after FlushQueries when a non-Server performance series issued every
// generated query before its natural end.
extern const char* const kRanOutMessage;

}  // namespace loadgen

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

// How far past max_duration the issue thread still waits for a Server
// query. The reference waits for the first query due after max_duration and
// issues it before its check ends the series; loadgen does the same when
// that query is due within this, so runs at any usual rate keep the
// reference's trace (at >= 100 queries/s the gap is shorter with probability
// 1 - e^-10). A query due later is not waited for (qps 0.2 with
// max_duration 1 s waited 4.7 s): the series ends at max_duration.
constexpr int64_t kMaxDurationOvershootNs = 100000000;

// Until when, from the series start, the issue thread waits for Server query
// q: its scheduled time; or, when max_duration ends issuing well before q is
// due, just past max_duration, where decide_stop(series, q, elapsed) says
// MaxDuration and q is never issued.
inline int64_t server_wait_until_ns(const Series& series, uint64_t q) {
  const int64_t due = series.trace.scheduled_delta_ns[q];
  const int64_t max_ns = series.limits.max_ns;
  if (series.kind == SeriesKind::Accuracy || max_ns == 0 || due - max_ns <= kMaxDurationOvershootNs) return due;
  return max_ns + 1;
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

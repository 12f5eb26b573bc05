// The one issuing primitive. Every thread that issues a query goes through
// it: the issue thread (issue_loop.cc), a completing call handing the next
// SingleStream/MultiStream query over (recorder.cc), the poller and a
// spinning dispatch worker issuing a due Server query the issue thread is
// late for (dispatch.cc). Issuing query q is: claim it, stamp issued_ns,
// evaluate the stop rule, record the end decision, publish.
//
// Invariants (why each memory order):
// - Claims: where another thread may issue (Series::others_issue()), query q
//   belongs to whoever moves next_issue from q to q + 1 (one CAS, acq_rel).
//   Where nobody else issues, the issue thread owns every query and
//   next_issue is not touched.
// - The end decision (Series::end, issue_ended) is written before the
//   query's publication, so a thread that sees the query published (acquire)
//   also sees that issuing ended and never claims past it.
// - published is stored with release after issued_ns and the end decision;
//   every reader (drains, completions, claims) loads it with acquire.
// - The issue thread closes next_issue (kHandOverClosed) when its loop ends;
//   a claim made before that is still published and counted.
#pragma once

#include <cstdint>

#include "series.h"
#include "stop_rule.h"

namespace loadgen {

// The stop rule after `issued` queries, the last issued `elapsed_ns` after
// the start; an end is recorded (Series::end, then issue_ended, release).
inline StopDecision decide_and_record(Series& series, uint64_t issued, int64_t elapsed_ns) {
  const StopDecision decision = decide_stop(series, issued, elapsed_ns);
  if (decision.reason != StopReason::None) {
    series.end = decision;
    series.issue_ended.store(true, std::memory_order_release);
  }
  return decision;
}

// Where nobody else issues (!Series::others_issue()): stamps queries
// [first, last] with one issue time and publishes them; the issue thread
// decides the stop rule after handing them to the SUT, as the reference
// checks after its IssueQuery returns (the query reaches the SUT one
// evaluation sooner, and a SUT that completed it meanwhile is not counted
// outstanding).
inline void stamp_and_publish(Series& series, uint64_t first, uint64_t last, int64_t elapsed_ns) {
  for (uint64_t q = first; q <= last; ++q) series.issued_ns[q] = elapsed_ns;
  series.published.store(last + 1, std::memory_order_release);
}

// Issues queries [first, last] of `series`, already claimed by the caller,
// with one issue time `elapsed_ns` (from the series start; several queries
// only when coalescing): stamps them, decides the stop rule for the last
// one, records an end decision, then publishes them. Returns the decision.
// Required where others may issue: whoever issues decides before publishing.
// (Inline: the issue loop calls it for every query.)
inline StopDecision issue_claimed(Series& series, uint64_t first, uint64_t last, int64_t elapsed_ns) {
  for (uint64_t q = first; q <= last; ++q) series.issued_ns[q] = elapsed_ns;
  const StopDecision decision = decide_and_record(series, last + 1, elapsed_ns);
  series.published.store(last + 1, std::memory_order_release);
  return decision;
}

// From a thread other than the issue thread: claims query `q` (one CAS on
// next_issue) unless issuing ended or `issuing_stopped` (the run was aborted
// or interrupted), and issues it now.
// Returns the new published count (q + 1) and the decision, or 0 when the
// query was not this caller's to issue.
struct Issued {
  uint64_t published = 0;
  StopReason reason = StopReason::None;
};
Issued try_issue(Series& series, uint64_t q, bool issuing_stopped);

// The issue thread, where others may issue: claims query `q` and returns q,
// or, when others claimed it (and maybe more), waits until what they claimed
// is published and returns their claim count n > q.
uint64_t claim_or_catch_up(Series& series, uint64_t q);

// The issue thread, where others may issue, ending issuing before query q
// (max_duration passed while it waited for q): closes claiming unless
// another thread claimed q meanwhile. True when closed: q is never issued.
inline bool close_before(Series& series, uint64_t q) {
  uint64_t expected = q;
  return series.next_issue.compare_exchange_strong(expected, Series::kHandOverClosed, std::memory_order_acq_rel);
}

// The issue thread, when its loop is over (others_issue() only): nobody
// claims any more. Returns how many queries were claimed, all published.
uint64_t close_issuing(Series& series);

}  // namespace loadgen

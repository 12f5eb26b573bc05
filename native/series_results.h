// Results of one finished series, from its records: the performance summary
// (latencies from each query's scheduled time, token latencies), the token
// errors the reference counts, and the loadgen's own overhead.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "results.h"
#include "run_outcome.h"
#include "scratch_array.h"
#include "series.h"

namespace loadgen {

// The PerformanceSummary of a performance series; `issue_duration_ns` gets
// the start of issuing to the last completion. Failed samples (and, in
// MultiStream, the queries they belong to) are left out of the latencies,
// token latencies, token counts and rates: they describe the responses
// that succeeded; the failures are counted apart and make the run INVALID.
PerformanceSummary summarize_series(const Series& series, const EffectiveSettings& effective,
                                    const std::string& sut_name, int64_t* issue_duration_ns);

// The latency of query `q` (or of one of its samples) completed at `done`
// (from the series start): from its scheduled time, never from before its
// issue. Recorder replaces a caller's stamp older than the issue; our own
// clock, read on entry to a completion call, can precede the issue only for
// an id the SUT completed before it was handed the query (a guessed id),
// which then counts as completed when it was issued.
inline int64_t completion_since_scheduled(const Series& series, uint64_t q, int64_t done) {
  const int64_t issued = series.issued_ns[q];
  return (done < issued ? issued : done) - scheduled_ns(series, q);
}

// The token figures of sample `k` of a token-latency series (n_tokens set),
// completed successfully at `done`, exactly as the summary computes them: the
// token count (the reference's coercions: negative and 1 count as 0), and
// where measured the TTFT (first token - scheduled; not Offline) and the
// TPOT ((latency - TTFT) / (n - 1), 2+ tokens).
struct SampleTokens {
  int64_t n = 0;
  bool has_ttft = false;
  int64_t ttft = 0;
  bool has_tpot = false;
  int64_t tpot = 0;
};
SampleTokens sample_tokens(const Series& series, uint64_t k, int64_t done);

// Per sample of `series`, whether it completed as failed (Session::fail);
// empty when none did (the common case costs nothing).
std::vector<bool> failed_sample_mask(const Series& series);

// Token errors of a finished series (spec/30 §9), added to `errors`. Failed
// samples have no tokens to check.
void check_tokens(const Series& series, CompletionErrorCounts* errors);

// Per issued query of `series`, `times[q]` (issued_ns or dispatched_ns)
// minus when the query was due (RunOverhead); queries without a time, or
// whose predecessor never completed, are left out.
ScratchArray<int64_t> times_since_due(const Series& series, Scenario scenario, const int64_t* times);
ScratchArray<int64_t> times_since_due(const Series& series, Scenario scenario, const std::atomic<int64_t>* times);

// Issue lateness and delivery lag over the series' queries.
RunOverhead measure_overhead(const Series& series);

}  // namespace loadgen

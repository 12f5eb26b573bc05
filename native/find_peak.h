// FindPeakPerformance (Server only): widen [lower, upper) from the base
// target QPS until a trial fails, then binary-search it on one loaded set
// (the reference's FindPeakPerformanceMode). Each trial is a full
// performance series run by the session. A trial passes when it meets the
// latency constraint and every sample it issued completed without failing:
// a failed request is never a success, however fast it failed.
//
// The search always ends by itself: at most kMaxWideningTrials widening
// trials and kMaxBisectionTrials bisection trials (see there), each trial
// bounded in time by the session (its issue time by min_duration_ms /
// min_query_count / max_duration_ms, its wait for completions by the stall
// limit, kPeakTrialStallLimitMs when completion_timeout_ms is 0).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "failure_kinds.h"
#include "results.h"
#include "run_log.h"
#include "run_outcome.h"

namespace loadgen {

// Widening trials after the base trial. At the default step (1: doubling)
// 32 span 2^32 times the base QPS, further than the generation limit lets a
// trial go from any base; a small step (say 0.01: 1.01^32 = 1.4x) could
// otherwise widen for millions of trials. When the cap is reached the search
// reports the lower bound it got to, with an error saying why.
constexpr int kMaxWideningTrials = 32;
// Bisection trials: each halves [lower, upper); 64 take any interval the
// widening can reach down to adjacent doubles, where the precision asked for
// (server_find_peak_qps_decimals_of_precision up to 9) may be finer than a
// double can tell apart at that QPS. The search also ends as soon as the
// midpoint is no longer strictly inside the bounds.
constexpr int kMaxBisectionTrials = 64;
// A trial's wait for its last completions when completion_timeout_ms is 0
// (none): the search must end even if a SUT stops answering.
constexpr uint64_t kPeakTrialStallLimitMs = 60000;

// What one trial produced.
struct PeakTrialResult {
  PerformanceSummary summary;
  uint64_t issued_samples = 0;
  FailedSampleCounts failed;    // samples of this trial that failed, by kind
  uint64_t incomplete = 0;      // samples of this trial that never completed
  bool passed() const { return summary.perf_constraints_met && failed.total == 0 && incomplete == 0; }
};

// Why a trial did not pass, for the log, as sentences: the reference's
// recommendation when it missed the latency constraint, then
// peak_trial_failed_samples_text.
std::string peak_trial_failure_text(const PeakTrialResult& trial);
// "N of M samples failed (kind N, ...)." / "N of M samples never
// completed." (an INVALID reason of its own; empty when neither).
std::string peak_trial_failed_samples_text(const PeakTrialResult& trial);

struct PeakTrials {
  // One trial at `qps`: loads its set (if `load`), runs it, unloads (if
  // `unload`), records it in outcome.peak_trials and fills `result`. False
  // when the search must stop (aborted, interrupted, or nothing was issued).
  std::function<bool(double qps, bool load, bool unload, PeakTrialResult* result)> run;
  // Unloads the set the binary search kept loaded.
  std::function<void()> unload_kept;
};

// The search; its result (summary, peak_qps, overhead of the reported trial) goes to `outcome`.
void find_peak_performance(const TestSettings& settings, Scenario scenario, const PeakTrials& trials,
                           const std::atomic<bool>& aborted, RunLog& log, RunOutcome& outcome);

}  // namespace loadgen

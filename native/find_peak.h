// FindPeakPerformance (Server only): widen [lower, upper) from the base
// target QPS until a trial fails the latency constraint, then binary-search
// it on one loaded set (the reference's FindPeakPerformanceMode). Each trial
// is a full performance series run by the session.
#pragma once

#include <atomic>
#include <functional>

#include "results.h"
#include "run_log.h"
#include "run_outcome.h"

namespace loadgen {

struct PeakTrials {
  // One trial at `qps`: loads its set (if `load`), runs it, unloads (if
  // `unload`), records it in outcome.peak_trials and fills `summary`. False
  // when the search must stop (aborted, or nothing was issued).
  std::function<bool(double qps, bool load, bool unload, PerformanceSummary* summary)> run;
  // Unloads the set the binary search kept loaded.
  std::function<void()> unload_kept;
};

// The search; its result (summary, peak_qps, overhead of the reported trial) goes to `outcome`.
void find_peak_performance(const TestSettings& settings, Scenario scenario, const PeakTrials& trials,
                           const std::atomic<bool>& aborted, RunLog& log, RunOutcome& outcome);

}  // namespace loadgen

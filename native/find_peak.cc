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

std::string peak_trial_failed_samples_text(const PeakTrialResult& trial) {
  std::string text;
  const auto add = [&](const std::string& part) { text += (text.empty() ? "" : " ") + as_sentence(part); };
  const std::string of = " of " + std::to_string(trial.issued_samples);
  if (trial.failed.total != 0) {
    std::string part = std::to_string(trial.failed.total) + of + " samples failed (";
    bool first = true;
    for (size_t i = 0; i < kFailureKindCount; ++i) {
      if (trial.failed.by_kind[i] == 0) continue;
      part += std::string(first ? "" : ", ") + kFailureKindNames[i] + " " + std::to_string(trial.failed.by_kind[i]);
      first = false;
    }
    add(part + ")");
  }
  if (trial.incomplete != 0) add(std::to_string(trial.incomplete) + of + " samples never completed");
  return text;
}

std::string peak_trial_failure_text(const PeakTrialResult& trial) {
  std::string text = trial.summary.perf_constraints_met ? "" : as_sentence(trial.summary.perf_constraints_recommendation);
  const std::string samples = peak_trial_failed_samples_text(trial);
  if (!samples.empty()) text += (text.empty() ? "" : " ") + samples;
  return text;
}

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
  // A trial that missed only through failed or unfinished samples says so
  // (the reference's messages name only the latency constraint).
  auto note_failed = [&](const PeakTrialResult& trial, double qps) {
    if (trial.summary.perf_constraints_met) {
      message("FindPeakPerformance: the trial at " + qps_text(qps) + " fails: " + peak_trial_failure_text(trial));
    }
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
  PeakTrialResult lower;
  message("FindPeakPerformance: Check validity of the base settings field: " + qps_text(lower_qps));
  if (!trials.run(lower_qps, true, true, &lower)) return;
  if (!lower.passed()) {
    error("error_runtime", "FindPeakPerformance: Initial lower bound does not satisfy performance constraints, msg: " +
                               peak_trial_failure_text(lower));
    outcome.summary = lower.summary;
    outcome.has_summary = true;
    outcome.overhead = outcome.peak_trials.front().overhead;
    // The reported trial's failures make the result INVALID (other trials'
    // failures only bound the search: finish_run leaves them out).
    if (lower.failed.total != 0) outcome.extra_invalid_reasons.push_back(peak_trial_failed_samples_text(lower));
    return;
  }

  // FindBoundaries: widen until a trial fails.
  double upper_qps = 0;
  for (int widened = 0;; ++widened) {
    upper_qps = lower_qps * (1 + step);
    const char* limit = widened == kMaxWideningTrials          ? "the widening trial limit"
                        : !(upper_qps > lower_qps)              ? "the boundary step size"
                        : upper_qps > max_qps                   ? "the generation limit"
                                                                : nullptr;
    if (limit != nullptr) {
      error("error_runtime", "FindPeakPerformance: cannot widen the bounds beyond " + qps_text(lower_qps) + " (" +
                                 limit + "); reporting the lower bound.");
      report(lower.summary, lower_qps);
      return;
    }
    message("FindBoundaries: Checking fields [" + qps_text(lower_qps) + ", " + qps_text(upper_qps) + ")");
    PeakTrialResult upper;
    if (!trials.run(upper_qps, true, true, &upper)) return;
    if (!upper.passed()) {
      note_failed(upper, upper_qps);
      break;
    }
    lower_qps = upper_qps;
    lower = upper;
  }
  message("FindPeakPerformance: Found boundaries: [" + qps_text(lower_qps) + ", " + qps_text(upper_qps) + ")");

  // Binary search on one loaded set (the upper bound's), kept loaded throughout.
  bool loaded = false;
  auto finished = [&] { return std::floor(lower_qps * scale) + 1 >= std::floor(upper_qps * scale); };
  for (int bisected = 0; bisected < kMaxBisectionTrials && !finished() && !aborted.load(std::memory_order_acquire);
       ++bisected) {
    const double mid_qps = lower_qps + (upper_qps - lower_qps) / 2;
    if (!(mid_qps > lower_qps && mid_qps < upper_qps)) break;  // adjacent doubles: nothing left between them
    message("FindPeakPerformanceBinarySearch: Testing the mid value of bounds [" + qps_text(lower_qps) + ", " +
            qps_text(upper_qps) + "): " + qps_text(mid_qps));
    PeakTrialResult mid;
    if (!trials.run(mid_qps, !loaded, false, &mid)) break;
    loaded = true;
    if (mid.passed()) {
      lower_qps = mid_qps;
      lower = mid;
    } else {
      note_failed(mid, mid_qps);
      upper_qps = mid_qps;
    }
  }
  if (loaded) trials.unload_kept();
  if (aborted.load(std::memory_order_acquire)) return;
  message("FindPeakPerformance: Found peak performance field: " + qps_text(lower_qps));
  report(lower.summary, lower_qps);
}

}  // namespace loadgen

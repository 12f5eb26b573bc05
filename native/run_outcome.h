// What a run produced: the outcome the session hands its host after
// finished(), with the summary, counts, rejected completions and overhead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "failure_kinds.h"
#include "results.h"
#include "settings.h"

namespace loadgen {

// Ids that completion calls rejected, by reason. Never written to records.
struct CompletionErrorCounts {
  uint64_t invalid_ids = 0;    // not an id any series was given (not an integer, 0, too large)
  uint64_t unissued_ids = 0;   // a sample of this run not issued yet
  uint64_t stale_ids = 0;      // an id of an earlier series or run (ids are unique in a process)
  uint64_t duplicate_ids = 0;  // completed before
  double first_invalid_id = 0;
  double first_duplicate_id = 0;
  // Token latencies (spec/30 §9, spec/60 §1.2), one per offending sample.
  uint64_t first_token_after_completion = 0;  // firstTokenComplete after the sample completed
  uint64_t duplicate_first_tokens = 0;        // a second firstTokenComplete
  uint64_t missing_first_tokens = 0;          // completed without a first token (not Offline): each failed as no_first_token
  uint64_t zero_tokens = 0;                   // n_tokens missing or 0
  uint64_t negative_tokens = 0;               // n_tokens < 0 (counted as 0)
  uint64_t one_token = 0;                     // n_tokens == 1 (counted as 0)
};

// Distribution of one overhead measure over the queries of a series (ns).
struct OverheadStats {
  uint64_t count = 0;
  int64_t p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
  double mean = 0;
};

// The loadgen's own share of the latency, per query of the reported series.
// "Due" is when the query should have reached the SUT: its scheduled time
// (Server), the start of issuing (Offline), or the completion of the
// previous query (SingleStream/MultiStream; the start for the first).
struct RunOverhead {
  bool present = false;
  OverheadStats issue_lateness;  // issued - due
  bool has_delivery_lag = false;  // false for the null-native SUT (nothing is delivered)
  OverheadStats delivery_lag;     // SUT received (dispatched) - due
};

// One FindPeakPerformance trial (a full performance run at `target_qps`).
// It passed when it met the latency constraint and none of its samples
// failed or stayed incomplete.
struct PeakTrial {
  double target_qps = 0;
  bool perf_constraints_met = false;
  int64_t target_percentile_latency_ns = 0;
  uint64_t queries_issued = 0;
  uint64_t failed_samples = 0;      // Session::fail, any kind
  uint64_t incomplete_samples = 0;  // never completed
  bool passed = false;
  RunOverhead overhead;
};

struct RunOutcome {
  Mode mode = Mode::PerformanceOnly;  // after the test05 override
  bool has_summary = false;
  PerformanceSummary summary;
  EffectiveSettings effective;
  std::string test_datetime;
  std::string summary_path;
  std::string summary_text;
  std::string detail_log_path;
  std::string accuracy_log_path;
  uint64_t accuracy_log_records = 0;
  std::vector<LogMessage> messages;  // errors, warnings and notable events, in order
  uint64_t error_count = 0;
  uint64_t warning_count = 0;
  bool aborted = false;
  std::string abort_reason;
  // Session::interrupt: the run was stopped on request; its reason (also
  // the first of extra_invalid_reasons).
  bool interrupted = false;
  std::string interrupt_reason;
  // Why the result is INVALID beyond the reference's four checks.
  std::vector<std::string> extra_invalid_reasons;
  // Over every series of the run (accuracy rounds and the performance run).
  uint64_t series_count = 0;
  uint64_t generated_query_count = 0;
  uint64_t generated_sample_count = 0;
  uint64_t issued_query_count = 0;
  uint64_t issued_sample_count = 0;
  uint64_t completed_sample_count = 0;
  uint64_t incomplete_sample_count = 0;
  CompletionErrorCounts completion_errors;
  FailedSampleCounts failed_samples;  // Session::fail
  int64_t issue_duration_ns = 0;  // performance series: start of issuing to the last completion
  RunOverhead overhead;
  // FindPeakPerformance: every trial in order, and the peak found (0 if none).
  std::vector<PeakTrial> peak_trials;
  double peak_qps = 0;
};

}  // namespace loadgen

// TestSettings as the reference LoadGen defines them (requested), and the
// derived "effective" settings the run actually uses (spec/10 §2, §3).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loadgen {

enum class Scenario : int { SingleStream = 0, MultiStream = 1, Server = 2, Offline = 3 };
enum class Mode : int { SubmissionRun = 0, AccuracyOnly = 1, PerformanceOnly = 2, FindPeakPerformance = 3 };

const char* to_string(Scenario s);
const char* to_string(Mode m);

// Field names, types and defaults are the reference's (test_settings.h), so a
// value means the same thing here as in an mlperf.conf/user.conf.
struct TestSettings {
  Scenario scenario = Scenario::SingleStream;
  Mode mode = Mode::PerformanceOnly;
  double single_stream_expected_latency_ns = 1000000;
  double single_stream_target_latency_percentile = 0.90;
  double multi_stream_expected_latency_ns = 8000000;
  double multi_stream_target_latency_percentile = 0.99;
  uint64_t multi_stream_samples_per_query = 8;
  double server_target_qps = 1;
  uint64_t server_target_latency_ns = 100000000;
  double server_target_latency_percentile = 0.99;
  bool server_coalesce_queries = false;
  int server_find_peak_qps_decimals_of_precision = 1;
  double server_find_peak_qps_boundary_step_size = 1;
  uint64_t server_max_async_queries = 0;
  uint64_t server_num_issue_query_threads = 0;
  double offline_expected_qps = 1;
  bool sample_concatenate_permutation = false;
  uint64_t min_duration_ms = 10000;
  uint64_t max_duration_ms = 0;
  uint64_t min_query_count = 100;
  uint64_t max_query_count = 0;
  uint64_t qsl_rng_seed = 0;
  uint64_t sample_index_rng_seed = 0;
  uint64_t schedule_rng_seed = 0;
  uint64_t accuracy_log_rng_seed = 0;
  double accuracy_log_probability = 0.0;
  uint64_t accuracy_log_sampling_target = 0;
  bool test05 = false;
  uint64_t test05_qsl_rng_seed = 0;
  uint64_t test05_sample_index_rng_seed = 0;
  uint64_t test05_schedule_rng_seed = 0;
  bool print_timestamps = false;
  bool performance_issue_unique = false;
  bool performance_issue_same = false;
  uint64_t performance_issue_same_index = 0;
  uint64_t performance_sample_count_override = 0;
  uint64_t accuracy_sample_count_override = 0;
  bool use_token_latencies = false;
  uint64_t server_ttft_latency = 100000000;
  uint64_t server_tpot_latency = 100000000;
  bool infer_token_latencies = false;
  uint64_t token_latency_scaling_factor = 0;  // no default in the reference; 0 here
};

// The reference's TestSettingsInternal. Names match the detail log's
// effective_* keys.
struct EffectiveSettings {
  Scenario scenario = Scenario::SingleStream;
  Mode mode = Mode::PerformanceOnly;
  uint64_t samples_per_query = 1;
  double target_qps = 1;
  int64_t target_latency_ns = 0;
  double target_latency_percentile = 0;
  uint64_t max_async_queries = 0;
  uint64_t target_duration_ms = 0;
  uint64_t min_duration_ms = 0;
  uint64_t max_duration_ms = 0;
  uint64_t min_query_count = 0;
  uint64_t max_query_count = 0;
  uint64_t min_sample_count = 0;
  uint64_t qsl_rng_seed = 0;
  uint64_t sample_index_rng_seed = 0;
  uint64_t schedule_rng_seed = 0;
  uint64_t accuracy_log_rng_seed = 0;
  double accuracy_log_probability = 0;
  uint64_t accuracy_log_sampling_target = 0;
  bool print_timestamps = false;
  bool performance_issue_unique = false;
  bool performance_issue_same = false;
  uint64_t performance_issue_same_index = 0;
  uint64_t performance_sample_count = 0;
  uint64_t accuracy_sample_count = 0;
  bool sample_concatenate_permutation = false;
  bool use_token_latencies = false;
  int64_t server_ttft_latency = 0;
  int64_t server_tpot_latency = 0;
  bool infer_token_latencies = false;
  int64_t token_latency_scaling_factor = 0;
  // FindPeakPerformance parameters (copied).
  int server_find_peak_qps_decimals_of_precision = 1;
  double server_find_peak_qps_boundary_step_size = 1;
};

// One message the reference would log (key such as "error_invalid_test_settings").
struct LogMessage {
  std::string key;
  std::string text;
  bool is_error = false;
  bool is_warning = false;
};

// Applies the test05 override of StartTest (spec/00 §6 step 10): when
// `requested.test05`, the mode becomes PerformanceOnly and the three seeds are
// replaced by the test05 seeds. Appends the reference's warning to `messages`.
TestSettings apply_test05(const TestSettings& requested, std::vector<LogMessage>* messages);

// requested -> effective, exactly as the reference's TestSettingsInternal
// constructor (spec/10 §3), including its floating-point evaluation order.
// `qsl_performance_count` / `qsl_total_count` are what the QSL reports.
// Validation problems the reference logs (and continues) are appended to
// `messages` when it is not null.
EffectiveSettings derive_effective(const TestSettings& s, uint64_t qsl_total_count,
                                   uint64_t qsl_performance_count, std::vector<LogMessage>* messages);

// Settings whose run could not end, or whose query generation would exceed
// the core's limit of samples per series (settings_fields.h
// "generated_sample_count"): a Server rate so low that the run's queries take
// longer than 7 days to issue, or a rate, expected latency
// or query count that would generate more samples than a series holds. The
// same rules as lib/settings/validate.ts (checkRateBounds), for C++ users of
// the core; checked before a session starts. Counts of the QSL as in
// derive_effective.
struct SettingsProblem {
  const char* field = nullptr;  // the offending TestSettings field; nullptr: none
  std::string message;
};
// (The bound on the expected issue time is settings_fields.h "expected_issue_time_s".)
SettingsProblem check_run_bounds(const TestSettings& s, uint64_t qsl_total_count, uint64_t qsl_performance_count);

}  // namespace loadgen

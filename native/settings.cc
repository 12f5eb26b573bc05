// Requested -> effective settings (spec/10 §3) and the test05 override.
#include "settings.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace loadgen {

namespace {

// double -> uint64 truncation. In range it is exactly the reference's cast;
// outside (undefined behaviour in C++) it saturates so results stay defined.
uint64_t truncate_to_uint64(double x) {
  if (!(x > 0.0)) return 0;  // also NaN
  if (x >= 18446744073709551616.0) return UINT64_MAX;
  return static_cast<uint64_t>(x);
}

// iostream's default double formatting (precision 6, %g style).
std::string format_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void add_error(std::vector<LogMessage>* messages, const char* key, std::string text) {
  if (messages == nullptr) return;
  LogMessage m;
  m.key = key;
  m.text = std::move(text);
  m.is_error = true;
  messages->push_back(std::move(m));
}

}  // namespace

const char* to_string(Scenario s) {
  switch (s) {
    case Scenario::SingleStream: return "SingleStream";
    case Scenario::MultiStream: return "MultiStream";
    case Scenario::Server: return "Server";
    case Scenario::Offline: return "Offline";
  }
  return "InvalidScenario";
}

const char* to_string(Mode m) {
  switch (m) {
    case Mode::SubmissionRun: return "SubmissionRun";
    case Mode::AccuracyOnly: return "AccuracyOnly";
    case Mode::PerformanceOnly: return "PerformanceOnly";
    case Mode::FindPeakPerformance: return "FindPeakPerformance";
  }
  return "InvalidMode";
}

TestSettings apply_test05(const TestSettings& requested, std::vector<LogMessage>* messages) {
  TestSettings s = requested;
  if (!requested.test05) return s;
  if (messages != nullptr) {
    LogMessage m;
    m.key = "warning_generic_message";
    m.text = "Test05 flag detected Overriding random seeds";
    m.is_warning = true;
    messages->push_back(std::move(m));
  }
  s.mode = Mode::PerformanceOnly;
  s.qsl_rng_seed = requested.test05_qsl_rng_seed;
  s.sample_index_rng_seed = requested.test05_sample_index_rng_seed;
  s.schedule_rng_seed = requested.test05_schedule_rng_seed;
  return s;
}

EffectiveSettings derive_effective(const TestSettings& s, uint64_t qsl_total_count,
                                   uint64_t qsl_performance_count, std::vector<LogMessage>* messages) {
  EffectiveSettings e;
  e.scenario = s.scenario;
  e.mode = s.mode;
  e.samples_per_query = 1;
  e.target_qps = 1;
  e.target_latency_ns = 0;
  e.max_async_queries = 0;
  e.target_duration_ms = s.min_duration_ms;
  e.min_duration_ms = s.min_duration_ms;
  e.max_duration_ms = s.max_duration_ms;
  e.min_query_count = s.min_query_count;
  e.max_query_count = s.max_query_count;
  e.qsl_rng_seed = s.qsl_rng_seed;
  e.sample_index_rng_seed = s.sample_index_rng_seed;
  e.schedule_rng_seed = s.schedule_rng_seed;
  e.accuracy_log_rng_seed = s.accuracy_log_rng_seed;
  e.accuracy_log_probability = s.accuracy_log_probability;
  e.accuracy_log_sampling_target = s.accuracy_log_sampling_target;
  e.print_timestamps = s.print_timestamps;
  e.performance_issue_unique = s.performance_issue_unique;
  e.performance_issue_same = s.performance_issue_same;
  e.performance_issue_same_index = s.performance_issue_same_index;
  e.use_token_latencies = s.use_token_latencies;
  e.server_ttft_latency = static_cast<int64_t>(s.server_ttft_latency);
  e.server_tpot_latency = static_cast<int64_t>(s.server_tpot_latency);
  e.infer_token_latencies = s.infer_token_latencies;
  e.token_latency_scaling_factor = static_cast<int64_t>(s.token_latency_scaling_factor);
  e.server_find_peak_qps_decimals_of_precision = s.server_find_peak_qps_decimals_of_precision;
  e.server_find_peak_qps_boundary_step_size = s.server_find_peak_qps_boundary_step_size;

  // Step 1: per-scenario rate, latency and concurrency.
  switch (s.scenario) {
    case Scenario::SingleStream:
      e.target_qps = 1e9 / s.single_stream_expected_latency_ns;
      e.target_latency_percentile = s.single_stream_target_latency_percentile;
      e.max_async_queries = 1;
      break;
    case Scenario::MultiStream:
      e.target_qps = 1e9 / s.multi_stream_expected_latency_ns;
      e.target_latency_percentile = s.multi_stream_target_latency_percentile;
      e.max_async_queries = 1;
      break;
    case Scenario::Server:
      if (s.server_target_qps >= 0.0) {
        e.target_qps = s.server_target_qps;
      } else {
        add_error(messages, "error_invalid_test_settings",
                  "Invalid value for server_target_qps requested. requested: " +
                      format_double(s.server_target_qps) + " using: " + format_double(e.target_qps));
      }
      e.target_latency_ns = static_cast<int64_t>(s.server_target_latency_ns);
      e.target_latency_percentile = s.server_target_latency_percentile;
      e.max_async_queries = s.server_max_async_queries;
      break;
    case Scenario::Offline:
      if (s.offline_expected_qps >= 0.0) {
        e.target_qps = s.offline_expected_qps;
      } else {
        add_error(messages, "error_invalid_test_settings",
                  "Invalid value for offline_expected_qps requested. requested: " +
                      format_double(s.offline_expected_qps) + " using: " + format_double(e.target_qps));
      }
      e.target_latency_percentile = 0.99;
      e.max_async_queries = 1;
      break;
  }

  // Step 2: sample counts (not capped by the QSL total here).
  e.performance_sample_count =
      s.performance_sample_count_override == 0 ? qsl_performance_count : s.performance_sample_count_override;
  e.accuracy_sample_count =
      s.accuracy_sample_count_override == 0 ? qsl_total_count : s.accuracy_sample_count_override;
  e.sample_concatenate_permutation = s.sample_concatenate_permutation;
  if (s.scenario == Scenario::MultiStream) e.samples_per_query = s.multi_stream_samples_per_query;

  // Step 3: Offline sizes its single query; evaluation order matters for rounding.
  if (s.scenario == Scenario::Offline) {
    const double target_duration_s = static_cast<double>(e.target_duration_ms) / 1000.0;
    const uint64_t target_sample_count = truncate_to_uint64((1.1 * target_duration_s) * e.target_qps);
    e.samples_per_query = s.performance_issue_unique ? e.performance_sample_count
                                                     : std::max(e.min_query_count, target_sample_count);
    e.min_query_count = 1;
    e.target_duration_ms = 0;
  }

  // Step 4: SingleStream equal issue rounds with the QSL's own count and always
  // adds a full block.
  if (s.scenario == Scenario::SingleStream && s.sample_concatenate_permutation) {
    if (qsl_performance_count == 0) {
      throw std::invalid_argument(
          "sample_concatenate_permutation in SingleStream needs a QSL performance sample count > 0 "
          "(the reference divides by it)");
    }
    const double min_duration_s = static_cast<double>(e.min_duration_ms) / 1000.0;
    const uint64_t expected_queries = truncate_to_uint64((2.0 * min_duration_s) * e.target_qps);
    e.min_query_count = std::max(e.min_query_count, expected_queries);
    e.min_query_count += qsl_performance_count - (e.min_query_count % qsl_performance_count);
  }

  // Step 5.
  e.min_sample_count = e.min_query_count * e.samples_per_query;

  // Step 6: validation; the reference logs and continues.
  if (s.performance_issue_same && s.performance_issue_same_index >= e.performance_sample_count) {
    add_error(messages, "error_invalid_test_settings",
              "Sample Idx to be repeated in performance_issue_same mode cannot be greater than loaded "
              "performance_sample_count. performance_issue_same_index: " +
                  std::to_string(s.performance_issue_same_index) +
                  " performance_sample_count: " + std::to_string(e.performance_sample_count));
  }
  if (s.performance_issue_unique && s.performance_issue_same) {
    add_error(messages, "error_invalid_test_settings",
              "Performance_issue_unique and performance_issue_same, both cannot be true at the same "
              "time. performance_issue_unique: 1 performance_issue_same: 1");
  }
  return e;
}

}  // namespace loadgen

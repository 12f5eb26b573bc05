// Requested -> effective settings (spec/10 §3) and the test05 override.
#include "settings.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "settings_fields.h"

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
std::string format_g6(double v) {
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
                      format_g6(s.server_target_qps) + " using: " + format_g6(e.target_qps));
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
                      format_g6(s.offline_expected_qps) + " using: " + format_g6(e.target_qps));
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

SettingsProblem check_run_bounds(const TestSettings& s, uint64_t qsl_total_count, uint64_t qsl_performance_count) {
  const double limit = static_cast<double>(find_run_setting_limit("generated_sample_count")->max);
  const double max_issue_s = static_cast<double>(find_run_setting_limit("expected_issue_time_s")->max);
  const auto problem = [](const char* field, std::string text) { return SettingsProblem{field, std::move(text)}; };
  const auto too_many = [&](const char* field, double samples) {
    return problem(field, std::string(field) + ": the " + to_string(s.scenario) + " run would generate about " +
                              format_g6(samples) + " samples in one series; the core holds at most 2^32");
  };
  // The sets the run's phases shuffle and load (spec/20 §2): refused here,
  // before any thread starts, rather than failing the run (or the machine)
  // while its set is built.
  const uint64_t max_loaded = static_cast<uint64_t>(find_run_setting_limit("loaded_sample_count")->max);
  const auto too_large_set = [&](const char* field, uint64_t value, uint64_t loaded, const char* what,
                                 const char* lower_with) {
    return problem(field, std::string(field) + " " + std::to_string(value) + ": the " + what + " would hold " +
                              std::to_string(loaded) + " samples, more than the " + std::to_string(max_loaded) +
                              " loadgen can shuffle and load at once; set " + lower_with + " to at most " +
                              std::to_string(max_loaded));
  };
  if (s.mode != Mode::AccuracyOnly) {
    const bool overridden = s.performance_sample_count_override != 0;
    const uint64_t count = overridden ? s.performance_sample_count_override : qsl_performance_count;
    const uint64_t loaded = std::min(count, qsl_total_count);
    if (loaded > max_loaded) {
      return too_large_set(overridden ? "performance_sample_count_override" : "qsl_performance_sample_count", count,
                           loaded, "performance sample set", "performance_sample_count_override");
    }
  }
  if (s.mode == Mode::AccuracyOnly || s.mode == Mode::SubmissionRun) {
    const bool overridden = s.accuracy_sample_count_override != 0;
    const uint64_t count = overridden ? s.accuracy_sample_count_override : qsl_total_count;
    const uint64_t loaded = std::min(count, qsl_total_count);
    if (loaded > max_loaded) {
      return too_large_set(overridden ? "accuracy_sample_count_override" : "qsl_total_sample_count", count, loaded,
                           "accuracy run's sample list", "accuracy_sample_count_override");
    }
  }
  const double min_queries = static_cast<double>(s.min_query_count);
  const double min_duration_ns = static_cast<double>(s.min_duration_ms) * 1e6;
  switch (s.scenario) {
    case Scenario::Server: {
      // Issue time: the performance queries, and the accuracy series' (one
      // query per sample, on the same schedule) or the loaded set's.
      double queries = std::max(min_queries, 1.0);
      const uint64_t loaded = std::min(
          s.performance_sample_count_override == 0 ? qsl_performance_count : s.performance_sample_count_override,
          qsl_total_count);
      if (s.mode == Mode::AccuracyOnly || s.mode == Mode::SubmissionRun) {
        const uint64_t accuracy = s.accuracy_sample_count_override == 0 ? qsl_total_count : s.accuracy_sample_count_override;
        queries = std::max(queries, static_cast<double>(std::min(accuracy, qsl_total_count)));
      }
      if (s.performance_issue_unique) queries = std::max(queries, static_cast<double>(loaded));
      if (!(queries / s.server_target_qps <= max_issue_s)) {
        return problem("server_target_qps", "server_target_qps " + format_g6(s.server_target_qps) +
                                                " would take longer than " + format_g6(max_issue_s) + " s to issue " +
                                                format_g6(queries) + " queries; at least " +
                                                format_g6(queries / max_issue_s) + " is needed");
      }
      if (min_queries > limit) return too_many("min_query_count", min_queries);
      if (min_duration_ns > 0) {
        // Each gap truncates to whole ns: gen * (e^(qps/1e9) - 1) queries, plus the 6-sigma reserve.
        const double n = std::max(min_duration_ns * s.server_target_qps / 1e9,
                                  min_duration_ns * std::expm1(s.server_target_qps / 1e9));
        const double queries_by_duration = n + 6.0 * std::sqrt(n) + 16.0;
        if (!(queries_by_duration <= limit)) return too_many("server_target_qps", queries_by_duration);
      }
      return {};
    }
    case Scenario::SingleStream:
    case Scenario::MultiStream: {
      const bool single = s.scenario == Scenario::SingleStream;
      const char* field = single ? "single_stream_expected_latency_ns" : "multi_stream_expected_latency_ns";
      const double latency_ns = single ? s.single_stream_expected_latency_ns : s.multi_stream_expected_latency_ns;
      const double samples_per_query = single ? 1.0 : static_cast<double>(std::max<uint64_t>(s.multi_stream_samples_per_query, 1));
      const double gen_ns = 2.0 * min_duration_ns;
      // The evaluation of generate_queries: period = int64((1 / (1e9 / latency)) * 1e9).
      const double period_ns = std::trunc((1.0 / (1e9 / latency_ns)) * 1e9);
      if (gen_ns > 0 && !(period_ns > 0 && period_ns < 9223372036854775808.0)) {
        return problem(field, std::string(field) + " " + format_g6(latency_ns) +
                                  ": the query period it implies must fit in int64 nanoseconds (at most 9.2e18 ns)");
      }
      const double max_queries = std::floor(limit / samples_per_query);
      if (min_queries > max_queries) return too_many("min_query_count", min_queries * samples_per_query);
      const double by_duration = gen_ns > 0 ? std::trunc(gen_ns / period_ns + 2.0) : 0.0;
      if (by_duration > max_queries) return too_many(field, by_duration * samples_per_query);
      return {};
    }
    case Scenario::Offline: {
      if (s.performance_issue_unique) return {};
      const double target = std::trunc((1.1 * (static_cast<double>(s.min_duration_ms) / 1000.0)) * s.offline_expected_qps);
      if (min_queries > limit) return too_many("min_query_count", min_queries);
      if (!(target <= limit)) return too_many("offline_expected_qps", target);
      return {};
    }
  }
  return {};
}

}  // namespace loadgen

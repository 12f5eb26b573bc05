// derive_effective / apply_test05 against the reference's derived settings
// (golden/settings_derivation.json, query_traces/*.json) and spec/10 §3.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "check.h"
#include "settings.h"

using loadgen::EffectiveSettings;
using loadgen::LogMessage;
using loadgen::Mode;
using loadgen::Scenario;
using loadgen::TestSettings;

namespace {

TestSettings settings_with_official_seeds(Scenario scenario) {
  TestSettings s;
  s.scenario = scenario;
  s.qsl_rng_seed = 2085463073848966840ull;
  s.sample_index_rng_seed = 2747215439041700203ull;
  s.schedule_rng_seed = 16159082839903944936ull;
  return s;
}

}  // namespace

TEST(settings_enum_strings) {
  CHECK_EQ(std::string(loadgen::to_string(Scenario::SingleStream)), "SingleStream");
  CHECK_EQ(std::string(loadgen::to_string(Scenario::MultiStream)), "MultiStream");
  CHECK_EQ(std::string(loadgen::to_string(Scenario::Server)), "Server");
  CHECK_EQ(std::string(loadgen::to_string(Scenario::Offline)), "Offline");
  CHECK_EQ(std::string(loadgen::to_string(Mode::SubmissionRun)), "SubmissionRun");
  CHECK_EQ(std::string(loadgen::to_string(Mode::AccuracyOnly)), "AccuracyOnly");
  CHECK_EQ(std::string(loadgen::to_string(Mode::PerformanceOnly)), "PerformanceOnly");
  CHECK_EQ(std::string(loadgen::to_string(Mode::FindPeakPerformance)), "FindPeakPerformance");
}

TEST(settings_single_stream) {
  // golden query_traces/ss_perf_seed0_small.
  TestSettings s;
  s.single_stream_expected_latency_ns = 250000;
  s.min_duration_ms = 100;
  s.min_query_count = 64;
  s.max_query_count = 7;
  s.max_duration_ms = 9;
  std::vector<LogMessage> messages;
  const EffectiveSettings e = loadgen::derive_effective(s, 100, 50, &messages);
  CHECK(messages.empty());
  CHECK(e.scenario == Scenario::SingleStream);
  CHECK(e.mode == Mode::PerformanceOnly);
  CHECK_EQ(e.samples_per_query, 1u);
  CHECK_EQ(e.target_qps, 4000.0);
  CHECK_EQ(e.target_latency_ns, 0);
  CHECK_EQ(e.target_latency_percentile, 0.9);
  CHECK_EQ(e.max_async_queries, 1u);
  CHECK_EQ(e.target_duration_ms, 100u);
  CHECK_EQ(e.min_duration_ms, 100u);
  CHECK_EQ(e.max_duration_ms, 9u);
  CHECK_EQ(e.min_query_count, 64u);
  CHECK_EQ(e.max_query_count, 7u);
  CHECK_EQ(e.min_sample_count, 64u);
  CHECK_EQ(e.performance_sample_count, 50u);
  CHECK_EQ(e.accuracy_sample_count, 100u);
}

TEST(settings_single_stream_equal_issue) {
  // golden settings_derivation builtin_3dunet_singlestream: 600 s at 2.5 qps
  // -> 3000, then a full block of the QSL's 43 is added: 3000 + 43 - 3000 % 43.
  TestSettings s = settings_with_official_seeds(Scenario::SingleStream);
  s.single_stream_expected_latency_ns = 400000000;
  s.sample_concatenate_permutation = true;
  s.min_duration_ms = 600000;
  EffectiveSettings e = loadgen::derive_effective(s, 43, 43, nullptr);
  CHECK_EQ(e.target_qps, 2.5);
  CHECK_EQ(e.min_query_count, 3010u);
  CHECK_EQ(e.min_sample_count, 3010u);
  CHECK(e.sample_concatenate_permutation);

  // equal_issue_singlestream: 2 * 600 * 500 = 600000, already a multiple of
  // 500, still gets a full 500 added.
  s.single_stream_expected_latency_ns = 2000000;
  e = loadgen::derive_effective(s, 500, 500, nullptr);
  CHECK_EQ(e.min_query_count, 600500u);

  // builtin_gptoss_singlestream: max(100, 2 * 600 * 1) = 1200, + 6396 - 1200.
  TestSettings g = settings_with_official_seeds(Scenario::SingleStream);
  g.single_stream_expected_latency_ns = 1000000000;
  g.sample_concatenate_permutation = true;
  g.min_duration_ms = 600000;
  g.performance_sample_count_override = 6396;
  g.accuracy_sample_count_override = 4395;
  e = loadgen::derive_effective(g, 6396, 6396, nullptr);
  CHECK_EQ(e.min_query_count, 6396u);
  CHECK_EQ(e.performance_sample_count, 6396u);
  CHECK_EQ(e.accuracy_sample_count, 4395u);

  // The QSL's own performance count is used, not the override.
  g.performance_sample_count_override = 10;
  e = loadgen::derive_effective(g, 6396, 20, nullptr);
  CHECK_EQ(e.min_query_count, 1200u + 20u);  // 1200 % 20 == 0: full block of the QSL's 20
  CHECK_EQ(e.performance_sample_count, 10u);

  // A QSL performance count of 0 divides by zero in the reference.
  bool threw = false;
  try {
    loadgen::derive_effective(g, 6396, 0, nullptr);
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  CHECK(threw);
}

TEST(settings_multi_stream) {
  // golden settings_derivation multistream_fields.
  TestSettings s;
  s.scenario = Scenario::MultiStream;
  s.multi_stream_expected_latency_ns = 55500000;
  s.multi_stream_samples_per_query = 13;
  s.min_duration_ms = 600000;
  s.min_query_count = 662;
  s.performance_sample_count_override = 2048;
  const EffectiveSettings e = loadgen::derive_effective(s, 50000, 1024, nullptr);
  CHECK_EQ(e.samples_per_query, 13u);
  CHECK_EQ(e.target_qps, 18.01801801801802);
  CHECK_EQ(e.target_latency_percentile, 0.99);
  CHECK_EQ(e.max_async_queries, 1u);
  CHECK_EQ(e.target_duration_ms, 600000u);
  CHECK_EQ(e.min_query_count, 662u);
  CHECK_EQ(e.min_sample_count, 8606u);
  CHECK_EQ(e.performance_sample_count, 2048u);
  CHECK_EQ(e.accuracy_sample_count, 50000u);
}

TEST(settings_server) {
  // golden settings_derivation builtin_resnet50_server.
  TestSettings s = settings_with_official_seeds(Scenario::Server);
  s.server_target_qps = 1234.5;
  s.server_target_latency_ns = 15000000;
  s.server_max_async_queries = 7;
  s.min_duration_ms = 600000;
  s.performance_sample_count_override = 1024;
  s.use_token_latencies = true;
  s.server_ttft_latency = 2000000000;
  s.server_tpot_latency = 200000000;
  std::vector<LogMessage> messages;
  const EffectiveSettings e = loadgen::derive_effective(s, 50000, 1024, &messages);
  CHECK(messages.empty());
  CHECK_EQ(e.target_qps, 1234.5);
  CHECK_EQ(e.target_latency_ns, 15000000);
  CHECK_EQ(e.target_latency_percentile, 0.99);
  CHECK_EQ(e.max_async_queries, 7u);
  CHECK_EQ(e.target_duration_ms, 600000u);
  CHECK_EQ(e.min_query_count, 100u);
  CHECK_EQ(e.min_sample_count, 100u);
  CHECK_EQ(e.samples_per_query, 1u);
  CHECK_EQ(e.qsl_rng_seed, 2085463073848966840ull);
  CHECK_EQ(e.schedule_rng_seed, 16159082839903944936ull);
  CHECK(e.use_token_latencies);
  CHECK_EQ(e.server_ttft_latency, 2000000000);
  CHECK_EQ(e.server_tpot_latency, 200000000);
}

TEST(settings_offline) {
  // golden settings_derivation builtin_resnet50_offline: 1.1 * 600 * 5000.
  TestSettings s = settings_with_official_seeds(Scenario::Offline);
  s.offline_expected_qps = 5000;
  s.min_duration_ms = 600000;
  s.min_query_count = 24576;
  s.performance_sample_count_override = 1024;
  EffectiveSettings e = loadgen::derive_effective(s, 50000, 1024, nullptr);
  CHECK_EQ(e.samples_per_query, 3300000u);
  CHECK_EQ(e.target_qps, 5000.0);
  CHECK_EQ(e.target_latency_percentile, 0.99);
  CHECK_EQ(e.max_async_queries, 1u);
  CHECK_EQ(e.target_duration_ms, 0u);
  CHECK_EQ(e.min_duration_ms, 600000u);
  CHECK_EQ(e.min_query_count, 1u);
  CHECK_EQ(e.min_sample_count, 3300000u);

  // offline_min_query_count: 1.1 * 600 * 30.5 = 20130 < 24576.
  s.offline_expected_qps = 30.5;
  s.performance_sample_count_override = 2048;
  e = loadgen::derive_effective(s, 50000, 1024, nullptr);
  CHECK_EQ(e.samples_per_query, 24576u);
  CHECK_EQ(e.min_sample_count, 24576u);

  // golden offline_qps10_5: (1.1 * 10) * 10.5 = 115.50000000000001 -> 115.
  TestSettings t;
  t.scenario = Scenario::Offline;
  t.offline_expected_qps = 10.5;
  t.min_duration_ms = 10000;
  t.min_query_count = 1;
  e = loadgen::derive_effective(t, 1000, 100, nullptr);
  CHECK_EQ(e.samples_per_query, 115u);

  // Evaluation order matters: (1.1 * 38.038) * 5000 = 209209.0 exactly, while
  // 1.1 * (38.038 * 5000) = 209208.99999999997 would truncate to 209208.
  t.offline_expected_qps = 5000;
  t.min_duration_ms = 38038;
  e = loadgen::derive_effective(t, 1000, 100, nullptr);
  CHECK_EQ(e.samples_per_query, 209209u);
  // ... and the other way round: (1.1 * 32.864) * 3125 = 112969.99999999999.
  t.offline_expected_qps = 3125;
  t.min_duration_ms = 32864;
  e = loadgen::derive_effective(t, 1000, 100, nullptr);
  CHECK_EQ(e.samples_per_query, 112969u);

  // performance_issue_unique: the query is the performance sample count.
  t.performance_issue_unique = true;
  e = loadgen::derive_effective(t, 1000, 100, nullptr);
  CHECK_EQ(e.samples_per_query, 100u);
  CHECK_EQ(e.min_sample_count, 100u);
}

TEST(settings_counts_and_overrides) {
  TestSettings s;
  s.performance_sample_count_override = 250;  // larger than the QSL: not capped
  EffectiveSettings e = loadgen::derive_effective(s, 100, 100, nullptr);
  CHECK_EQ(e.performance_sample_count, 250u);
  CHECK_EQ(e.accuracy_sample_count, 100u);
  s.accuracy_sample_count_override = 300;
  e = loadgen::derive_effective(s, 100, 100, nullptr);
  CHECK_EQ(e.accuracy_sample_count, 300u);
  // Copied fields.
  s.accuracy_log_rng_seed = 720381539243781796ull;
  s.accuracy_log_probability = 0.25;
  s.accuracy_log_sampling_target = 64;
  s.print_timestamps = true;
  s.infer_token_latencies = true;
  s.token_latency_scaling_factor = 69;
  s.server_find_peak_qps_decimals_of_precision = 3;
  s.server_find_peak_qps_boundary_step_size = 0.5;
  s.mode = Mode::SubmissionRun;
  e = loadgen::derive_effective(s, 100, 100, nullptr);
  CHECK(e.mode == Mode::SubmissionRun);
  CHECK_EQ(e.accuracy_log_rng_seed, 720381539243781796ull);
  CHECK_EQ(e.accuracy_log_probability, 0.25);
  CHECK_EQ(e.accuracy_log_sampling_target, 64u);
  CHECK(e.print_timestamps);
  CHECK(e.infer_token_latencies);
  CHECK_EQ(e.token_latency_scaling_factor, 69);
  CHECK_EQ(e.server_find_peak_qps_decimals_of_precision, 3);
  CHECK_EQ(e.server_find_peak_qps_boundary_step_size, 0.5);
}

TEST(settings_validation_messages) {
  {
    TestSettings s;
    s.scenario = Scenario::Server;
    s.server_target_qps = -2.5;
    std::vector<LogMessage> messages;
    const EffectiveSettings e = loadgen::derive_effective(s, 100, 100, &messages);
    CHECK_EQ(e.target_qps, 1.0);
    CHECK_EQ(messages.size(), 1u);
    if (messages.size() == 1) {
      CHECK_EQ(messages[0].key, "error_invalid_test_settings");
      CHECK_EQ(messages[0].text, "Invalid value for server_target_qps requested. requested: -2.5 using: 1");
      CHECK(messages[0].is_error);
      CHECK(!messages[0].is_warning);
    }
  }
  {
    TestSettings s;
    s.scenario = Scenario::Offline;
    s.offline_expected_qps = -1234567.0;  // %g: 6 significant digits
    std::vector<LogMessage> messages;
    const EffectiveSettings e = loadgen::derive_effective(s, 100, 100, &messages);
    CHECK_EQ(e.target_qps, 1.0);
    CHECK_EQ(messages.size(), 1u);
    if (!messages.empty()) {
      CHECK_EQ(messages[0].text, "Invalid value for offline_expected_qps requested. requested: -1.23457e+06 using: 1");
    }
  }
  {
    TestSettings s;
    s.performance_issue_same = true;
    s.performance_issue_same_index = 100;
    s.performance_issue_unique = true;
    std::vector<LogMessage> messages;
    loadgen::derive_effective(s, 1000, 100, &messages);
    CHECK_EQ(messages.size(), 2u);
    if (messages.size() == 2) {
      CHECK_EQ(messages[0].key, "error_invalid_test_settings");
      CHECK_EQ(messages[0].text,
               "Sample Idx to be repeated in performance_issue_same mode cannot be greater than loaded "
               "performance_sample_count. performance_issue_same_index: 100 performance_sample_count: 100");
      CHECK_EQ(messages[1].text,
               "Performance_issue_unique and performance_issue_same, both cannot be true at the same time. "
               "performance_issue_unique: 1 performance_issue_same: 1");
      CHECK(messages[1].is_error);
    }
  }
  {
    // Index 99 of 100 is fine; a null message list is allowed.
    TestSettings s;
    s.performance_issue_same = true;
    s.performance_issue_same_index = 99;
    std::vector<LogMessage> messages;
    loadgen::derive_effective(s, 1000, 100, &messages);
    CHECK(messages.empty());
    s.performance_issue_same_index = 500;
    loadgen::derive_effective(s, 1000, 100, nullptr);
  }
}

TEST(settings_test05_override) {
  TestSettings s = settings_with_official_seeds(Scenario::SingleStream);
  s.mode = Mode::AccuracyOnly;
  s.test05_qsl_rng_seed = 7975553102935885558ull;
  s.test05_sample_index_rng_seed = 11403566307062068064ull;
  s.test05_schedule_rng_seed = 15816800565822761601ull;

  std::vector<LogMessage> messages;
  TestSettings unchanged = loadgen::apply_test05(s, &messages);
  CHECK(messages.empty());
  CHECK(unchanged.mode == Mode::AccuracyOnly);
  CHECK_EQ(unchanged.qsl_rng_seed, 2085463073848966840ull);

  s.test05 = true;
  TestSettings t = loadgen::apply_test05(s, &messages);
  CHECK(t.mode == Mode::PerformanceOnly);
  CHECK_EQ(t.qsl_rng_seed, 7975553102935885558ull);
  CHECK_EQ(t.sample_index_rng_seed, 11403566307062068064ull);
  CHECK_EQ(t.schedule_rng_seed, 15816800565822761601ull);
  CHECK(t.test05);
  CHECK_EQ(messages.size(), 1u);
  if (!messages.empty()) {
    CHECK_EQ(messages[0].key, "warning_generic_message");
    CHECK_EQ(messages[0].text, "Test05 flag detected Overriding random seeds");
    CHECK(messages[0].is_warning);
    CHECK(!messages[0].is_error);
  }
  const EffectiveSettings e = loadgen::derive_effective(t, 1000, 500, nullptr);
  CHECK(e.mode == Mode::PerformanceOnly);
  CHECK_EQ(e.sample_index_rng_seed, 11403566307062068064ull);
}

TEST(settings_run_bounds_refuse_runs_that_cannot_end_or_generate_too_much) {
  const auto field_of = [](const TestSettings& s) {
    const loadgen::SettingsProblem p = loadgen::check_run_bounds(s, 1024, 1024);
    return std::string(p.field == nullptr ? "" : p.field);
  };
  TestSettings s;
  s.scenario = Scenario::Server;
  for (double qps : {5e-324, 1e-9, 1e-4}) {
    s.server_target_qps = qps;
    CHECK_EQ(field_of(s), std::string("server_target_qps"));
  }
  s.server_target_qps = 100.0 / (7 * 24 * 3600);  // 100 queries in exactly 7 days
  CHECK_EQ(field_of(s), std::string(""));
  s.min_query_count = 1000;
  s.server_target_qps = 1e-3;  // 11.6 days
  CHECK_EQ(field_of(s), std::string("server_target_qps"));
  s.mode = Mode::AccuracyOnly;
  s.min_query_count = 1;
  s.server_target_qps = 1e-3;  // the 1024 accuracy queries take 11.9 days
  CHECK_EQ(field_of(s), std::string("server_target_qps"));
  s.mode = Mode::PerformanceOnly;
  CHECK_EQ(field_of(s), std::string(""));
  // Huge rates: the generated count is bounded (2^32 samples a series).
  s.server_target_qps = 1e300;
  CHECK_EQ(field_of(s), std::string("server_target_qps"));
  s.min_duration_ms = 0;  // every query at 0: min_query_count queries
  CHECK_EQ(field_of(s), std::string(""));
  s.min_duration_ms = 600000;
  s.server_target_qps = 7e6;  // 4.2e9 queries in 600 s
  CHECK_EQ(field_of(s), std::string(""));
  s.server_target_qps = 7.2e6;
  CHECK_EQ(field_of(s), std::string("server_target_qps"));

  TestSettings offline;
  offline.scenario = Scenario::Offline;
  offline.offline_expected_qps = 1e300;
  CHECK_EQ(field_of(offline), std::string("offline_expected_qps"));
  offline.offline_expected_qps = 1e6;
  CHECK_EQ(field_of(offline), std::string(""));
  offline.min_query_count = uint64_t{1} << 33;
  CHECK_EQ(field_of(offline), std::string("min_query_count"));

  TestSettings single;
  single.single_stream_expected_latency_ns = 1e300;  // the period overflows int64 ns
  CHECK_EQ(field_of(single), std::string("single_stream_expected_latency_ns"));
  single.single_stream_expected_latency_ns = 1000;
  single.min_duration_ms = 10000000;  // 2e10 queries
  CHECK_EQ(field_of(single), std::string("single_stream_expected_latency_ns"));
  single.min_duration_ms = 10000;
  CHECK_EQ(field_of(single), std::string(""));
  TestSettings multi;
  multi.scenario = Scenario::MultiStream;
  multi.min_query_count = 1000000000;  // 8e9 samples
  CHECK_EQ(field_of(multi), std::string("min_query_count"));
}

TEST(settings_run_bounds_refuse_sets_too_large_to_load) {
  const uint64_t max = 100000000;  // settings_fields.h loaded_sample_count
  const auto problem_of = [](const TestSettings& s, uint64_t total, uint64_t performance) {
    return loadgen::check_run_bounds(s, total, performance);
  };
  const auto field_of = [&](const TestSettings& s, uint64_t total, uint64_t performance) {
    const loadgen::SettingsProblem p = problem_of(s, total, performance);
    return std::string(p.field == nullptr ? "" : p.field);
  };
  TestSettings s;
  s.scenario = Scenario::Offline;
  s.mode = Mode::PerformanceOnly;
  // 2^32 - 1 samples reported, all of them "performance" samples: refused,
  // naming the QSL's count, its value and the limit.
  const loadgen::SettingsProblem p = problem_of(s, 4294967295u, 4294967295u);
  CHECK_EQ(std::string(p.field == nullptr ? "" : p.field), std::string("qsl_performance_sample_count"));
  CHECK(p.message.find("qsl_performance_sample_count 4294967295") == 0);
  CHECK(p.message.find("at most 100000000") != std::string::npos);
  // The set is min(performance, total): the limit itself passes, one more does not.
  CHECK_EQ(field_of(s, 4294967295u, max), std::string(""));
  CHECK_EQ(field_of(s, max, 4294967295u), std::string(""));
  CHECK_EQ(field_of(s, max + 1, max + 1), std::string("qsl_performance_sample_count"));
  // The override decides when set.
  s.performance_sample_count_override = max + 1;
  CHECK_EQ(field_of(s, 4294967295u, 1000), std::string("performance_sample_count_override"));
  s.performance_sample_count_override = 1000;
  CHECK_EQ(field_of(s, 4294967295u, 4294967295u), std::string(""));
  // Accuracy runs shuffle min(accuracy count, total) samples, whatever the set size.
  s.mode = Mode::AccuracyOnly;
  CHECK_EQ(field_of(s, 4294967295u, 1000), std::string("qsl_total_sample_count"));
  s.mode = Mode::SubmissionRun;
  CHECK_EQ(field_of(s, 4294967295u, 1000), std::string("qsl_total_sample_count"));
  s.accuracy_sample_count_override = max;
  CHECK_EQ(field_of(s, 4294967295u, 1000), std::string(""));
  s.accuracy_sample_count_override = max + 1;
  CHECK_EQ(field_of(s, 4294967295u, 1000), std::string("accuracy_sample_count_override"));
  // AccuracyOnly never loads the performance set.
  s.mode = Mode::AccuracyOnly;
  s.accuracy_sample_count_override = 10;
  s.performance_sample_count_override = 0;
  CHECK_EQ(field_of(s, 4294967295u, 4294967295u), std::string(""));
}

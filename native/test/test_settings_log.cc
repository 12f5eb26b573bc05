// requested_* / effective_* detail-log entries (spec/50 §4.2) and the named
// value lists for the binding.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "check.h"
#include "settings.h"
#include "settings_log.h"

using loadgen::EffectiveSettings;
using loadgen::LogEntries;
using loadgen::Mode;
using loadgen::NamedValue;
using loadgen::Scenario;
using loadgen::TestSettings;

namespace {

std::vector<std::string> keys(const LogEntries& entries) {
  std::vector<std::string> out;
  for (const auto& kv : entries) out.push_back(kv.first);
  return out;
}

const std::vector<std::string> kCommonRequested = {
    "requested_min_duration_ms",
    "requested_max_duration_ms",
    "requested_min_query_count",
    "requested_max_query_count",
    "requested_qsl_rng_seed",
    "requested_sample_index_rng_seed",
    "requested_schedule_rng_seed",
    "requested_accuracy_log_rng_seed",
    "requested_accuracy_log_probability",
    "requested_accuracy_log_sampling_target",
    "requested_print_timestamps",
    "requested_performance_issue_unique",
    "requested_performance_issue_same",
    "requested_performance_issue_same_index",
    "requested_performance_sample_count_override",
    "requested_accuracy_sample_count_override",
    "requested_sample_concatenate_permutation",
};

std::vector<std::string> expected_requested(Scenario /*for readability*/, std::vector<std::string> scenario_keys,
                                            std::vector<std::string> tail = {}) {
  std::vector<std::string> out = {"requested_scenario", "requested_test_mode"};
  out.insert(out.end(), scenario_keys.begin(), scenario_keys.end());
  out.insert(out.end(), kCommonRequested.begin(), kCommonRequested.end());
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

std::string value(const LogEntries& entries, const std::string& key) {
  for (const auto& kv : entries)
    if (kv.first == key) return kv.second;
  return "<absent>";
}

}  // namespace

TEST(settings_log_requested_keys_per_scenario) {
  TestSettings s;
  s.scenario = Scenario::SingleStream;
  CHECK(keys(loadgen::requested_settings_entries(s)) ==
        expected_requested(Scenario::SingleStream, {"requested_single_stream_expected_latency_ns",
                                                    "requested_single_stream_target_latency_percentile"}));
  s.scenario = Scenario::MultiStream;
  CHECK(keys(loadgen::requested_settings_entries(s)) ==
        expected_requested(Scenario::MultiStream, {"requested_multi_stream_expected_latency_ns",
                                                   "requested_multi_stream_target_latency_percentile",
                                                   "requested_multi_stream_samples_per_query"}));
  s.scenario = Scenario::Server;
  CHECK(keys(loadgen::requested_settings_entries(s)) ==
        expected_requested(Scenario::Server,
                           {"requested_server_target_qps", "requested_server_target_latency_ns",
                            "requested_server_target_latency_percentile", "requested_server_coalesce_queries",
                            "requested_server_find_peak_qps_decimals_of_precision",
                            "requested_server_find_peak_qps_boundary_step_size",
                            "requested_server_max_async_queries", "requested_server_num_issue_query_threads"}));
  s.scenario = Scenario::Offline;
  CHECK(keys(loadgen::requested_settings_entries(s)) ==
        expected_requested(Scenario::Offline, {"requested_offline_expected_qps"}));
}

TEST(settings_log_requested_token_keys) {
  TestSettings s;
  s.scenario = Scenario::Offline;
  s.infer_token_latencies = true;  // never logged
  CHECK(keys(loadgen::requested_settings_entries(s)) ==
        expected_requested(Scenario::Offline, {"requested_offline_expected_qps"}));
  s.use_token_latencies = true;
  CHECK(keys(loadgen::requested_settings_entries(s)) ==
        expected_requested(Scenario::Offline, {"requested_offline_expected_qps"}, {"requested_use_token_latencies"}));
  s.scenario = Scenario::SingleStream;
  s.server_ttft_latency = 3000000000u;
  s.server_tpot_latency = 80000000u;
  const LogEntries e = loadgen::requested_settings_entries(s);
  CHECK(keys(e) == expected_requested(Scenario::SingleStream,
                                      {"requested_single_stream_expected_latency_ns",
                                       "requested_single_stream_target_latency_percentile"},
                                      {"requested_use_token_latencies", "requested_server_ttft_latency",
                                       "requested_server_tpot_latency"}));
  CHECK_EQ(value(e, "requested_use_token_latencies"), "true");
  CHECK_EQ(value(e, "requested_server_ttft_latency"), "3000000000");
  CHECK_EQ(value(e, "requested_server_tpot_latency"), "80000000");
}

TEST(settings_log_requested_value_formatting) {
  TestSettings s;
  s.scenario = Scenario::Server;
  s.mode = Mode::AccuracyOnly;
  s.server_target_qps = 1234.5;
  s.server_target_latency_percentile = 0.9990000000000001;
  s.server_coalesce_queries = true;
  s.qsl_rng_seed = 16159082839903944936ull;
  s.max_query_count = UINT64_MAX;
  s.accuracy_log_probability = 0.05;
  s.print_timestamps = true;
  LogEntries e = loadgen::requested_settings_entries(s);
  CHECK_EQ(value(e, "requested_scenario"), "\"Server\"");
  CHECK_EQ(value(e, "requested_test_mode"), "\"AccuracyOnly\"");
  CHECK_EQ(value(e, "requested_server_target_qps"), "1234.5");
  CHECK_EQ(value(e, "requested_server_target_latency_ns"), "100000000");
  CHECK_EQ(value(e, "requested_server_target_latency_percentile"), "0.999");
  CHECK_EQ(value(e, "requested_server_coalesce_queries"), "true");
  CHECK_EQ(value(e, "requested_server_find_peak_qps_decimals_of_precision"), "1");
  CHECK_EQ(value(e, "requested_server_find_peak_qps_boundary_step_size"), "1");
  CHECK_EQ(value(e, "requested_qsl_rng_seed"), "16159082839903944936");
  CHECK_EQ(value(e, "requested_max_query_count"), "18446744073709551615");
  CHECK_EQ(value(e, "requested_accuracy_log_probability"), "0.05");
  CHECK_EQ(value(e, "requested_print_timestamps"), "true");
  CHECK_EQ(value(e, "requested_performance_issue_unique"), "false");
  s.scenario = Scenario::MultiStream;
  s.multi_stream_expected_latency_ns = 528000000;
  e = loadgen::requested_settings_entries(s);
  CHECK_EQ(value(e, "requested_multi_stream_expected_latency_ns"), "5.28e+08");
  CHECK_EQ(value(e, "requested_multi_stream_target_latency_percentile"), "0.99");
  s.scenario = Scenario::SingleStream;
  s.single_stream_expected_latency_ns = 1e9;
  CHECK_EQ(value(loadgen::requested_settings_entries(s), "requested_single_stream_expected_latency_ns"), "1e+09");
  s.scenario = Scenario::Offline;
  s.offline_expected_qps = std::numeric_limits<double>::infinity();
  CHECK_EQ(value(loadgen::requested_settings_entries(s), "requested_offline_expected_qps"), "inf");
}

TEST(settings_log_effective_entries) {
  TestSettings s;
  s.scenario = Scenario::MultiStream;
  s.multi_stream_expected_latency_ns = 528000000;
  s.min_duration_ms = 600000;
  s.min_query_count = 662;
  s.performance_sample_count_override = 64;
  s.use_token_latencies = true;  // token fields are derived but not logged
  const EffectiveSettings eff = loadgen::derive_effective(s, 50000, 1024, nullptr);
  const LogEntries e = loadgen::effective_settings_entries(eff);
  const std::vector<std::string> expected = {
      "effective_scenario", "effective_test_mode", "effective_samples_per_query", "effective_target_qps",
      "effective_target_latency_ns", "effective_target_latency_percentile", "effective_max_async_queries",
      "effective_target_duration_ms", "effective_min_duration_ms", "effective_max_duration_ms",
      "effective_min_query_count", "effective_max_query_count", "effective_min_sample_count",
      "effective_qsl_rng_seed", "effective_sample_index_rng_seed", "effective_schedule_rng_seed",
      "effective_accuracy_log_rng_seed", "effective_accuracy_log_probability",
      "effective_accuracy_log_sampling_target", "effective_print_timestamps",
      "effective_performance_issue_unique", "effective_performance_issue_same",
      "effective_performance_issue_same_index", "effective_performance_sample_count",
      "effective_accuracy_sample_count", "effective_sample_concatenate_permutation"};
  CHECK(keys(e) == expected);
  CHECK_EQ(value(e, "effective_scenario"), "\"MultiStream\"");
  CHECK_EQ(value(e, "effective_test_mode"), "\"PerformanceOnly\"");
  CHECK_EQ(value(e, "effective_samples_per_query"), "8");
  CHECK_EQ(value(e, "effective_target_qps"), "1.89394");
  CHECK_EQ(value(e, "effective_target_latency_percentile"), "0.99");
  CHECK_EQ(value(e, "effective_min_sample_count"), "5296");
  CHECK_EQ(value(e, "effective_performance_sample_count"), "64");
  CHECK_EQ(value(e, "effective_accuracy_sample_count"), "50000");
  CHECK_EQ(value(e, "effective_sample_concatenate_permutation"), "false");
  // Offline with a large qps: spq via %g is never used (integer), qps is.
  s = TestSettings();
  s.scenario = Scenario::Offline;
  s.offline_expected_qps = 1.5e7;
  const LogEntries o = loadgen::effective_settings_entries(loadgen::derive_effective(s, 10, 10, nullptr));
  CHECK_EQ(value(o, "effective_target_qps"), "1.5e+07");
  CHECK_EQ(value(o, "effective_samples_per_query"), "165000000");
  CHECK_EQ(value(o, "effective_target_duration_ms"), "0");
}

TEST(settings_log_message_value_text) {
  loadgen::LogMessage m;
  m.key = "error_invalid_config";
  m.text = "expected 'key=value', line=2";
  CHECK_EQ(loadgen::log_value_text(m), "\"expected 'key=value', line=2\"");
  // No escaping, as in the reference.
  CHECK_EQ(loadgen::quote_log_string("a\"b"), "\"a\"b\"");
}

TEST(settings_named_values) {
  TestSettings s;
  s.scenario = Scenario::Offline;
  s.qsl_rng_seed = 16159082839903944936ull;
  s.server_target_qps = 2.5;
  const std::vector<NamedValue> v = loadgen::settings_to_named_values(s);
  CHECK_EQ(v.size(), 42u);
  if (v.size() == 42) {
    CHECK_EQ(v[0].name, "scenario");
    CHECK(v[0].kind == NamedValue::String);
    CHECK_EQ(v[0].s, "Offline");
    CHECK_EQ(v[1].name, "mode");
    CHECK_EQ(v[1].s, "PerformanceOnly");
    CHECK_EQ(v[7].name, "server_target_qps");
    CHECK(v[7].kind == NamedValue::Double);
    CHECK_EQ(v[7].d, 2.5);
    CHECK_EQ(v[21].name, "qsl_rng_seed");
    CHECK(v[21].kind == NamedValue::U64);
    CHECK_EQ(v[21].u, 16159082839903944936ull);
    CHECK_EQ(v[41].name, "token_latency_scaling_factor");
    CHECK_EQ(v[11].name, "server_find_peak_qps_decimals_of_precision");
    CHECK(v[11].kind == NamedValue::I64);
    CHECK_EQ(v[11].i, 1);
  }
  EffectiveSettings e;
  e.target_latency_ns = -5;
  e.print_timestamps = true;
  const std::vector<NamedValue> ev = loadgen::effective_to_named_values(e);
  const std::vector<std::string> names = {
      "scenario", "mode", "samples_per_query", "target_qps", "target_latency_ns", "target_latency_percentile",
      "max_async_queries", "target_duration_ms", "min_duration_ms", "max_duration_ms", "min_query_count",
      "max_query_count", "min_sample_count", "qsl_rng_seed", "sample_index_rng_seed", "schedule_rng_seed",
      "accuracy_log_rng_seed", "accuracy_log_probability", "accuracy_log_sampling_target", "print_timestamps",
      "performance_issue_unique", "performance_issue_same", "performance_issue_same_index",
      "performance_sample_count", "accuracy_sample_count", "sample_concatenate_permutation",
      "use_token_latencies", "server_ttft_latency", "server_tpot_latency", "infer_token_latencies",
      "token_latency_scaling_factor"};
  std::vector<std::string> got;
  for (const NamedValue& n : ev) got.push_back(n.name);
  CHECK(got == names);
  if (ev.size() == names.size()) {
    CHECK(ev[4].kind == NamedValue::I64);
    CHECK_EQ(ev[4].i, -5);
    CHECK(ev[19].kind == NamedValue::Bool);
    CHECK(ev[19].b);
    CHECK(ev[27].kind == NamedValue::I64);
  }
}

// The config-file keys (spec/10 §2 "Config key", §4.3): which keys exist,
// which TestSettings field each sets for which scenario segment, and how its
// value is read. config.cc applies config files from this table, and the
// addon exports it, so lib/config/ lints files against the same keys.
#pragma once

#include "field_table.h"
#include "settings.h"

namespace loadgen {

// How a raw value token becomes the field's value.
enum class ConfigValue {
  Int,      // strtoull(raw) * multiplier (unsigned, wrapping)
  Int32,    // int(strtoull(raw)): truncated to 32 bits, sign-extended back
  Double,   // strtod(raw) * multiplier
  Eq1,      // boolean: the integer == 1
  NonZero,  // boolean: the integer != 0
  Mode,     // 0..3, the TestMode; anything else logs an error
};

// The scenario segment a lookup uses: the scenario asked for, or a fixed one
// (such keys apply whatever scenario was asked for); fixed ones are the
// Scenario's values.
enum class ConfigScenario : int {
  Requested = -1,
  SingleStream = static_cast<int>(Scenario::SingleStream),
  MultiStream = static_cast<int>(Scenario::MultiStream),
  Server = static_cast<int>(Scenario::Server),
  Offline = static_cast<int>(Scenario::Offline),
};

struct ConfigKey {
  const char* key;  // the last segment of <model>.<scenario>.<key>
  ConfigScenario scenario;
  Member<TestSettings> field;
  ConfigValue value;
  double multiplier;  // Int: applied as an integer
  const char* unit;   // unit of the value in the file: "ms", "percent" or ""
  bool mlperf_only;   // read only from mlperf.conf (conf_type 0)
  bool TestSettings::*only_with;  // read only when this flag is already true at that point of the call
};

// In the reference's application order (§4.3): it decides the conditional
// token keys (the flag's own key comes first) and where a mode error lands.
// A key that sets different fields per scenario has one row per field.
inline constexpr ConfigKey kConfigKeys[] = {
    {"mode", ConfigScenario::Requested, &TestSettings::mode, ConfigValue::Mode, 1, "", false, nullptr},
    {"qsl_rng_seed", ConfigScenario::Requested, &TestSettings::qsl_rng_seed, ConfigValue::Int, 1, "", true, nullptr},
    {"sample_index_rng_seed", ConfigScenario::Requested, &TestSettings::sample_index_rng_seed, ConfigValue::Int, 1, "", true, nullptr},
    {"schedule_rng_seed", ConfigScenario::Requested, &TestSettings::schedule_rng_seed, ConfigValue::Int, 1, "", true, nullptr},
    {"accuracy_log_probability", ConfigScenario::Requested, &TestSettings::accuracy_log_probability, ConfigValue::Double, 0.01, "percent", true, nullptr},
    {"test05", ConfigScenario::Requested, &TestSettings::test05, ConfigValue::Eq1, 1, "", true, nullptr},
    {"test05_qsl_rng_seed", ConfigScenario::Requested, &TestSettings::test05_qsl_rng_seed, ConfigValue::Int, 1, "", true, nullptr},
    {"test05_sample_index_rng_seed", ConfigScenario::Requested, &TestSettings::test05_sample_index_rng_seed, ConfigValue::Int, 1, "", true, nullptr},
    {"test05_schedule_rng_seed", ConfigScenario::Requested, &TestSettings::test05_schedule_rng_seed, ConfigValue::Int, 1, "", true, nullptr},
    {"use_token_latencies", ConfigScenario::Requested, &TestSettings::use_token_latencies, ConfigValue::Eq1, 1, "", false, nullptr},
    {"ttft_latency", ConfigScenario::Server, &TestSettings::server_ttft_latency, ConfigValue::Int, 1000000, "ms", false, &TestSettings::use_token_latencies},
    {"tpot_latency", ConfigScenario::Server, &TestSettings::server_tpot_latency, ConfigValue::Int, 1000000, "ms", false, &TestSettings::use_token_latencies},
    {"infer_token_latencies", ConfigScenario::Requested, &TestSettings::infer_token_latencies, ConfigValue::Eq1, 1, "", false, nullptr},
    {"token_latency_scaling_factor", ConfigScenario::Requested, &TestSettings::token_latency_scaling_factor, ConfigValue::Int, 1, "", false, &TestSettings::infer_token_latencies},
    {"target_latency_percentile", ConfigScenario::SingleStream, &TestSettings::single_stream_target_latency_percentile, ConfigValue::Double, 0.01, "percent", false, nullptr},
    {"target_latency_percentile", ConfigScenario::MultiStream, &TestSettings::multi_stream_target_latency_percentile, ConfigValue::Double, 0.01, "percent", false, nullptr},
    {"samples_per_query", ConfigScenario::MultiStream, &TestSettings::multi_stream_samples_per_query, ConfigValue::Int, 1, "", false, nullptr},
    {"target_latency_percentile", ConfigScenario::Server, &TestSettings::server_target_latency_percentile, ConfigValue::Double, 0.01, "percent", false, nullptr},
    {"target_latency", ConfigScenario::Server, &TestSettings::server_target_latency_ns, ConfigValue::Int, 1000000, "ms", false, nullptr},
    {"performance_issue_unique", ConfigScenario::Requested, &TestSettings::performance_issue_unique, ConfigValue::NonZero, 1, "", false, nullptr},
    {"performance_issue_same", ConfigScenario::Requested, &TestSettings::performance_issue_same, ConfigValue::NonZero, 1, "", false, nullptr},
    {"performance_issue_same_index", ConfigScenario::Requested, &TestSettings::performance_issue_same_index, ConfigValue::Int, 1, "", false, nullptr},
    {"sample_concatenate_permutation", ConfigScenario::Requested, &TestSettings::sample_concatenate_permutation, ConfigValue::Eq1, 1, "", false, nullptr},
    {"coalesce_queries", ConfigScenario::Server, &TestSettings::server_coalesce_queries, ConfigValue::NonZero, 1, "", false, nullptr},
    {"max_async_queries", ConfigScenario::Server, &TestSettings::server_max_async_queries, ConfigValue::Int32, 1, "", false, nullptr},
    {"min_duration", ConfigScenario::Requested, &TestSettings::min_duration_ms, ConfigValue::Int, 1, "ms", false, nullptr},
    {"max_duration", ConfigScenario::Requested, &TestSettings::max_duration_ms, ConfigValue::Int, 1, "ms", false, nullptr},
    {"min_query_count", ConfigScenario::Requested, &TestSettings::min_query_count, ConfigValue::Int, 1, "", false, nullptr},
    {"max_query_count", ConfigScenario::Requested, &TestSettings::max_query_count, ConfigValue::Int, 1, "", false, nullptr},
    {"performance_sample_count_override", ConfigScenario::Requested, &TestSettings::performance_sample_count_override, ConfigValue::Int, 1, "", false, nullptr},
    {"accuracy_sample_count_override", ConfigScenario::Requested, &TestSettings::accuracy_sample_count_override, ConfigValue::Int, 1, "", false, nullptr},
    {"target_latency", ConfigScenario::SingleStream, &TestSettings::single_stream_expected_latency_ns, ConfigValue::Double, 1e6, "ms", false, nullptr},
    {"target_latency", ConfigScenario::MultiStream, &TestSettings::multi_stream_expected_latency_ns, ConfigValue::Double, 1e6, "ms", false, nullptr},
    {"target_qps", ConfigScenario::Server, &TestSettings::server_target_qps, ConfigValue::Double, 1, "", false, nullptr},
    {"target_qps", ConfigScenario::Offline, &TestSettings::offline_expected_qps, ConfigValue::Double, 1, "", false, nullptr},
    {"print_timestamps", ConfigScenario::Requested, &TestSettings::print_timestamps, ConfigValue::NonZero, 1, "", false, nullptr},
    {"accuracy_log_rng_seed", ConfigScenario::Requested, &TestSettings::accuracy_log_rng_seed, ConfigValue::Int, 1, "", false, nullptr},
    {"accuracy_log_sampling_target", ConfigScenario::Requested, &TestSettings::accuracy_log_sampling_target, ConfigValue::Int, 1, "", false, nullptr},
};

// Names as the JS side spells them: "int", "int32", "double", "eq1",
// "nonzero", "mode"; "arg" for the requested scenario, else its name.
const char* to_string(ConfigValue v);
const char* to_string(ConfigScenario s);

}  // namespace loadgen

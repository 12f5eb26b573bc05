// The field tables of TestSettings and EffectiveSettings, and the limits of
// the run settings loadgen adds. The detail log's requested_*/effective_*
// entries, the named-value lists, the JS conversion (bindings/convert.cc) and
// the config keys (config_keys.h) are generated from these rows: adding a
// field is one row here (plus its use).
#pragma once

#include <cstddef>
#include <cstdint>

#include "field_table.h"
#include "settings.h"

namespace loadgen {

// Where the detail log writes a requested_* entry, in emission order: the
// head, then the block of the requested scenario only, then the common
// block (sample_concatenate_permutation last, as the reference logs it), then
// the token fields when use_token_latencies is on (their "server_" bounds
// for every scenario but Offline).
enum class RequestedLog { Head, SingleStream, MultiStream, Server, Offline, Common, CommonLast, Tokens, TokenBounds, Never };

struct TestSettingsField {
  const char* name;  // the C++ (reference) field name
  Member<TestSettings> member;
  RequestedLog log;
  const char* log_name;  // the detail log's key without "requested_", when it is not `name`
};

// Every TestSettings field, in declaration order (the order of the
// named-value lists and of the JS conversion).
inline constexpr TestSettingsField kTestSettingsFields[] = {
    {"scenario", &TestSettings::scenario, RequestedLog::Head, nullptr},
    {"mode", &TestSettings::mode, RequestedLog::Head, "test_mode"},
    {"single_stream_expected_latency_ns", &TestSettings::single_stream_expected_latency_ns, RequestedLog::SingleStream, nullptr},
    {"single_stream_target_latency_percentile", &TestSettings::single_stream_target_latency_percentile, RequestedLog::SingleStream, nullptr},
    {"multi_stream_expected_latency_ns", &TestSettings::multi_stream_expected_latency_ns, RequestedLog::MultiStream, nullptr},
    {"multi_stream_target_latency_percentile", &TestSettings::multi_stream_target_latency_percentile, RequestedLog::MultiStream, nullptr},
    {"multi_stream_samples_per_query", &TestSettings::multi_stream_samples_per_query, RequestedLog::MultiStream, nullptr},
    {"server_target_qps", &TestSettings::server_target_qps, RequestedLog::Server, nullptr},
    {"server_target_latency_ns", &TestSettings::server_target_latency_ns, RequestedLog::Server, nullptr},
    {"server_target_latency_percentile", &TestSettings::server_target_latency_percentile, RequestedLog::Server, nullptr},
    {"server_coalesce_queries", &TestSettings::server_coalesce_queries, RequestedLog::Server, nullptr},
    {"server_find_peak_qps_decimals_of_precision", &TestSettings::server_find_peak_qps_decimals_of_precision, RequestedLog::Server, nullptr},
    {"server_find_peak_qps_boundary_step_size", &TestSettings::server_find_peak_qps_boundary_step_size, RequestedLog::Server, nullptr},
    {"server_max_async_queries", &TestSettings::server_max_async_queries, RequestedLog::Server, nullptr},
    {"server_num_issue_query_threads", &TestSettings::server_num_issue_query_threads, RequestedLog::Server, nullptr},
    {"offline_expected_qps", &TestSettings::offline_expected_qps, RequestedLog::Offline, nullptr},
    {"sample_concatenate_permutation", &TestSettings::sample_concatenate_permutation, RequestedLog::CommonLast, nullptr},
    {"min_duration_ms", &TestSettings::min_duration_ms, RequestedLog::Common, nullptr},
    {"max_duration_ms", &TestSettings::max_duration_ms, RequestedLog::Common, nullptr},
    {"min_query_count", &TestSettings::min_query_count, RequestedLog::Common, nullptr},
    {"max_query_count", &TestSettings::max_query_count, RequestedLog::Common, nullptr},
    {"qsl_rng_seed", &TestSettings::qsl_rng_seed, RequestedLog::Common, nullptr},
    {"sample_index_rng_seed", &TestSettings::sample_index_rng_seed, RequestedLog::Common, nullptr},
    {"schedule_rng_seed", &TestSettings::schedule_rng_seed, RequestedLog::Common, nullptr},
    {"accuracy_log_rng_seed", &TestSettings::accuracy_log_rng_seed, RequestedLog::Common, nullptr},
    {"accuracy_log_probability", &TestSettings::accuracy_log_probability, RequestedLog::Common, nullptr},
    {"accuracy_log_sampling_target", &TestSettings::accuracy_log_sampling_target, RequestedLog::Common, nullptr},
    {"test05", &TestSettings::test05, RequestedLog::Never, nullptr},
    {"test05_qsl_rng_seed", &TestSettings::test05_qsl_rng_seed, RequestedLog::Never, nullptr},
    {"test05_sample_index_rng_seed", &TestSettings::test05_sample_index_rng_seed, RequestedLog::Never, nullptr},
    {"test05_schedule_rng_seed", &TestSettings::test05_schedule_rng_seed, RequestedLog::Never, nullptr},
    {"print_timestamps", &TestSettings::print_timestamps, RequestedLog::Common, nullptr},
    {"performance_issue_unique", &TestSettings::performance_issue_unique, RequestedLog::Common, nullptr},
    {"performance_issue_same", &TestSettings::performance_issue_same, RequestedLog::Common, nullptr},
    {"performance_issue_same_index", &TestSettings::performance_issue_same_index, RequestedLog::Common, nullptr},
    {"performance_sample_count_override", &TestSettings::performance_sample_count_override, RequestedLog::Common, nullptr},
    {"accuracy_sample_count_override", &TestSettings::accuracy_sample_count_override, RequestedLog::Common, nullptr},
    {"use_token_latencies", &TestSettings::use_token_latencies, RequestedLog::Tokens, nullptr},
    {"server_ttft_latency", &TestSettings::server_ttft_latency, RequestedLog::TokenBounds, nullptr},
    {"server_tpot_latency", &TestSettings::server_tpot_latency, RequestedLog::TokenBounds, nullptr},
    {"infer_token_latencies", &TestSettings::infer_token_latencies, RequestedLog::Never, nullptr},
    {"token_latency_scaling_factor", &TestSettings::token_latency_scaling_factor, RequestedLog::Never, nullptr},
};

// The TestSettings row of `member`; nullptr when the table lacks it.
inline const TestSettingsField* find_test_settings_field(const Member<TestSettings>& member) {
  for (const TestSettingsField& f : kTestSettingsFields) {
    if (f.member == member) return &f;
  }
  return nullptr;
}

struct EffectiveSettingsField {
  const char* name;  // the golden "effective" name (detail-log key without "effective_", but `mode`)
  Member<EffectiveSettings> member;
  bool logged;           // written as an effective_* detail-log entry
  const char* log_name;  // the detail log's key without "effective_", when it is not `name`
};

// The reported EffectiveSettings fields in the detail log's order, then the
// derived token fields (reported, not logged). The copied find-peak
// parameters are neither.
inline constexpr EffectiveSettingsField kEffectiveSettingsFields[] = {
    {"scenario", &EffectiveSettings::scenario, true, nullptr},
    {"mode", &EffectiveSettings::mode, true, "test_mode"},
    {"samples_per_query", &EffectiveSettings::samples_per_query, true, nullptr},
    {"target_qps", &EffectiveSettings::target_qps, true, nullptr},
    {"target_latency_ns", &EffectiveSettings::target_latency_ns, true, nullptr},
    {"target_latency_percentile", &EffectiveSettings::target_latency_percentile, true, nullptr},
    {"max_async_queries", &EffectiveSettings::max_async_queries, true, nullptr},
    {"target_duration_ms", &EffectiveSettings::target_duration_ms, true, nullptr},
    {"min_duration_ms", &EffectiveSettings::min_duration_ms, true, nullptr},
    {"max_duration_ms", &EffectiveSettings::max_duration_ms, true, nullptr},
    {"min_query_count", &EffectiveSettings::min_query_count, true, nullptr},
    {"max_query_count", &EffectiveSettings::max_query_count, true, nullptr},
    {"min_sample_count", &EffectiveSettings::min_sample_count, true, nullptr},
    {"qsl_rng_seed", &EffectiveSettings::qsl_rng_seed, true, nullptr},
    {"sample_index_rng_seed", &EffectiveSettings::sample_index_rng_seed, true, nullptr},
    {"schedule_rng_seed", &EffectiveSettings::schedule_rng_seed, true, nullptr},
    {"accuracy_log_rng_seed", &EffectiveSettings::accuracy_log_rng_seed, true, nullptr},
    {"accuracy_log_probability", &EffectiveSettings::accuracy_log_probability, true, nullptr},
    {"accuracy_log_sampling_target", &EffectiveSettings::accuracy_log_sampling_target, true, nullptr},
    {"print_timestamps", &EffectiveSettings::print_timestamps, true, nullptr},
    {"performance_issue_unique", &EffectiveSettings::performance_issue_unique, true, nullptr},
    {"performance_issue_same", &EffectiveSettings::performance_issue_same, true, nullptr},
    {"performance_issue_same_index", &EffectiveSettings::performance_issue_same_index, true, nullptr},
    {"performance_sample_count", &EffectiveSettings::performance_sample_count, true, nullptr},
    {"accuracy_sample_count", &EffectiveSettings::accuracy_sample_count, true, nullptr},
    {"sample_concatenate_permutation", &EffectiveSettings::sample_concatenate_permutation, true, nullptr},
    {"use_token_latencies", &EffectiveSettings::use_token_latencies, false, nullptr},
    {"server_ttft_latency", &EffectiveSettings::server_ttft_latency, false, nullptr},
    {"server_tpot_latency", &EffectiveSettings::server_tpot_latency, false, nullptr},
    {"infer_token_latencies", &EffectiveSettings::infer_token_latencies, false, nullptr},
    {"token_latency_scaling_factor", &EffectiveSettings::token_latency_scaling_factor, false, nullptr},
};

// The highest enum values a JS object may carry for `scenario` and `mode`.
constexpr int kMaxScenario = static_cast<int>(Scenario::Offline);
constexpr int kMaxMode = static_cast<int>(Mode::FindPeakPerformance);

// Limits of the run settings loadgen adds to the reference's (the
// TestSettings extensions issueThreadCpu ... wakeLeadUs, and the QSL size).
// They are stated here, on the native side, because they protect the core:
// the addon checks every value crossing from JS against them (never trusting
// JS), and exports them so lib/settings/ builds its schema (range checks
// and messages) from the same numbers instead of repeating them. The
// reference's own fields have no native limits: the reference accepts any
// value and logs what it rejects, and the conformance cases rely on that.
struct RunSettingLimit {
  const char* name;  // the flat snake_case name lib/settings/to-native.ts sends
  int64_t min;
  int64_t max;
};

inline constexpr RunSettingLimit kRunSettingLimits[] = {
    // CPU_SET ignores indices >= CPU_SETSIZE (1024 on glibc), so larger ones could never pin; -1 = not pinned.
    {"issue_thread_cpu", -1, 1023},
    // The core counts the timeout in int64 nanoseconds.
    {"completion_timeout_ms", 0, INT64_MAX / 1000000},
    // Enforced by the JS host with a timer, which holds at most 2^31-1 ms
    // (Node fires a longer one at once); the core never reads it.
    {"qsl_timeout_ms", 0, 2147483647},
    {"dispatch", 0, 2},  // DispatchMode: wake, poll, worker
    // One thread each; more than this is a typo, not a machine.
    {"dispatch_workers", 1, 256},
    {"dispatch_spin_us", 0, 1000000},
    {"wake_lead_us", 0, 10000},
    // QSL indices are 32-bit in the core (trace.h).
    {"qsl_total_sample_count", 1, 0xFFFFFFFFll},
    // Samples one loadable-set generation shuffles: min(performance sample
    // count, total) for performance runs, min(accuracy sample count, total)
    // for accuracy runs (check_run_bounds, lib/settings/validate.ts). Each
    // costs the core 4 bytes (its index; 4 more while the host copies a set
    // to JS), the JS side 12 (a Uint32Array, then the number[] a QSL's
    // loadSamplesToRam takes) and the detail log's loaded_qsl_set up to 11
    // bytes of text. V8's fast arrays hold at most 2^27 - 3 elements, so a
    // larger set cannot reach a JS QSL at all; 10^8 stays below that, at
    // ~2 GB for a set on both sides. 2^32 - 1 samples would need 17 GB for
    // the core's indices alone, and minutes to shuffle.
    {"loaded_sample_count", 1, 100000000},
    // Samples one series may generate (trace.cc refuses more: 64 GiB of
    // trace state); settings that would generate more are refused up front
    // (check_run_bounds, lib/settings/validate.ts).
    {"generated_sample_count", 1, int64_t{1} << 32},
    // The longest expected issue time of a Server run, in s (check_run_bounds):
    // 7 days. The longest real runs fit (270336 queries at 0.45 queries/s take
    // 6.95 days); longer is a unit mistake, and tiny rates overflow the
    // int64-ns schedule, which is generated whole before the run.
    {"expected_issue_time_s", 1, 7 * 24 * 3600},
};

// The limit of `name`; nullptr when there is none. constexpr, so code that
// owns a limited enum can static_assert that it agrees.
constexpr const RunSettingLimit* find_run_setting_limit(const char* name) {
  for (const RunSettingLimit& l : kRunSettingLimits) {
    size_t i = 0;
    while (l.name[i] != '\0' && l.name[i] == name[i]) ++i;
    if (l.name[i] == name[i]) return &l;
  }
  return nullptr;
}

}  // namespace loadgen

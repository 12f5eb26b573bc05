// requested_* / effective_* detail-log entries (spec/50 §4.2) and named
// field lists for the binding.
#include "settings_log.h"

#include "format.h"

namespace loadgen {

namespace {

// Builds {prefix + name, value_text} pairs with the detail log's formatting.
class EntryWriter {
 public:
  explicit EntryWriter(const char* prefix) : prefix_(prefix) {}
  void u64(const char* name, uint64_t v) { add(name, std::to_string(v)); }
  void i64(const char* name, int64_t v) { add(name, std::to_string(v)); }
  void dbl(const char* name, double v) { add(name, format_double(v)); }
  void flag(const char* name, bool v) { add(name, v ? "true" : "false"); }
  void str(const char* name, const std::string& v) { add(name, quote_log_string(v)); }
  LogEntries take() { return std::move(entries_); }

 private:
  void add(const char* name, std::string text) { entries_.emplace_back(prefix_ + name, std::move(text)); }
  std::string prefix_;
  LogEntries entries_;
};

// One field of a named-value list; the caller fills the member of `kind`.
NamedValue named(const char* name, NamedValue::Kind kind) {
  NamedValue n;
  n.name = name;
  n.kind = kind;
  return n;
}

NamedValue nv_u64(const char* name, uint64_t v) { auto n = named(name, NamedValue::U64); n.u = v; return n; }
NamedValue nv_i64(const char* name, int64_t v) { auto n = named(name, NamedValue::I64); n.i = v; return n; }
NamedValue nv_dbl(const char* name, double v) { auto n = named(name, NamedValue::Double); n.d = v; return n; }
NamedValue nv_bool(const char* name, bool v) { auto n = named(name, NamedValue::Bool); n.b = v; return n; }
NamedValue nv_str(const char* name, std::string v) {
  auto n = named(name, NamedValue::String);
  n.s = std::move(v);
  return n;
}

}  // namespace

std::string quote_log_string(const std::string& text) { return "\"" + text + "\""; }

std::string log_value_text(const LogMessage& m) { return quote_log_string(m.text); }

LogEntries requested_settings_entries(const TestSettings& s) {
  EntryWriter w("requested_");
  w.str("scenario", to_string(s.scenario));
  w.str("test_mode", to_string(s.mode));
  // Only the block of the requested scenario is logged.
  switch (s.scenario) {
    case Scenario::SingleStream:
      w.dbl("single_stream_expected_latency_ns", s.single_stream_expected_latency_ns);
      w.dbl("single_stream_target_latency_percentile", s.single_stream_target_latency_percentile);
      break;
    case Scenario::MultiStream:
      w.dbl("multi_stream_expected_latency_ns", s.multi_stream_expected_latency_ns);
      w.dbl("multi_stream_target_latency_percentile", s.multi_stream_target_latency_percentile);
      w.u64("multi_stream_samples_per_query", s.multi_stream_samples_per_query);
      break;
    case Scenario::Server:
      w.dbl("server_target_qps", s.server_target_qps);
      w.u64("server_target_latency_ns", s.server_target_latency_ns);
      w.dbl("server_target_latency_percentile", s.server_target_latency_percentile);
      w.flag("server_coalesce_queries", s.server_coalesce_queries);
      w.i64("server_find_peak_qps_decimals_of_precision", s.server_find_peak_qps_decimals_of_precision);
      w.dbl("server_find_peak_qps_boundary_step_size", s.server_find_peak_qps_boundary_step_size);
      w.u64("server_max_async_queries", s.server_max_async_queries);
      w.u64("server_num_issue_query_threads", s.server_num_issue_query_threads);
      break;
    case Scenario::Offline:
      w.dbl("offline_expected_qps", s.offline_expected_qps);
      break;
  }
  w.u64("min_duration_ms", s.min_duration_ms);
  w.u64("max_duration_ms", s.max_duration_ms);
  w.u64("min_query_count", s.min_query_count);
  w.u64("max_query_count", s.max_query_count);
  w.u64("qsl_rng_seed", s.qsl_rng_seed);
  w.u64("sample_index_rng_seed", s.sample_index_rng_seed);
  w.u64("schedule_rng_seed", s.schedule_rng_seed);
  w.u64("accuracy_log_rng_seed", s.accuracy_log_rng_seed);
  w.dbl("accuracy_log_probability", s.accuracy_log_probability);
  w.u64("accuracy_log_sampling_target", s.accuracy_log_sampling_target);
  w.flag("print_timestamps", s.print_timestamps);
  w.flag("performance_issue_unique", s.performance_issue_unique);
  w.flag("performance_issue_same", s.performance_issue_same);
  w.u64("performance_issue_same_index", s.performance_issue_same_index);
  w.u64("performance_sample_count_override", s.performance_sample_count_override);
  w.u64("accuracy_sample_count_override", s.accuracy_sample_count_override);
  w.flag("sample_concatenate_permutation", s.sample_concatenate_permutation);
  if (s.use_token_latencies) {
    w.flag("use_token_latencies", s.use_token_latencies);
    // The "server_" bounds are logged for every scenario but Offline.
    if (s.scenario != Scenario::Offline) {
      w.u64("server_ttft_latency", s.server_ttft_latency);
      w.u64("server_tpot_latency", s.server_tpot_latency);
    }
  }
  return w.take();
}

LogEntries effective_settings_entries(const EffectiveSettings& e) {
  EntryWriter w("effective_");
  w.str("scenario", to_string(e.scenario));
  w.str("test_mode", to_string(e.mode));
  w.u64("samples_per_query", e.samples_per_query);
  w.dbl("target_qps", e.target_qps);
  w.i64("target_latency_ns", e.target_latency_ns);
  w.dbl("target_latency_percentile", e.target_latency_percentile);
  w.u64("max_async_queries", e.max_async_queries);
  w.u64("target_duration_ms", e.target_duration_ms);
  w.u64("min_duration_ms", e.min_duration_ms);
  w.u64("max_duration_ms", e.max_duration_ms);
  w.u64("min_query_count", e.min_query_count);
  w.u64("max_query_count", e.max_query_count);
  w.u64("min_sample_count", e.min_sample_count);
  w.u64("qsl_rng_seed", e.qsl_rng_seed);
  w.u64("sample_index_rng_seed", e.sample_index_rng_seed);
  w.u64("schedule_rng_seed", e.schedule_rng_seed);
  w.u64("accuracy_log_rng_seed", e.accuracy_log_rng_seed);
  w.dbl("accuracy_log_probability", e.accuracy_log_probability);
  w.u64("accuracy_log_sampling_target", e.accuracy_log_sampling_target);
  w.flag("print_timestamps", e.print_timestamps);
  w.flag("performance_issue_unique", e.performance_issue_unique);
  w.flag("performance_issue_same", e.performance_issue_same);
  w.u64("performance_issue_same_index", e.performance_issue_same_index);
  w.u64("performance_sample_count", e.performance_sample_count);
  w.u64("accuracy_sample_count", e.accuracy_sample_count);
  w.flag("sample_concatenate_permutation", e.sample_concatenate_permutation);
  return w.take();
}

std::vector<NamedValue> settings_to_named_values(const TestSettings& s) {
  return {
      nv_str("scenario", to_string(s.scenario)),
      nv_str("mode", to_string(s.mode)),
      nv_dbl("single_stream_expected_latency_ns", s.single_stream_expected_latency_ns),
      nv_dbl("single_stream_target_latency_percentile", s.single_stream_target_latency_percentile),
      nv_dbl("multi_stream_expected_latency_ns", s.multi_stream_expected_latency_ns),
      nv_dbl("multi_stream_target_latency_percentile", s.multi_stream_target_latency_percentile),
      nv_u64("multi_stream_samples_per_query", s.multi_stream_samples_per_query),
      nv_dbl("server_target_qps", s.server_target_qps),
      nv_u64("server_target_latency_ns", s.server_target_latency_ns),
      nv_dbl("server_target_latency_percentile", s.server_target_latency_percentile),
      nv_bool("server_coalesce_queries", s.server_coalesce_queries),
      nv_i64("server_find_peak_qps_decimals_of_precision", s.server_find_peak_qps_decimals_of_precision),
      nv_dbl("server_find_peak_qps_boundary_step_size", s.server_find_peak_qps_boundary_step_size),
      nv_u64("server_max_async_queries", s.server_max_async_queries),
      nv_u64("server_num_issue_query_threads", s.server_num_issue_query_threads),
      nv_dbl("offline_expected_qps", s.offline_expected_qps),
      nv_bool("sample_concatenate_permutation", s.sample_concatenate_permutation),
      nv_u64("min_duration_ms", s.min_duration_ms),
      nv_u64("max_duration_ms", s.max_duration_ms),
      nv_u64("min_query_count", s.min_query_count),
      nv_u64("max_query_count", s.max_query_count),
      nv_u64("qsl_rng_seed", s.qsl_rng_seed),
      nv_u64("sample_index_rng_seed", s.sample_index_rng_seed),
      nv_u64("schedule_rng_seed", s.schedule_rng_seed),
      nv_u64("accuracy_log_rng_seed", s.accuracy_log_rng_seed),
      nv_dbl("accuracy_log_probability", s.accuracy_log_probability),
      nv_u64("accuracy_log_sampling_target", s.accuracy_log_sampling_target),
      nv_bool("test05", s.test05),
      nv_u64("test05_qsl_rng_seed", s.test05_qsl_rng_seed),
      nv_u64("test05_sample_index_rng_seed", s.test05_sample_index_rng_seed),
      nv_u64("test05_schedule_rng_seed", s.test05_schedule_rng_seed),
      nv_bool("print_timestamps", s.print_timestamps),
      nv_bool("performance_issue_unique", s.performance_issue_unique),
      nv_bool("performance_issue_same", s.performance_issue_same),
      nv_u64("performance_issue_same_index", s.performance_issue_same_index),
      nv_u64("performance_sample_count_override", s.performance_sample_count_override),
      nv_u64("accuracy_sample_count_override", s.accuracy_sample_count_override),
      nv_bool("use_token_latencies", s.use_token_latencies),
      nv_u64("server_ttft_latency", s.server_ttft_latency),
      nv_u64("server_tpot_latency", s.server_tpot_latency),
      nv_bool("infer_token_latencies", s.infer_token_latencies),
      nv_u64("token_latency_scaling_factor", s.token_latency_scaling_factor),
  };
}

std::vector<NamedValue> effective_to_named_values(const EffectiveSettings& e) {
  return {
      nv_str("scenario", to_string(e.scenario)),
      nv_str("mode", to_string(e.mode)),
      nv_u64("samples_per_query", e.samples_per_query),
      nv_dbl("target_qps", e.target_qps),
      nv_i64("target_latency_ns", e.target_latency_ns),
      nv_dbl("target_latency_percentile", e.target_latency_percentile),
      nv_u64("max_async_queries", e.max_async_queries),
      nv_u64("target_duration_ms", e.target_duration_ms),
      nv_u64("min_duration_ms", e.min_duration_ms),
      nv_u64("max_duration_ms", e.max_duration_ms),
      nv_u64("min_query_count", e.min_query_count),
      nv_u64("max_query_count", e.max_query_count),
      nv_u64("min_sample_count", e.min_sample_count),
      nv_u64("qsl_rng_seed", e.qsl_rng_seed),
      nv_u64("sample_index_rng_seed", e.sample_index_rng_seed),
      nv_u64("schedule_rng_seed", e.schedule_rng_seed),
      nv_u64("accuracy_log_rng_seed", e.accuracy_log_rng_seed),
      nv_dbl("accuracy_log_probability", e.accuracy_log_probability),
      nv_u64("accuracy_log_sampling_target", e.accuracy_log_sampling_target),
      nv_bool("print_timestamps", e.print_timestamps),
      nv_bool("performance_issue_unique", e.performance_issue_unique),
      nv_bool("performance_issue_same", e.performance_issue_same),
      nv_u64("performance_issue_same_index", e.performance_issue_same_index),
      nv_u64("performance_sample_count", e.performance_sample_count),
      nv_u64("accuracy_sample_count", e.accuracy_sample_count),
      nv_bool("sample_concatenate_permutation", e.sample_concatenate_permutation),
      nv_bool("use_token_latencies", e.use_token_latencies),
      nv_i64("server_ttft_latency", e.server_ttft_latency),
      nv_i64("server_tpot_latency", e.server_tpot_latency),
      nv_bool("infer_token_latencies", e.infer_token_latencies),
      nv_i64("token_latency_scaling_factor", e.token_latency_scaling_factor),
  };
}

}  // namespace loadgen

#include "convert.h"

#include <cctype>
#include <cmath>

#include "native/format.h"
#include "native/settings_fields.h"
#include "native/summary_fields.h"

namespace loadgen_addon {

namespace {

Napi::Value required(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) throw Napi::TypeError::New(o.Env(), std::string("native config: missing field ") + key);
  return v;
}

double get_double(const Napi::Object& o, const char* key) {
  Napi::Value v = required(o, key);
  if (!v.IsNumber()) throw Napi::TypeError::New(o.Env(), std::string("native config: ") + key + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(d)) throw Napi::RangeError::New(o.Env(), std::string("native config: ") + key + " must be finite");
  return d;
}

uint64_t get_u64(const Napi::Object& o, const char* key) {
  Napi::Value v = required(o, key);
  if (v.IsBigInt()) {
    bool lossless = false;
    const uint64_t value = v.As<Napi::BigInt>().Uint64Value(&lossless);
    if (!lossless) throw Napi::RangeError::New(o.Env(), std::string("native config: ") + key + " must fit in 64 bits");
    return value;
  }
  const double d = get_double(o, key);
  if (d < 0 || std::floor(d) != d || d > 9007199254740991.0)
    throw Napi::RangeError::New(o.Env(), std::string("native config: ") + key + " must be a non-negative integer");
  return static_cast<uint64_t>(d);
}

int64_t get_i64(const Napi::Object& o, const char* key) {
  const double d = get_double(o, key);
  if (std::floor(d) != d || std::fabs(d) > 9007199254740991.0)
    throw Napi::RangeError::New(o.Env(), std::string("native config: ") + key + " must be an integer");
  return static_cast<int64_t>(d);
}

bool get_bool(const Napi::Object& o, const char* key) {
  Napi::Value v = required(o, key);
  if (!v.IsBoolean()) throw Napi::TypeError::New(o.Env(), std::string("native config: ") + key + " must be a boolean");
  return v.As<Napi::Boolean>().Value();
}

std::string get_string(const Napi::Object& o, const char* key) {
  Napi::Value v = required(o, key);
  if (!v.IsString()) throw Napi::TypeError::New(o.Env(), std::string("native config: ") + key + " must be a string");
  return v.As<Napi::String>().Utf8Value();
}

int get_enum(const Napi::Object& o, const char* key, int max) {
  const int64_t v = get_i64(o, key);
  if (v < 0 || v > max) throw Napi::RangeError::New(o.Env(), std::string("native config: ") + key + " out of range");
  return static_cast<int>(v);
}

static_assert(loadgen::find_run_setting_limit("dispatch")->max == static_cast<int64_t>(loadgen::DispatchMode::Worker),
              "the dispatch limit names every DispatchMode");

// A run setting checked against its limit (settings_fields.h).
int64_t get_limited(const Napi::Object& o, const char* key) {
  const loadgen::RunSettingLimit* limit = loadgen::find_run_setting_limit(key);
  Napi::Value v = required(o, key);
  int64_t value = 0;
  if (v.IsBigInt()) {
    bool lossless = false;
    value = v.As<Napi::BigInt>().Int64Value(&lossless);
    if (!lossless) value = INT64_MAX;  // out of every limit
  } else {
    value = get_i64(o, key);
  }
  if (limit == nullptr || value < limit->min || value > limit->max) {
    throw Napi::RangeError::New(o.Env(), std::string("native config: ") + key + " must be an integer in [" +
                                             std::to_string(limit ? limit->min : 0) + ", " +
                                             std::to_string(limit ? limit->max : 0) + "]");
  }
  return value;
}

// Reads one member of `s` from o[name] as its kind requires.
template <typename S>
void read_member(const Napi::Object& o, const char* name, const loadgen::Member<S>& m, S& s) {
  switch (m.kind) {
    case loadgen::FieldKind::Scenario:
      s.*m.scenario = static_cast<loadgen::Scenario>(get_enum(o, name, loadgen::kMaxScenario));
      break;
    case loadgen::FieldKind::Mode: s.*m.mode = static_cast<loadgen::Mode>(get_enum(o, name, loadgen::kMaxMode)); break;
    case loadgen::FieldKind::Double: s.*m.d = get_double(o, name); break;
    case loadgen::FieldKind::U64: s.*m.u = get_u64(o, name); break;
    case loadgen::FieldKind::I64: s.*m.i = get_i64(o, name); break;
    case loadgen::FieldKind::Int: s.*m.n = static_cast<int>(get_i64(o, name)); break;
    case loadgen::FieldKind::Bool: s.*m.b = get_bool(o, name); break;
    case loadgen::FieldKind::String: s.*m.str = get_string(o, name); break;
    case loadgen::FieldKind::None: break;
  }
}

}  // namespace

loadgen::TestSettings test_settings_from_js(const Napi::Object& o) {
  loadgen::TestSettings s;
  for (const loadgen::TestSettingsField& f : loadgen::kTestSettingsFields) read_member(o, f.name, f.member, s);
  return s;
}

loadgen::SessionConfig session_config_from_js(const Napi::Object& o) {
  loadgen::SessionConfig c;
  c.settings = test_settings_from_js(o);
  c.issue_thread_cpu = static_cast<int>(get_limited(o, "issue_thread_cpu"));
  c.completion_timeout_ms = static_cast<uint64_t>(get_limited(o, "completion_timeout_ms"));
  c.dispatch = static_cast<loadgen::DispatchMode>(get_limited(o, "dispatch"));
  c.dispatch_workers = static_cast<uint64_t>(get_limited(o, "dispatch_workers"));
  c.dispatch_spin_ns = get_limited(o, "dispatch_spin_us") * 1000;
  c.wake_lead_ns = get_limited(o, "wake_lead_us") * 1000;

  c.qsl_total_count = static_cast<uint64_t>(get_limited(o, "qsl_total_sample_count"));
  c.qsl_performance_count = get_u64(o, "qsl_performance_sample_count");
  c.sut_name = get_string(o, "sut_name");
  c.qsl_name = get_string(o, "qsl_name");
  c.complete_on_issue_thread = get_bool(o, "complete_on_issue_thread");
  c.host_loads_samples = get_bool(o, "host_loads_samples");
  c.log.outdir = get_string(o, "log_outdir");
  c.log.prefix = get_string(o, "log_prefix");
  c.log.suffix = get_string(o, "log_suffix");
  c.log.prefix_with_datetime = get_bool(o, "log_prefix_with_datetime");
  c.log.copy_summary_to_stdout = get_bool(o, "log_copy_summary_to_stdout");
  c.log.copy_detail_to_stdout = get_bool(o, "log_copy_detail_to_stdout");
  // Optional: the Chrome trace switch, the report data switch and a shorter
  // issue-thread registration wait (LOADGEN_ISSUE_THREAD_WAIT_MS, tests only).
  if (o.Get("log_enable_trace").IsBoolean()) c.log.enable_trace = get_bool(o, "log_enable_trace");
  if (o.Get("log_report_data").IsBoolean()) c.log.report_data = get_bool(o, "log_report_data");
  if (o.Get("issue_thread_wait_ms").IsNumber()) {
    const int64_t wait_ms = get_i64(o, "issue_thread_wait_ms");
    if (wait_ms >= 0) c.issue_thread_wait_ms = wait_ms;
  }
  // Optional: [{key, text, isError, isWarning}] logged after the detail-log header.
  Napi::Value pre = o.Get("pre_run_messages");
  if (!pre.IsUndefined()) {
    if (!pre.IsArray()) throw Napi::TypeError::New(o.Env(), "native config: pre_run_messages must be an array");
    Napi::Array a = pre.As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); ++i) {
      Napi::Value e = a.Get(i);
      if (!e.IsObject()) throw Napi::TypeError::New(o.Env(), "native config: pre_run_messages[] must be objects");
      Napi::Object m = e.As<Napi::Object>();
      c.pre_run_messages.push_back(
          loadgen::LogMessage{get_string(m, "key"), get_string(m, "text"), get_bool(m, "isError"), get_bool(m, "isWarning")});
    }
  }
  return c;
}

Napi::Value number_or_bigint(Napi::Env env, uint64_t v) {
  if (v <= 9007199254740991ull) return Napi::Number::New(env, static_cast<double>(v));
  return Napi::BigInt::New(env, v);
}

namespace {

std::string camel_case(const std::string& name) {
  std::string out;
  bool upper = false;
  for (char c : name) {
    if (c == '_') {
      upper = true;
    } else {
      out.push_back(upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c);
      upper = false;
    }
  }
  return out;
}

Napi::Value i64(Napi::Env env, int64_t v) { return Napi::Number::New(env, static_cast<double>(v)); }

Napi::Object percentiles(Napi::Env env, const loadgen::PercentileLatency (&values)[6], bool query) {
  Napi::Object o = Napi::Object::New(env);
  for (const auto& p : values) {
    // Keys as the percent number: 50, 90, 95, 97, 99, 99.9.
    const double percent = std::round(p.percentile * 1000.0) / 10.0;
    o.Set(loadgen::format_double(percent), i64(env, query ? p.query_latency : p.sample_latency));
  }
  return o;
}

using loadgen::CompletionErrorCounts;
using loadgen::OverheadStats;
using loadgen::PeakTrial;
using loadgen::RunOutcome;

// The outcome's plain fields under their lib/native/addon.ts names.
constexpr loadgen::NamedMember<RunOutcome> kOutcomeFields[] = {
    {"hasSummary", &RunOutcome::has_summary},
    {"mode", &RunOutcome::mode},
    {"accuracyLogPath", &RunOutcome::accuracy_log_path},
    {"accuracyLogRecords", &RunOutcome::accuracy_log_records},
    {"seriesCount", &RunOutcome::series_count},
    {"testDatetime", &RunOutcome::test_datetime},
    {"summaryPath", &RunOutcome::summary_path},
    {"summaryText", &RunOutcome::summary_text},
    {"detailLogPath", &RunOutcome::detail_log_path},
    {"aborted", &RunOutcome::aborted},
    {"abortReason", &RunOutcome::abort_reason},
    {"interrupted", &RunOutcome::interrupted},
    {"interruptReason", &RunOutcome::interrupt_reason},
    {"errorCount", &RunOutcome::error_count},
    {"warningCount", &RunOutcome::warning_count},
    {"peakQps", &RunOutcome::peak_qps},
};

// outcome.counts.
constexpr loadgen::NamedMember<RunOutcome> kOutcomeCounts[] = {
    {"generatedQueries", &RunOutcome::generated_query_count},
    {"generatedSamples", &RunOutcome::generated_sample_count},
    {"issuedQueries", &RunOutcome::issued_query_count},
    {"issuedSamples", &RunOutcome::issued_sample_count},
    {"completedSamples", &RunOutcome::completed_sample_count},
    {"incompleteSamples", &RunOutcome::incomplete_sample_count},
};

// outcome.completionErrors.
constexpr loadgen::NamedMember<CompletionErrorCounts> kCompletionErrorFields[] = {
    {"invalidIds", &CompletionErrorCounts::invalid_ids},
    {"unissuedIds", &CompletionErrorCounts::unissued_ids},
    {"staleIds", &CompletionErrorCounts::stale_ids},
    {"duplicateIds", &CompletionErrorCounts::duplicate_ids},
    {"firstInvalidId", &CompletionErrorCounts::first_invalid_id},
    {"firstDuplicateId", &CompletionErrorCounts::first_duplicate_id},
    {"firstTokenAfterCompletion", &CompletionErrorCounts::first_token_after_completion},
    {"duplicateFirstTokens", &CompletionErrorCounts::duplicate_first_tokens},
    {"missingFirstTokens", &CompletionErrorCounts::missing_first_tokens},
    {"zeroTokens", &CompletionErrorCounts::zero_tokens},
    {"negativeTokens", &CompletionErrorCounts::negative_tokens},
    {"oneToken", &CompletionErrorCounts::one_token},
};

// outcome.peakTrials[].
constexpr loadgen::NamedMember<PeakTrial> kPeakTrialFields[] = {
    {"targetQps", &PeakTrial::target_qps},
    {"perfConstraintsMet", &PeakTrial::perf_constraints_met},
    {"targetPercentileLatencyNs", &PeakTrial::target_percentile_latency_ns},
    {"queriesIssued", &PeakTrial::queries_issued},
    {"failedSamples", &PeakTrial::failed_samples},
    {"incompleteSamples", &PeakTrial::incomplete_samples},
    {"passed", &PeakTrial::passed},
};

// outcome.overhead.issueLatenessNs / deliveryLagNs.
constexpr loadgen::NamedMember<OverheadStats> kOverheadStatsFields[] = {
    {"count", &OverheadStats::count}, {"p50", &OverheadStats::p50},   {"p90", &OverheadStats::p90},
    {"p99", &OverheadStats::p99},     {"p999", &OverheadStats::p999}, {"max", &OverheadStats::max},
    {"mean", &OverheadStats::mean},
};

}  // namespace

Napi::Array messages_to_js(Napi::Env env, const std::vector<loadgen::LogMessage>& messages) {
  Napi::Array a = Napi::Array::New(env, messages.size());
  for (size_t i = 0; i < messages.size(); ++i) {
    Napi::Object m = Napi::Object::New(env);
    m.Set("key", messages[i].key);
    m.Set("text", messages[i].text);
    m.Set("isError", messages[i].is_error);
    m.Set("isWarning", messages[i].is_warning);
    a.Set(static_cast<uint32_t>(i), m);
  }
  return a;
}

Napi::Object outcome_to_js(Napi::Env env, const loadgen::RunOutcome& r) {
  Napi::Object o = Napi::Object::New(env);
  const loadgen::PerformanceSummary& s = r.summary;
  set_members(env, o, r, kOutcomeFields);
  o.Set("effective", named_values_to_js(env, loadgen::effective_to_named_values(r.effective), NameStyle::CamelCase));
  o.Set("messages", messages_to_js(env, r.messages));
  Napi::Array extra = Napi::Array::New(env, r.extra_invalid_reasons.size());
  for (size_t i = 0; i < r.extra_invalid_reasons.size(); ++i) extra.Set(static_cast<uint32_t>(i), r.extra_invalid_reasons[i]);
  o.Set("extraInvalidReasons", extra);

  Napi::Object counts = Napi::Object::New(env);
  set_members(env, counts, r, kOutcomeCounts);
  o.Set("counts", counts);
  Napi::Object ce = Napi::Object::New(env);
  set_members(env, ce, r.completion_errors, kCompletionErrorFields);
  o.Set("completionErrors", ce);
  Napi::Object failed = Napi::Object::New(env);
  failed.Set("total", static_cast<double>(r.failed_samples.total));
  Napi::Object by_kind = Napi::Object::New(env);
  for (size_t i = 0; i < loadgen::kFailureKindCount; ++i) {
    by_kind.Set(loadgen::kFailureKindNames[i], static_cast<double>(r.failed_samples.by_kind[i]));
  }
  failed.Set("byKind", by_kind);
  o.Set("failedSamples", failed);

  Napi::Array trials = Napi::Array::New(env, r.peak_trials.size());
  for (size_t i = 0; i < r.peak_trials.size(); ++i) {
    Napi::Object t = Napi::Object::New(env);
    set_members(env, t, r.peak_trials[i], kPeakTrialFields);
    trials.Set(static_cast<uint32_t>(i), t);
  }
  o.Set("peakTrials", trials);

  if (r.overhead.present) {
    auto stats = [&](const loadgen::OverheadStats& st) {
      Napi::Object x = Napi::Object::New(env);
      set_members(env, x, st, kOverheadStatsFields);
      return x;
    };
    Napi::Object overhead = Napi::Object::New(env);
    overhead.Set("issueLatenessNs", stats(r.overhead.issue_lateness));
    overhead.Set("deliveryLagNs", r.overhead.has_delivery_lag ? Napi::Value(stats(r.overhead.delivery_lag)) : env.Null());
    o.Set("overhead", overhead);
  }

  if (r.has_summary) {
    Napi::Object sum = Napi::Object::New(env);
    // Token statistics (spec/40 §3, §6); only the scenario's rates are meaningful.
    const bool tokens = s.settings.use_token_latencies || s.settings.infer_token_latencies;
    Napi::Object t = Napi::Object::New(env);
    t.Set("useTokenLatencies", s.settings.use_token_latencies);
    t.Set("inferTokenLatencies", s.settings.infer_token_latencies);
    for (const loadgen::SummaryField& f : loadgen::kSummaryFields) {
      if (f.outcome == loadgen::OutcomeGroup::None || (f.outcome == loadgen::OutcomeGroup::Tokens && !tokens)) continue;
      Napi::Object& into = f.outcome == loadgen::OutcomeGroup::Summary ? sum : t;
      if (f.percentile != nullptr) {
        into.Set(f.outcome_name, i64(env, (s.*f.percentile).sample_latency));
        if (f.outcome_query_name != nullptr) into.Set(f.outcome_query_name, i64(env, (s.*f.percentile).query_latency));
      } else if (f.percentiles != nullptr) {
        into.Set(f.outcome_name, percentiles(env, s.*f.percentiles, false));
        if (f.outcome_query_name != nullptr) into.Set(f.outcome_query_name, percentiles(env, s.*f.percentiles, true));
      } else {
        into.Set(f.outcome_name, member_to_js(env, s, f.scalar));
      }
    }
    // The reported flag needs both counts met (results.h).
    sum.Set("minQueriesMet", s.min_queries_met && s.min_samples_met);
    sum.Set("targetPercentile", s.target_latency_percentile.percentile);
    sum.Set("maxLatencySeconds", s.raw.max_latency_s);
    sum.Set("finalQueryScheduledTimeSeconds", s.raw.final_query_scheduled_time_s);
    sum.Set("finalQueryIssuedTimeSeconds", s.raw.final_query_issued_time_s);
    sum.Set("finalQueryAllSamplesDoneTimeSeconds", s.raw.final_query_all_samples_done_time_s);
    if (tokens) sum.Set("tokens", t);
    o.Set("summary", sum);
  }
  return o;
}

Napi::Object named_values_to_js(Napi::Env env, const std::vector<loadgen::NamedValue>& values, NameStyle style) {
  Napi::Object o = Napi::Object::New(env);
  for (const loadgen::NamedValue& v : values) {
    const std::string name = style == NameStyle::CamelCase ? camel_case(v.name) : v.name;
    const bool seed = v.name.size() >= 8 && v.name.compare(v.name.size() - 8, 8, "rng_seed") == 0;
    switch (v.kind) {
      case loadgen::NamedValue::U64:
        o.Set(name, seed ? Napi::Value(Napi::BigInt::New(env, v.u)) : number_or_bigint(env, v.u));
        break;
      case loadgen::NamedValue::I64: o.Set(name, Napi::Number::New(env, static_cast<double>(v.i))); break;
      case loadgen::NamedValue::Double: o.Set(name, v.d); break;
      case loadgen::NamedValue::Bool: o.Set(name, v.b); break;
      case loadgen::NamedValue::String: o.Set(name, v.s); break;
    }
  }
  return o;
}

}  // namespace loadgen_addon

// The conformance surface (lib/native/internals.ts NativeConformance). Every argument
// from JS is validated here and rejected with a TypeError/RangeError naming
// it; core exceptions become JS errors, so bad input never crashes the host.
#include "bindings/conformance.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bindings/conformance_io.h"
#include "bindings/convert.h"
#include "bindings/errors.h"
#include "native/config.h"
#include "native/early_stopping.h"
#include "native/results.h"
#include "native/rng.h"
#include "native/settings.h"
#include "native/settings_fields.h"
#include "native/settings_log.h"
#include "native/summary_fields.h"
#include "native/test_plan.h"
#include "native/trace.h"

namespace loadgen_addon {
namespace {

using namespace conformance_io;  // NOLINT: the surface's own readers and builders

// ---- RNG primitives ----------------------------------------------------------------

Napi::Value Mt19937Outputs(const Napi::CallbackInfo& info) {
  const char* fn = "mt19937Outputs";
  const uint64_t seed = read_seed(info, 0, fn, "seed");
  const uint64_t count = read_count(info, 1, fn, "count", 0, kMaxDraws);
  return guarded(info, fn, [&]() -> Napi::Value {
    loadgen::Mt19937 g(seed);
    Napi::Float64Array out = Napi::Float64Array::New(info.Env(), static_cast<size_t>(count));
    for (uint64_t i = 0; i < count; ++i) out[i] = static_cast<double>(g());
    return out;
  });
}

Napi::Value UniformReal(const Napi::CallbackInfo& info) {
  const char* fn = "uniformReal";
  const uint64_t seed = read_seed(info, 0, fn, "seed");
  const uint64_t count = read_count(info, 1, fn, "count", 0, kMaxDraws);
  return guarded(info, fn, [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    loadgen::Mt19937 g(seed);
    Napi::Float64Array values = Napi::Float64Array::New(env, static_cast<size_t>(count));
    for (uint64_t i = 0; i < count; ++i) values[i] = loadgen::uniform_real01(g);
    Napi::Object o = Napi::Object::New(env);
    o.Set("values", values);
    o.Set("engineDraws", u64(env, draws_since_seed(seed, g, 2 * count + 64)));
    return o;
  });
}

Napi::Value ServerInterarrival(const Napi::CallbackInfo& info) {
  const char* fn = "serverInterarrival";
  const uint64_t seed = read_seed(info, 0, fn, "seed");
  const double qps = read_positive(info, 1, fn, "qps");
  const uint64_t count = read_count(info, 2, fn, "count", 0, kMaxDraws);
  return guarded(info, fn, [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    loadgen::Mt19937 schedule(seed);
    loadgen::Mt19937 raw(seed);  // a second engine: the exponential draws themselves
    Napi::Float64Array delta = Napi::Float64Array::New(env, static_cast<size_t>(count));
    Napi::Float64Array seconds = Napi::Float64Array::New(env, static_cast<size_t>(count));
    for (uint64_t i = 0; i < count; ++i) {
      delta[i] = static_cast<double>(loadgen::seconds_to_ns(loadgen::exponential(schedule, qps)));
      seconds[i] = loadgen::exponential(raw, qps);
    }
    Napi::Object o = Napi::Object::New(env);
    o.Set("deltaNs", delta);
    o.Set("expSeconds", seconds);
    return o;
  });
}

Napi::Value FixedPeriodNs(const Napi::CallbackInfo& info) {
  const double qps = read_positive(info, 0, "fixedPeriodNs", "qps");
  // (1.0 / qps) * 1e9 truncated, as the non-Server schedulers compute it.
  return i64(info.Env(), loadgen::seconds_to_ns(1.0 / qps));
}

Napi::Value UniformInt(const Napi::CallbackInfo& info) {
  const char* fn = "uniformInt";
  const uint64_t seed = read_seed(info, 0, fn, "seed");
  // uniform_int needs b - a < 2^32 - 1.
  const uint64_t n = read_count(info, 1, fn, "n", 1, 0xFFFFFFFFull);
  const uint64_t count = read_count(info, 2, fn, "count", 0, kMaxDraws);
  return guarded(info, fn, [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    loadgen::Mt19937 g(seed);
    Napi::Float64Array values = Napi::Float64Array::New(env, static_cast<size_t>(count));
    for (uint64_t i = 0; i < count; ++i) values[i] = static_cast<double>(loadgen::uniform_int(g, 0, n - 1));
    Napi::Object o = Napi::Object::New(env);
    o.Set("values", values);
    // Rejections are rare; 64 draws per value is far beyond any real stream.
    o.Set("engineDraws", u64(env, draws_since_seed(seed, g, 64 * count + 64)));
    return o;
  });
}

Napi::Value Shuffle(const Napi::CallbackInfo& info) {
  const char* fn = "shuffle";
  const uint64_t seed = read_seed(info, 0, fn, "seed");
  const uint64_t n = read_count(info, 1, fn, "n", 0, kMaxShuffle);
  return guarded(info, fn, [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    // The element type does not change the swaps; 32 bits are enough for n <= 2^26.
    std::vector<uint32_t> v(static_cast<size_t>(n));
    for (uint64_t i = 0; i < n; ++i) v[i] = static_cast<uint32_t>(i);
    loadgen::Mt19937 g(seed);
    loadgen::shuffle(v.data(), v.size(), g);
    const uint64_t draws = draws_since_seed(seed, g, 64 * n + 64);
    Napi::Object o = Napi::Object::New(env);
    o.Set("result", to_u32(env, v));
    o.Set("engineDraws", u64(env, draws));
    o.Set("nextEngineOutput", static_cast<double>(g()));
    return o;
  });
}

// ---- settings and traces -----------------------------------------------------------

Napi::Value DeriveEffective(const Napi::CallbackInfo& info) {
  const char* fn = "deriveEffective";
  const loadgen::TestSettings settings = read_settings(info, 0, fn);
  const QslCounts qsl = read_qsl(info, 1, fn);
  if (!arg(info, 3).IsBoolean()) type_error(info.Env(), fn, "applyTest05 must be a boolean");
  const bool test05 = arg(info, 3).As<Napi::Boolean>().Value();
  return guarded(info, fn, [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    std::vector<loadgen::LogMessage> messages;
    const loadgen::TestSettings requested = test05 ? loadgen::apply_test05(settings, &messages) : settings;
    const loadgen::EffectiveSettings e = loadgen::derive_effective(requested, qsl.total, qsl.performance, &messages);
    Napi::Object o = Napi::Object::New(env);
    o.Set("effective", effective_record(env, e));
    o.Set("loggedErrors", logged_errors(env, messages));
    return o;
  });
}

Napi::Object trace_queries(Napi::Env env, const loadgen::QueryTrace& t) {
  Napi::Object q = Napi::Object::New(env);
  q.Set("generatedQueryCount", u64(env, t.query_count()));
  q.Set("generatedSamplesPerQuery", u64(env, t.samples_per_query));
  q.Set("generatedQueryDurationNs", i64(env, t.generated_query_duration_ns));
  q.Set("firstQuerySeqId", u64(env, t.first_query_id));
  q.Set("firstSampleSeqId", u64(env, t.first_sample_id));
  q.Set("samplesPerQuery", u64(env, t.samples_per_query));
  q.Set("sampleIndices", to_u32(env, t.sample_index));
  q.Set("scheduledNs", to_f64(env, t.scheduled_delta_ns));
  return q;
}

Napi::Value GenerateTrace(const Napi::CallbackInfo& info) {
  const char* fn = "generateTrace";
  const loadgen::TestSettings settings = read_settings(info, 0, fn);
  const QslCounts qsl = read_qsl(info, 1, fn);
  return guarded(info, fn, [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    const loadgen::TestPlan plan = loadgen::plan_test(settings, qsl.total, qsl.performance);
    Napi::Array phases = Napi::Array::New(env, plan.phases.size());
    for (size_t p = 0; p < plan.phases.size(); ++p) {
      const loadgen::PlannedPhase& phase = plan.phases[p];
      Napi::Array calls = Napi::Array::New(env, phase.rounds.size());
      for (size_t r = 0; r < phase.rounds.size(); ++r) {
        const loadgen::PlannedRound& round = phase.rounds[r];
        Napi::Object call = Napi::Object::New(env);
        call.Set("loaded", to_u32(env, round.set.indices));
        call.Set("sampleDistributionEnd", u64(env, round.set.distribution_end));
        call.Set("queries", trace_queries(env, round.trace));
        calls.Set(static_cast<uint32_t>(r), call);
      }
      Napi::Object o = Napi::Object::New(env);
      o.Set("phase", phase_name(phase.kind));
      o.Set("loadableSetCount", u64(env, phase.loadable_set_count));
      o.Set("loadCalls", calls);
      phases.Set(static_cast<uint32_t>(p), o);
    }
    Napi::Object o = Napi::Object::New(env);
    o.Set("effective", effective_record(env, plan.effective));
    o.Set("phases", phases);
    o.Set("loggedErrors", logged_errors(env, plan.messages));
    return o;
  });
}

Napi::Value AccuracyLogPrediction(const Napi::CallbackInfo& info) {
  const char* fn = "accuracyLogPrediction";
  const loadgen::TestSettings settings = read_settings(info, 0, fn);
  const QslCounts qsl = read_qsl(info, 1, fn);
  return guarded(info, fn, [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    loadgen::GenerateOptions options;
    options.keep_accuracy_log_values = true;
    const loadgen::TestPlan plan = loadgen::plan_test(settings, qsl.total, qsl.performance, options);
    // Offset and probability are per series, identical in every round
    // (accuracy rounds report them too, though they log every sample).
    const double offset = loadgen::accuracy_log_offset(plan.effective);
    const double probability = loadgen::accuracy_log_probability(plan.effective);
    Napi::Array rounds = Napi::Array::New(env);
    uint32_t n = 0;
    for (const loadgen::PlannedPhase& phase : plan.phases) {
      for (const loadgen::PlannedRound& round : phase.rounds) {
        const loadgen::QueryTrace& t = round.trace;
        std::vector<double> seq_ids;
        std::vector<uint32_t> qsl_idx;
        for (size_t i = 0; i < t.accuracy_log_sampled.size(); ++i) {
          if (!t.accuracy_log_sampled[i]) continue;
          seq_ids.push_back(static_cast<double>(t.first_sample_id + i));
          qsl_idx.push_back(t.sample_index[i]);
        }
        Napi::Array first = Napi::Array::New(env);
        const size_t first_count = std::min<size_t>(8, t.accuracy_log_value.size());
        for (size_t i = 0; i < first_count; ++i) first.Set(static_cast<uint32_t>(i), t.accuracy_log_value[i]);
        Napi::Object o = Napi::Object::New(env);
        o.Set("phase", phase_name(phase.kind));
        o.Set("firstSampleSeqId", u64(env, t.first_sample_id));
        o.Set("generatedSampleCount", u64(env, t.sample_count()));
        o.Set("offset", offset);
        o.Set("effectiveProbability", probability);
        o.Set("firstPerSampleValues", first);
        o.Set("loggedSampleSeqIds", to_f64(env, seq_ids));
        o.Set("loggedQslIdx", to_u32(env, qsl_idx));
        rounds.Set(n++, o);
      }
    }
    return rounds;
  });
}

// ---- results -----------------------------------------------------------------------------

Napi::Object percentile_object(Napi::Env env, const loadgen::PercentileLatency& p, bool with_query) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("percentile", p.percentile);
  o.Set("sample_latency", i64(env, p.sample_latency));
  if (with_query) o.Set("query_latency", i64(env, p.query_latency));
  return o;
}

Napi::Array percentile_list(Napi::Env env, const loadgen::PercentileLatency (&list)[6], bool with_query) {
  Napi::Array a = Napi::Array::New(env, 6);
  for (uint32_t i = 0; i < 6; ++i) a.Set(i, percentile_object(env, list[i], with_query));
  return a;
}

// The summary's fields under golden results_math "outputs" names: the rates of
// the scenario only, token statistics only with use_token_latencies.
Napi::Object summary_outputs(Napi::Env env, const loadgen::PerformanceSummary& s) {
  Napi::Object o = Napi::Object::New(env);
  for (const loadgen::SummaryField& f : loadgen::kSummaryFields) {
    if (!loadgen::in_golden_outputs(f, s)) continue;
    if (f.percentile != nullptr) {
      o.Set(f.name, percentile_object(env, s.*f.percentile, f.with_query));
    } else if (f.percentiles != nullptr) {
      o.Set(f.name, percentile_list(env, s.*f.percentiles, f.with_query));
    } else {
      o.Set(f.name, member_to_js(env, s, f.scalar));
    }
  }
  return o;
}

Napi::Value Summarize(const Napi::CallbackInfo& info) {
  const char* fn = "summarize";
  Napi::Env env = info.Env();
  const loadgen::TestSettings settings = read_settings(info, 0, fn);
  const QslCounts qsl = read_qsl(info, 1, fn);
  Napi::Value input_value = arg(info, 3);
  if (!input_value.IsObject() || input_value.IsArray()) type_error(env, fn, "input must be an object");
  Napi::Object input = input_value.As<Napi::Object>();
  if (!arg(info, 4).IsString()) type_error(env, fn, "sutName must be a string");
  const std::string sut_name = arg(info, 4).As<Napi::String>().Utf8Value();

  loadgen::SeriesResult raw;
  raw.sample_latencies_ns = read_int_array(env, input.Get("sampleLatenciesNs"), fn, "input.sampleLatenciesNs");
  auto optional_array = [&](const char* key, std::vector<int64_t>* out) {
    Napi::Value v = input.Get(key);
    if (!v.IsUndefined() && !v.IsNull()) *out = read_int_array(env, v, fn, (std::string("input.") + key).c_str());
  };
  optional_array("queryLatenciesNs", &raw.query_latencies_ns);
  optional_array("tokensPerSample", &raw.tokens_per_sample);
  optional_array("firstTokenLatenciesNs", &raw.first_token_latencies_ns);
  optional_array("timePerOutputTokenNs", &raw.time_per_output_token_ns);
  const double issued = read_field_number(env, input, fn, "queriesIssued");
  if (issued < 0 || std::floor(issued) != issued || issued > kMaxSafeInteger)
    range_error(env, fn, "input.queriesIssued must be a non-negative integer");
  raw.queries_issued = static_cast<uint64_t>(issued);
  raw.max_latency_s = read_field_number(env, input, fn, "maxLatencyS");
  raw.final_query_scheduled_time_s = read_field_number(env, input, fn, "finalQueryScheduledTimeS");
  raw.final_query_issued_time_s = read_field_number(env, input, fn, "finalQueryIssuedTimeS");
  raw.final_query_all_samples_done_time_s = read_field_number(env, input, fn, "finalQueryAllSamplesDoneTimeS");

  return guarded(info, fn, [&]() -> Napi::Value {
    const loadgen::EffectiveSettings e = loadgen::derive_effective(settings, qsl.total, qsl.performance, nullptr);
    const loadgen::PerformanceSummary summary = loadgen::summarize(e, sut_name, std::move(raw));
    Napi::Object o = Napi::Object::New(env);
    o.Set("outputs", summary_outputs(env, summary));
    o.Set("summaryText",
          loadgen::format_summary_results(summary, settings.mode) + loadgen::format_summary_footer(0, 0));
    const auto entries = loadgen::detail_result_entries(summary, 0);
    Napi::Array detail = Napi::Array::New(env, entries.size());
    for (size_t i = 0; i < entries.size(); ++i)
      detail.Set(static_cast<uint32_t>(i), log_entry(env, entries[i].first, entries[i].second));
    o.Set("detail", detail);
    return o;
  });
}

// ---- early stopping -------------------------------------------------------------------

Napi::Value EarlyStoppingMinPassing(const Napi::CallbackInfo& info) {
  const char* fn = "earlyStoppingMinPassing";
  const uint64_t t = read_count(info, 0, fn, "t", 0, kMaxEarlyStoppingCount);
  const double p = read_percentile(info, 1, fn, "p");
  return guarded(info, fn, [&]() -> Napi::Value {
    loadgen::MinPassingFinder finder;  // fresh: what a Server evaluation does
    return i64(info.Env(), finder.min_passing(static_cast<int64_t>(t), p));
  });
}

Napi::Value EarlyStoppingEstimate(const Napi::CallbackInfo& info) {
  const char* fn = "earlyStoppingEstimate";
  Napi::Env env = info.Env();
  if (!arg(info, 0).IsString()) type_error(env, fn, "scenario must be a string");
  const std::string scenario_name = arg(info, 0).As<Napi::String>().Utf8Value();
  loadgen::TestSettings settings;
  if (scenario_name == "SingleStream") {
    settings.scenario = loadgen::Scenario::SingleStream;
  } else if (scenario_name == "MultiStream") {
    settings.scenario = loadgen::Scenario::MultiStream;
  } else {
    range_error(env, fn, "scenario must be 'SingleStream' or 'MultiStream'");
  }
  const double p = read_percentile(info, 1, fn, "p");
  const uint64_t n = read_count(info, 2, fn, "n", 0, kMaxEstimateQueries);
  return guarded(info, fn, [&]() -> Napi::Value {
    const bool single = settings.scenario == loadgen::Scenario::SingleStream;
    settings.single_stream_target_latency_percentile = p;
    settings.multi_stream_target_latency_percentile = p;
    // The QSL sizes do not enter the statistics.
    const loadgen::EffectiveSettings e = loadgen::derive_effective(settings, 1024, 1024, nullptr);
    // Latencies 0..n-1, so an estimate's value is its rank in the sorted array.
    loadgen::SeriesResult raw;
    raw.sample_latencies_ns.resize(static_cast<size_t>(n));
    for (uint64_t i = 0; i < n; ++i) raw.sample_latencies_ns[i] = static_cast<int64_t>(i);
    if (!single) raw.query_latencies_ns = raw.sample_latencies_ns;
    raw.queries_issued = n;
    const loadgen::PerformanceSummary s = loadgen::summarize(e, "", std::move(raw));

    loadgen::MinPassingFinder finder;
    const int64_t min_queries = finder.min_passing(1, p) + 1;
    loadgen::MinPassingFinder finder99;
    const bool enough_for_p99 = static_cast<int64_t>(n) >= finder99.min_passing(1, 0.99) + 1;

    Napi::Object o = Napi::Object::New(env);
    o.Set("earlyStoppingMet", s.early_stopping_met);
    o.Set("minQueriesNeeded", i64(env, min_queries));
    if (s.early_stopping_met) {
      o.Set("rankIndex", i64(env, single ? s.early_stopping_latency_ss : s.early_stopping_latency_ms));
    } else {
      o.Set("rankIndex", env.Null());
    }
    if (single && s.early_stopping_met && enough_for_p99) {
      o.Set("rankIndexP99", i64(env, s.early_stopping_latency_ms));
    } else {
      o.Set("rankIndexP99", env.Null());
    }
    o.Set("recommendation", s.early_stopping_recommendation);
    return o;
  });
}

Napi::Value EarlyStoppingOdds(const Napi::CallbackInfo& info) {
  const char* fn = "earlyStoppingOdds";
  const uint64_t h = read_count(info, 0, fn, "h", 1, kMaxEarlyStoppingCount);
  const uint64_t t = read_count(info, 1, fn, "t", 0, kMaxEarlyStoppingCount);
  const double p = read_percentile(info, 2, fn, "p");
  return Napi::Number::New(info.Env(), loadgen::early_stopping_odds(static_cast<int64_t>(h), static_cast<int64_t>(t), p,
                                                                   loadgen::kEarlyStoppingTolerance));
}

Napi::Value EarlyStoppingLbeta(const Napi::CallbackInfo& info) {
  const char* fn = "earlyStoppingLbeta";
  // a + b is formed in int64; lgamma needs positive arguments.
  const uint64_t a = read_count(info, 0, fn, "a", 1, uint64_t{1} << 52);
  const uint64_t b = read_count(info, 1, fn, "b", 1, uint64_t{1} << 52);
  return Napi::Number::New(info.Env(), loadgen::early_stopping_lbeta(static_cast<int64_t>(a), static_cast<int64_t>(b)));
}

// ---- config derivation ------------------------------------------------------------------

// Reads an optional string field: absent -> false; null -> true with
// *missing set; a string -> true with *text set.
bool read_conf_text(Napi::Env env, const Napi::Object& o, const char* fn, const char* key, bool required,
                    std::string* text, bool* missing) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) {
    if (required) type_error(env, fn, std::string("input.") + key + " must be a string or null");
    return false;
  }
  *missing = v.IsNull();
  if (*missing) return true;
  if (!v.IsString()) type_error(env, fn, std::string("input.") + key + " must be a string or null");
  *text = v.As<Napi::String>().Utf8Value();
  return true;
}

// A user.conf that cannot be opened. ConfigLoader only takes that path
// through a real file, so a path inside a directory that does not exist is
// used and the message is rewritten to name "user.conf", as the golden case
// (a relative user.conf path) does.
int from_missing_user_conf(loadgen::ConfigLoader& loader, loadgen::TestSettings& settings, const std::string& model,
                           const std::string& scenario, std::vector<loadgen::LogMessage>* messages) {
  namespace fs = std::filesystem;
  fs::path dir;
  for (unsigned k = 0;; ++k) {
    dir = fs::temp_directory_path() / ("loadgen-conformance-missing-" + std::to_string(k));
    std::error_code ec;
    if (!fs::exists(dir, ec) && !ec) break;
    if (k > 1000) throw std::runtime_error("no unused temporary path for a missing user.conf");
  }
  const std::string path = (dir / "user.conf").string();
  std::vector<loadgen::LogMessage> local;
  const int rc = loader.from_config_file(settings, path, model, scenario, loadgen::kConfTypeUser, &local);
  for (auto& m : local) {
    if (m.text == "can't open file " + path) m.text = "can't open file user.conf";
    messages->push_back(std::move(m));
  }
  return rc;
}

Napi::Array entries_to_js(Napi::Env env, const loadgen::LogEntries& entries) {
  Napi::Array a = Napi::Array::New(env, entries.size());
  for (size_t i = 0; i < entries.size(); ++i)
    a.Set(static_cast<uint32_t>(i), log_entry(env, entries[i].first, entries[i].second));
  return a;
}

// TestSettings under the reference field names: enums as names, seeds as
// BigInt, other uint64 as numbers when safe.
Napi::Object settings_record(Napi::Env env, const loadgen::TestSettings& s) {
  return loadgen_addon::named_values_to_js(env, loadgen::settings_to_named_values(s),
                                           loadgen_addon::NameStyle::Reference);
}

Napi::Value ConfigDerive(const Napi::CallbackInfo& info) {
  const char* fn = "configDerive";
  Napi::Env env = info.Env();
  Napi::Value input_value = arg(info, 0);
  if (!input_value.IsObject() || input_value.IsArray()) type_error(env, fn, "input must be an object");
  Napi::Object input = input_value.As<Napi::Object>();

  std::string builtin_text;
  bool builtin_is_null = false;
  const bool custom_builtin = read_conf_text(env, input, fn, "mlperfConfText", false, &builtin_text, &builtin_is_null);
  if (custom_builtin && builtin_is_null) type_error(env, fn, "input.mlperfConfText must be a string when present");
  std::string user_text, second_text;
  bool user_missing = false, second_missing = false;
  read_conf_text(env, input, fn, "userConfText", true, &user_text, &user_missing);
  const bool second_call = read_conf_text(env, input, fn, "secondUserConfText", false, &second_text, &second_missing);
  auto string_field = [&](const char* key) {
    Napi::Value v = input.Get(key);
    if (!v.IsString()) type_error(env, fn, std::string("input.") + key + " must be a string");
    return v.As<Napi::String>().Utf8Value();
  };
  const std::string model = string_field("model");
  const std::string scenario = string_field("scenario");
  Napi::Value initial = input.Get("initial");
  if (!initial.IsObject() || initial.IsArray()) type_error(env, fn, "input.initial must be an object");
  loadgen::TestSettings settings = test_settings_from_js(initial.As<Napi::Object>());
  const double qsl_max = static_cast<double>(loadgen::find_run_setting_limit("qsl_total_sample_count")->max);
  auto qsl_field = [&](const char* key, double lo) {
    const double d = read_field_number(env, input, fn, key);
    if (d < lo || d > qsl_max || std::floor(d) != d)
      range_error(env, fn, std::string("input.") + key + " must be an integer in [" + (lo > 0 ? "1" : "0") + ", 2^32-1]");
    return static_cast<uint64_t>(d);
  };
  const uint64_t qsl_total = qsl_field("qslTotal", 1);
  const uint64_t qsl_performance = qsl_field("qslPerformance", 0);

  return guarded(info, fn, [&]() -> Napi::Value {
    // A fresh loader per case: each golden case is a fresh process.
    loadgen::ConfigLoader loader = custom_builtin ? loadgen::ConfigLoader(builtin_text) : loadgen::ConfigLoader();
    std::vector<loadgen::LogMessage> messages;
    auto call = [&](bool missing, const std::string& text) {
      return missing ? from_missing_user_conf(loader, settings, model, scenario, &messages)
                     : loader.from_config_text(settings, text, "user.conf", model, scenario, loadgen::kConfTypeUser,
                                               &messages);
    };
    const int rc = call(user_missing, user_text);
    int second_rc = 0;
    if (second_call) second_rc = call(second_missing, second_text);
    // FromConfig does not apply test05; StartTest would, later.
    const loadgen::EffectiveSettings e = loadgen::derive_effective(settings, qsl_total, qsl_performance, &messages);

    Napi::Object o = Napi::Object::New(env);
    o.Set("returnCode", rc);
    if (second_call) o.Set("secondReturnCode", second_rc);
    o.Set("settingsAfter", settings_record(env, settings));
    o.Set("effective", effective_record(env, e));
    o.Set("loggedRequested", entries_to_js(env, loadgen::requested_settings_entries(settings)));
    o.Set("loggedEffective", entries_to_js(env, loadgen::effective_settings_entries(e)));
    o.Set("loggedErrors", logged_errors(env, messages));
    return o;
  });
}

}  // namespace

void register_conformance(Napi::Env env, Napi::Object internals) {
  Napi::Object c = Napi::Object::New(env);
  auto add = [&](const char* name, Napi::Function::Callback cb) { c.Set(name, Napi::Function::New(env, cb, name)); };
  add("mt19937Outputs", Mt19937Outputs);
  add("uniformReal", UniformReal);
  add("serverInterarrival", ServerInterarrival);
  add("fixedPeriodNs", FixedPeriodNs);
  add("uniformInt", UniformInt);
  add("shuffle", Shuffle);
  add("deriveEffective", DeriveEffective);
  add("generateTrace", GenerateTrace);
  add("accuracyLogPrediction", AccuracyLogPrediction);
  add("summarize", Summarize);
  add("earlyStoppingMinPassing", EarlyStoppingMinPassing);
  add("earlyStoppingEstimate", EarlyStoppingEstimate);
  add("earlyStoppingOdds", EarlyStoppingOdds);
  add("earlyStoppingLbeta", EarlyStoppingLbeta);
  add("configDerive", ConfigDerive);
  internals.Set("conformance", c);
}

}  // namespace loadgen_addon

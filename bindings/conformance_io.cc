// The conformance surface's argument readers, value builders and error mapping.
#include "bindings/conformance_io.h"

#include <cmath>
#include <new>
#include <stdexcept>

#include "bindings/convert.h"
#include "bindings/errors.h"
#include "native/settings_fields.h"
#include "native/settings_log.h"

namespace loadgen_addon {
namespace conformance_io {

// ---- argument readers ------------------------------------------------------

[[noreturn]] void type_error(Napi::Env env, const std::string& fn, const std::string& what) {
  throw Napi::TypeError::New(env, "conformance." + fn + ": " + what);
}

[[noreturn]] void range_error(Napi::Env env, const std::string& fn, const std::string& what) {
  throw Napi::RangeError::New(env, "conformance." + fn + ": " + what);
}

Napi::Value arg(const Napi::CallbackInfo& info, size_t i) { return i < info.Length() ? info[i] : info.Env().Undefined(); }

// A 64-bit seed: a BigInt in [0, 2^64) or a safe non-negative integer.
uint64_t read_seed(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name) {
  Napi::Value v = arg(info, i);
  if (v.IsBigInt()) {
    bool lossless = false;
    const uint64_t seed = v.As<Napi::BigInt>().Uint64Value(&lossless);
    if (!lossless) range_error(info.Env(), fn, std::string(name) + " must be a BigInt in [0, 2^64)");
    return seed;
  }
  if (v.IsNumber()) {
    const double d = v.As<Napi::Number>().DoubleValue();
    if (!(d >= 0) || d > kMaxSafeInteger || std::floor(d) != d)
      range_error(info.Env(), fn, std::string(name) + " must be a non-negative integer");
    return static_cast<uint64_t>(d);
  }
  type_error(info.Env(), fn, std::string(name) + " must be a bigint");
}

// An integer number in [lo, hi].
uint64_t read_count(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name, uint64_t lo,
                    uint64_t hi) {
  Napi::Value v = arg(info, i);
  if (!v.IsNumber()) type_error(info.Env(), fn, std::string(name) + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= static_cast<double>(lo) && d <= static_cast<double>(hi)) || std::floor(d) != d)
    range_error(info.Env(), fn,
                std::string(name) + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return static_cast<uint64_t>(d);
}

double read_number(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name) {
  Napi::Value v = arg(info, i);
  if (!v.IsNumber()) type_error(info.Env(), fn, std::string(name) + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(d)) range_error(info.Env(), fn, std::string(name) + " must be finite");
  return d;
}

double read_positive(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name) {
  const double d = read_number(info, i, fn, name);
  if (!(d > 0)) range_error(info.Env(), fn, std::string(name) + " must be > 0");
  return d;
}

// A latency percentile: strictly between 0 and 1 (log(p) and log(1 - p) are used).
double read_percentile(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name) {
  const double p = read_number(info, i, fn, name);
  if (!(p > 0 && p < 1)) range_error(info.Env(), fn, std::string(name) + " must be in (0, 1)");
  return p;
}

loadgen::TestSettings read_settings(const Napi::CallbackInfo& info, size_t i, const char* fn) {
  Napi::Value v = arg(info, i);
  if (!v.IsObject() || v.IsArray()) type_error(info.Env(), fn, "settings must be an object");
  return test_settings_from_js(v.As<Napi::Object>());
}

QslCounts read_qsl(const Napi::CallbackInfo& info, size_t i, const char* fn) {
  QslCounts q;
  const loadgen::RunSettingLimit& total = *loadgen::find_run_setting_limit("qsl_total_sample_count");
  q.total = read_count(info, i, fn, "qslTotal", total.min, total.max);
  q.performance = read_count(info, i + 1, fn, "qslPerformance", 0, total.max);
  return q;
}

// An integer array (Float64Array, or an array of numbers); each element a safe integer.
std::vector<int64_t> read_int_array(Napi::Env env, Napi::Value v, const char* fn, const char* name) {
  std::vector<int64_t> out;
  auto take = [&](double d, size_t index) {
    if (!std::isfinite(d) || std::floor(d) != d || std::fabs(d) > kMaxSafeInteger)
      range_error(env, fn, std::string(name) + "[" + std::to_string(index) + "] must be a safe integer");
    out.push_back(static_cast<int64_t>(d));
  };
  if (v.IsTypedArray()) {
    Napi::TypedArray t = v.As<Napi::TypedArray>();
    if (t.TypedArrayType() != napi_float64_array) type_error(env, fn, std::string(name) + " must be a Float64Array or an array of numbers");
    Napi::Float64Array a = v.As<Napi::Float64Array>();
    out.reserve(a.ElementLength());
    for (size_t k = 0; k < a.ElementLength(); ++k) take(a[k], k);
    return out;
  }
  if (v.IsArray()) {
    Napi::Array a = v.As<Napi::Array>();
    const uint32_t n = a.Length();
    out.reserve(n);
    for (uint32_t k = 0; k < n; ++k) {
      Napi::Value e = a.Get(k);
      if (!e.IsNumber()) type_error(env, fn, std::string(name) + "[" + std::to_string(k) + "] must be a number");
      take(e.As<Napi::Number>().DoubleValue(), k);
    }
    return out;
  }
  type_error(env, fn, std::string(name) + " must be a Float64Array or an array of numbers");
}

double read_field_number(Napi::Env env, const Napi::Object& o, const char* fn, const char* name) {
  Napi::Value v = o.Get(name);
  if (!v.IsNumber()) type_error(env, fn, std::string("input.") + name + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(d)) range_error(env, fn, std::string("input.") + name + " must be finite");
  return d;
}

// ---- value builders ----------------------------------------------------------

Napi::Value u64(Napi::Env env, uint64_t v) { return loadgen_addon::number_or_bigint(env, v); }

Napi::Value i64(Napi::Env env, int64_t v) { return Napi::Number::New(env, static_cast<double>(v)); }

Napi::Object log_entry(Napi::Env env, const std::string& key, const std::string& value_text) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("key", key);
  o.Set("valueText", value_text);
  return o;
}

Napi::Array logged_errors(Napi::Env env, const std::vector<loadgen::LogMessage>& messages) {
  Napi::Array out = Napi::Array::New(env);
  uint32_t n = 0;
  for (const auto& m : messages) {
    if (m.is_error) out.Set(n++, log_entry(env, m.key, loadgen::log_value_text(m)));
  }
  return out;
}

// Effective settings under the golden files' names and order.
Napi::Object effective_record(Napi::Env env, const loadgen::EffectiveSettings& e) {
  return loadgen_addon::named_values_to_js(env, loadgen::effective_to_named_values(e),
                                           loadgen_addon::NameStyle::Reference);
}

const char* phase_name(loadgen::SeriesKind kind) {
  return kind == loadgen::SeriesKind::Accuracy ? "accuracy" : "performance";
}

// ---- engine draw counting ------------------------------------------------------

// How many outputs `used` has produced since it was seeded with `seed`: the
// position of its upcoming outputs in a fresh stream of the same seed. rng.h's
// distributions take the concrete engine, so a counting wrapper cannot be
// passed through them; eight 32-bit outputs identify the position for certain
// in practice.
uint64_t draws_since_seed(uint64_t seed, const loadgen::Mt19937& used, uint64_t limit) {
  constexpr int kProbe = 8;
  loadgen::Mt19937 ahead = used;
  uint32_t probe[kProbe];
  for (auto& p : probe) p = ahead();
  loadgen::Mt19937 fresh(seed);
  uint32_t window[kProbe];
  for (auto& w : window) w = fresh();
  for (uint64_t k = 0; k <= limit; ++k) {
    bool match = true;
    for (int j = 0; j < kProbe && match; ++j) match = window[(k + j) % kProbe] == probe[j];
    if (match) return k;
    window[k % kProbe] = fresh();  // slide: drop position k, add k + kProbe
  }
  throw std::runtime_error("engine draw count not found");
}

// ---- error mapping ---------------------------------------------------------------

// Runs `body`, turning core exceptions into JS errors: invalid settings keep
// become SettingsError, allocation failures RangeErrors.
Napi::Value guarded(const Napi::CallbackInfo& info, const char* fn, const std::function<Napi::Value()>& body) {
  Napi::Env env = info.Env();
  try {
    return body();
  } catch (const Napi::Error&) {
    throw;
  } catch (const std::invalid_argument& e) {
    throw_error(env, ErrorClass::InvalidSetting, std::string("conformance.") + fn + ": " + e.what());
  } catch (const std::bad_alloc&) {
    range_error(env, fn, "out of memory (the settings generate too much)");
  } catch (const std::length_error&) {
    range_error(env, fn, "out of memory (the settings generate too much)");
  } catch (const std::exception& e) {
    throw Napi::Error::New(env, std::string("conformance.") + fn + ": " + e.what());
  }
}

}  // namespace conformance_io
}  // namespace loadgen_addon

// The conformance surface's argument readers, value builders and error
// mapping (bindings/conformance.cc). Every reader validates what JS passed and
// throws a TypeError/RangeError naming the function and the argument.
#pragma once

#include <napi.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "native/rng.h"
#include "native/settings.h"
#include "native/trace.h"

namespace loadgen_addon {
namespace conformance_io {

constexpr double kMaxSafeInteger = 9007199254740991.0;
// Output sizes are bounded so a typo cannot allocate gigabytes.
constexpr uint64_t kMaxDraws = uint64_t{1} << 24;
constexpr uint64_t kMaxShuffle = uint64_t{1} << 26;
constexpr uint64_t kMaxEstimateQueries = uint64_t{1} << 24;
constexpr uint64_t kMaxEarlyStoppingCount = (uint64_t{1} << 31) - 1;

// ---- argument readers ----
[[noreturn]] void type_error(Napi::Env env, const std::string& fn, const std::string& what);
[[noreturn]] void range_error(Napi::Env env, const std::string& fn, const std::string& what);
Napi::Value arg(const Napi::CallbackInfo& info, size_t i);
// A 64-bit seed: a BigInt in [0, 2^64) or a safe non-negative integer.
uint64_t read_seed(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name);
// An integer number in [lo, hi].
uint64_t read_count(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name, uint64_t lo,
                    uint64_t hi);
double read_number(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name);
double read_positive(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name);
// A latency percentile: strictly between 0 and 1 (log(p) and log(1 - p) are used).
double read_percentile(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name);
loadgen::TestSettings read_settings(const Napi::CallbackInfo& info, size_t i, const char* fn);
struct QslCounts {
  uint64_t total = 0;
  uint64_t performance = 0;
};
QslCounts read_qsl(const Napi::CallbackInfo& info, size_t i, const char* fn);
// An integer array (Float64Array, or an array of numbers); each element a safe integer.
std::vector<int64_t> read_int_array(Napi::Env env, Napi::Value v, const char* fn, const char* name);
double read_field_number(Napi::Env env, const Napi::Object& o, const char* fn, const char* name);

// ---- value builders ----
Napi::Value u64(Napi::Env env, uint64_t v);
Napi::Value i64(Napi::Env env, int64_t v);
Napi::Object log_entry(Napi::Env env, const std::string& key, const std::string& value_text);
Napi::Array logged_errors(Napi::Env env, const std::vector<loadgen::LogMessage>& messages);
// Effective settings under the golden files' names and order.
Napi::Object effective_record(Napi::Env env, const loadgen::EffectiveSettings& e);

template <typename T>
Napi::Uint32Array to_u32(Napi::Env env, const std::vector<T>& v) {
  Napi::Uint32Array a = Napi::Uint32Array::New(env, v.size());
  std::copy(v.begin(), v.end(), a.Data());
  return a;
}

template <typename T>
Napi::Float64Array to_f64(Napi::Env env, const std::vector<T>& v) {
  Napi::Float64Array a = Napi::Float64Array::New(env, v.size());
  std::transform(v.begin(), v.end(), a.Data(), [](T x) { return static_cast<double>(x); });
  return a;
}

const char* phase_name(loadgen::SeriesKind kind);

// How many outputs `used` has produced since it was seeded with `seed` (see the .cc).
uint64_t draws_since_seed(uint64_t seed, const loadgen::Mt19937& used, uint64_t limit);

// Runs `body`, turning core exceptions into JS errors: invalid settings
// become SettingsError, allocation failures RangeErrors.
Napi::Value guarded(const Napi::CallbackInfo& info, const char* fn, const std::function<Napi::Value()>& body);

}  // namespace conformance_io
}  // namespace loadgen_addon

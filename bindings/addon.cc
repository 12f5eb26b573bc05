// Module init and the functions lib/native/addon.ts declares; the test-only
// surface (lib/native/internals.ts) goes under `_internals`. State is per
// environment (AddonState, worker threads each get their own); what must be
// process-wide is ProcessState.
//
// Over 600 lines on purpose: the completion calls (completeOne and friends,
// one call per sample on the hot path) and the run lifecycle share SessionRef
// and the response checks; in one translation unit the compiler inlines them
// into each call (the build has no LTO).
#include <napi.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "bindings/addon_state.h"
#include "bindings/bench.h"
#include "bindings/config_binding.h"
#include "bindings/conformance.h"
#include "bindings/convert.h"
#include "bindings/errors.h"
#include "bindings/http_sut_binding.h"
#include "bindings/js_host.h"
#include "bindings/platform_info.h"
#include "bindings/runtime_threads.h"
#include "bindings/process_state.h"
#include "bindings/progress.h"
#include "bindings/rules_binding.h"
#include "bindings/tables.h"
#include "native/clock.h"

namespace loadgen_addon {
namespace {

// Stops this environment's run, if any, without calling into JS any more.
void end_run(AddonState& s) {
  if (s.host) {
    s.host->shutdown();
    ProcessState::instance().unshare_session();
    ProcessState::instance().ports().release_all();
    detach_native_sut(s);
    s.host.reset();
  }
}

// The one busy check: takes the process's run slot for this environment or
// throws BusyError. The slot stays this environment's until releaseRun() or
// its teardown, so nothing else can start from reserveRun() to the run's end.
void reserve_run(Napi::Env env, AddonState& s) {
  ProcessState& process = ProcessState::instance();
  if (!process.reserve_run(&s)) {
    throw_error(env, ErrorClass::Busy,
                process.holds_run(&s) ? "a loadgen test is already running in this thread"
                                      : "a loadgen test is already running in this process (possibly in another "
                                        "worker thread); only one test can run at a time");
  }
  AddonState* state_ptr = &s;
  try {
    s.slot_teardown = env.AddCleanupHook(std::function<void()>([state_ptr] {
      end_run(*state_ptr);
      ProcessState::instance().release_run(state_ptr);
    }));
  } catch (...) {
    process.release_run(&s);
    throw;
  }
  s.slot_teardown_registered = true;
}

// reserveRun(): the busy check startTest makes before anything else.
void ReserveRun(const Napi::CallbackInfo& info) { reserve_run(info.Env(), state(info.Env())); }

// releaseRun() -> whether this environment gave the run slot back. A run
// started here keeps it until finish().
Napi::Value ReleaseRun(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  AddonState& s = state(env);
  if (s.host || !ProcessState::instance().holds_run(&s)) return Napi::Boolean::New(env, false);
  if (s.slot_teardown_registered) {
    s.slot_teardown.Remove(env);
    s.slot_teardown_registered = false;
  }
  ProcessState::instance().release_run(&s);
  return Napi::Boolean::New(env, true);
}

// The session a call from this environment goes to: its own run's, else the
// process's active run started in another environment (completions and issue
// threads in worker threads), held for this object's lifetime so that run
// cannot be destroyed under the call.
class SessionRef {
 public:
  explicit SessionRef(const Napi::Env& env) : state_(state(env)) {
    if (state_.host) {
      session_ = &state_.host->session();
    } else {
      shared_.emplace();
      session_ = shared_->get();
    }
  }
  explicit operator bool() const { return session_ != nullptr; }
  // The run was started in this environment: its completions may hand over
  // (Session::complete), since this thread also drains its queries.
  bool own() const { return !shared_.has_value(); }
  loadgen::Session* operator->() const { return session_; }
  loadgen::Session* get() const { return session_; }
  // This environment's.
  const AddonState& addon_state() const { return state_; }

 private:
  const AddonState& state_;
  loadgen::Session* session_ = nullptr;
  std::optional<SharedSession> shared_;
};

Napi::Value Start(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsObject() || !info[1].IsFunction())
    throw Napi::TypeError::New(env, "start(config, dispatcher[, nativeSut]) expects an object and a function");
  // A SUT inside the core (a NativeHttpSut), or none.
  std::shared_ptr<loadgen::HttpSut> native_sut;
  if (info.Length() >= 3 && !info[2].IsUndefined() && !info[2].IsNull()) {
    native_sut = unwrap_http_sut(info[2]);
    if (!native_sut) throw Napi::TypeError::New(env, "start: nativeSut must be a NativeHttpSut");
  }
  AddonState& s = state(env);
  // Runs in the slot this environment reserved and has not started a run in;
  // otherwise the one busy check decides (and takes the slot: releaseRun()).
  if (s.host || !ProcessState::instance().holds_run(&s)) reserve_run(env, s);
  loadgen::SessionConfig config = session_config_from_js(info[0].As<Napi::Object>());
  config.native_sut = native_sut;
  // lib/settings refused these already; never trust JS (Session::start would throw).
  const loadgen::SettingsProblem problem =
      loadgen::check_run_bounds(config.settings, config.qsl_total_count, config.qsl_performance_count);
  if (problem.field != nullptr) throw_error(env, ErrorClass::InvalidSetting, problem.message);
  try {
    s.host = std::make_unique<JsHost>(env, info[1].As<Napi::Function>(), std::move(config));
    AddonState* state_ptr = &s;
    s.run_teardown = env.AddCleanupHook(std::function<void()>([state_ptr] { end_run(*state_ptr); }));
    s.run_teardown_registered = true;
    ProcessState::instance().share_session(&s.host->session());
    if (native_sut) {
      native_sut->attach(&s.host->session());
      s.native_sut = native_sut;
    }
    s.host->start();
  } catch (...) {
    detach_native_sut(s);
    ProcessState::instance().unshare_session();
    if (s.run_teardown_registered) {
      s.run_teardown.Remove(env);
      s.run_teardown_registered = false;
    }
    s.host.reset();
    throw;
  }
  return env.Undefined();
}

Napi::Value SeriesInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  SessionRef session(env);
  if (!session || !session->has_series()) throw_error(env, ErrorClass::NotRunning, "no loadgen series is running");
  const loadgen::QueryTrace& trace = session->trace();
  Napi::Object o = Napi::Object::New(env);
  o.Set("firstId", static_cast<double>(session->first_id()));
  o.Set("samplesPerQuery", static_cast<double>(trace.samples_per_query));
  o.Set("queryCount", static_cast<double>(trace.query_count()));
  o.Set("sampleCount", static_cast<double>(trace.sample_count()));
  // No per-sample arrays here: a 10 M-query series' copies took 84 ms on the
  // JS thread while its first queries waited, and their 50 MB of external
  // memory set off a GC whose marking slowed the next 100 ms. QSL indices
  // come in chunks (copySampleIndices); the accuracy-log flags only when
  // some but not all samples are logged.
  const uint64_t sampled = session->accuracy_sampled_count();
  const bool all_sampled = sampled != 0 && sampled == trace.sample_count();
  o.Set("anySampled", sampled != 0);
  o.Set("allSampled", all_sampled);
  const size_t flags = sampled != 0 && !all_sampled ? trace.accuracy_log_sampled.size() : 0;
  auto sampled_flags = Napi::Uint8Array::New(env, flags);
  std::copy_n(trace.accuracy_log_sampled.begin(), flags, sampled_flags.Data());
  o.Set("accuracyLogSampled", sampled_flags);
  o.Set("coalesced", session->coalescing());
  o.Set("tokenLatencies", session->token_latencies());
  o.Set("performance", session->performance_series());
  return o;
}

// seriesStart(firstId) -> { startNs, performance } of the current series when
// its first id is firstId and it has begun issuing; null otherwise.
Napi::Value SeriesStart(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const double first = info.Length() >= 1 && info[0].IsNumber() ? info[0].As<Napi::Number>().DoubleValue() : -1.0;
  SessionRef session(env);
  int64_t start_ns = 0;
  bool performance = false;
  if (!session || !(first >= 0 && first < 9007199254740992.0) ||
      !session->series_start(static_cast<uint64_t>(first), &start_ns, &performance)) {
    return env.Null();
  }
  Napi::Object o = Napi::Object::New(env);
  o.Set("startNs", static_cast<double>(start_ns));
  o.Set("performance", performance);
  return o;
}

// markDispatched(first, end = first + 1, stride = 1): queries first,
// first + stride, ... below end reached the SUT now (one call per issueQuery).
// copySampleIndices(firstId, first, count, dest: Uint32Array) -> whether it
// copied the QSL indices of samples [first, first + count) of the series
// whose first id is firstId into dest[0, count). False when that series is
// no longer the current one. Nothing of JS is kept after the call.
Napi::Value CopySampleIndices(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto count_arg = [&](size_t i) {
    if (info.Length() <= i || !info[i].IsNumber()) return -1.0;
    const double v = info[i].As<Napi::Number>().DoubleValue();
    return v >= 0 && v < 9007199254740992.0 && v == static_cast<double>(static_cast<uint64_t>(v)) ? v : -1.0;
  };
  const double first_id = count_arg(0), first = count_arg(1), count = count_arg(2);
  if (first_id < 0 || first < 0 || count < 0 || info.Length() < 4 || !info[3].IsTypedArray() ||
      info[3].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
    throw Napi::TypeError::New(env, "copySampleIndices(firstId, first, count, dest) expects three non-negative integers and a Uint32Array");
  Napi::Uint32Array dest = info[3].As<Napi::Uint32Array>();
  if (count > static_cast<double>(dest.ElementLength()))
    throw Napi::RangeError::New(env, "copySampleIndices: count exceeds dest.length");
  SessionRef session(env);
  const bool copied = session && session->has_series() &&
                      session->copy_sample_indices(static_cast<uint64_t>(first_id), static_cast<uint64_t>(first),
                                                   static_cast<uint64_t>(count), dest.Data());
  return Napi::Boolean::New(env, copied);
}

void MarkDispatched(const Napi::CallbackInfo& info) {
  SessionRef session(info.Env());
  if (!session || info.Length() < 1 || !info[0].IsNumber()) return;
  const auto index = [](double v) { return v >= 0 && v < 9007199254740992.0; };
  const double first = info[0].As<Napi::Number>().DoubleValue();
  const double end = info.Length() >= 2 && info[1].IsNumber() ? info[1].As<Napi::Number>().DoubleValue() : first + 1;
  const double stride = info.Length() >= 3 && info[2].IsNumber() ? info[2].As<Napi::Number>().DoubleValue() : 1;
  if (!index(first) || !index(end) || !(stride >= 1 && index(stride))) return;
  // The core clamps the range to the published queries.
  session->mark_dispatched(static_cast<uint64_t>(first), static_cast<uint64_t>(end), static_cast<uint64_t>(stride));
}

size_t typed_array_element_bytes(napi_typedarray_type type) {
  switch (type) {
    case napi_int8_array:
    case napi_uint8_array:
    case napi_uint8_clamped_array:
      return 1;
    case napi_int16_array:
    case napi_uint16_array:
#ifdef NODE_API_HAS_FLOAT16_ARRAY
    case napi_float16_array:
#endif
      return 2;
    case napi_int32_array:
    case napi_uint32_array:
    case napi_float32_array:
      return 4;
    case napi_float64_array:
    case napi_bigint64_array:
    case napi_biguint64_array:
      return 8;
    default:
      return 0;  // a kind these headers do not name: its byte length is unknown
  }
}

// The bytes of a response value (no copy): a typed array, DataView or
// ArrayBuffer; undefined is an empty response. False for anything else, and
// nothing is read. Plain N-API calls that run no JS and throw nothing: the
// core calls this in the middle of a completion.
bool response_bytes(napi_env env, napi_value value, const uint8_t** data, size_t* size) {
  void* bytes = nullptr;
  size_t length = 0;
  // A typed array (the usual response) costs one call.
  napi_typedarray_type type = napi_uint8_array;
  if (napi_get_typedarray_info(env, value, &type, &length, &bytes, nullptr, nullptr) == napi_ok) {
    const size_t element = typed_array_element_bytes(type);
    if (element == 0) return false;
    *data = static_cast<const uint8_t*>(bytes);
    *size = length * element;
    return true;
  }
  napi_valuetype kind = napi_undefined;
  if (napi_typeof(env, value, &kind) != napi_ok) return false;
  if (kind == napi_undefined) {
    *data = nullptr;
    *size = 0;
    return true;
  }
  bool is = false;
  if (napi_is_dataview(env, value, &is) == napi_ok && is) {
    // `bytes` is the view's first byte (its offset applied).
    if (napi_get_dataview_info(env, value, &length, &bytes, nullptr, nullptr) != napi_ok) return false;
  } else if (napi_is_arraybuffer(env, value, &is) == napi_ok && is) {
    if (napi_get_arraybuffer_info(env, value, &bytes, &length) != napi_ok) return false;
  } else {
    return false;
  }
  *data = static_cast<const uint8_t*>(bytes);
  *size = length;
  return true;
}

// A completion call's response values, which the core reads only for the
// samples it writes to the accuracy log (loadgen::ResponseBytes): none (each
// of them logged empty), the one sample's value (completeOne; or a number n:
// its bytes are the first n of the environment's staging buffer), or an
// Array with ids[i]'s value at i. A value that is not bytes writes no record:
// lib checked each one already (lib/api/completion.ts), so only a caller that
// bypasses it gets here, and throwing after the completion would lose a
// handed-over query. The Array is lib's own, dense and of plain values:
// reading its elements runs no JS.
struct JsResponses {
  napi_env env;
  napi_value values;                   // null: none
  bool per_sample;                     // `values` is an Array
  const AddonState* staged = nullptr;  // completeOne: a number is a length in its staging buffer

  loadgen::ResponseBytes bytes() { return {&get, this}; }
  static bool get(void* self, size_t i, const uint8_t** data, size_t* size) {
    const JsResponses& r = *static_cast<JsResponses*>(self);
    napi_value value = r.values;
    if (value == nullptr) {
      *data = nullptr;
      *size = 0;
      return true;
    }
    // i < count <= the Array's length (checked before the completion), < 2^32.
    if (r.per_sample && napi_get_element(r.env, r.values, static_cast<uint32_t>(i), &value) != napi_ok) return false;
    double n = -1;
    if (r.staged != nullptr && napi_get_value_double(r.env, value, &n) == napi_ok) {
      if (!(n >= 0 && n <= static_cast<double>(r.staged->staging_size)) || n != std::floor(n)) return false;
      *data = r.staged->staging_data;
      *size = static_cast<size_t>(n);
      return true;
    }
    return response_bytes(r.env, value, data, size);
  }
};

// The optional response-data argument of a batch completion call: undefined,
// or an Array holding at least `count` elements; throws before anything is
// completed otherwise.
JsResponses batch_responses(const Napi::Env& env, const Napi::Value& value, size_t count, const char* call) {
  if (value.IsUndefined()) return {env, nullptr, false};
  if (!value.IsArray())
    throw Napi::TypeError::New(env, std::string(call) + ": data must be undefined or an Array of response data");
  const uint32_t length = value.As<Napi::Array>().Length();
  if (length < count) {
    throw Napi::RangeError::New(env, std::string(call) + ": data must have an element for every id completed (" +
                                         std::to_string(count) + "), got " + std::to_string(length));
  }
  return {env, value, true};
}

// The completion calls return undefined, or the new published-query count
// when the call issued the next SingleStream/MultiStream query itself (hand-
// over): the caller must drain it (lib/dispatch/handover.ts); no wake comes for it.
Napi::Value handed_over(const Napi::Env& env, uint64_t published) {
  return published == 0 ? env.Undefined() : Napi::Number::New(env, static_cast<double>(published));
}

// Hot path: one sample id as a number, and its response data (optional),
// written to the accuracy log in this call when the sample is logged. No
// allocation, no exceptions for bad ids.
Napi::Value CompleteOne(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  SessionRef session(env);
  if (!session) {
    state(env).completions_outside_run += 1;
    return env.Undefined();
  }
  const double id = (info.Length() >= 1 && info[0].IsNumber()) ? info[0].As<Napi::Number>().DoubleValue() : -1.0;
  JsResponses data{env, info.Length() >= 2 ? static_cast<napi_value>(info[1]) : nullptr, false, &session.addon_state()};
  const loadgen::ResponseBytes responses = data.bytes();
  return handed_over(env, session->complete(&id, 1, session.own(), &responses));
}

// The `count` argument of the batch completion calls: undefined means every
// element of `ids` (`length`); else an integer in [0, length]. Throws, naming
// the argument, the value and what is allowed, before anything is completed
// (text is built only then: this is the hot path).
size_t completion_count(const Napi::Env& env, const Napi::Value& value, size_t length) {
  if (value.IsUndefined()) return length;
  const auto message = [length](const std::string& got) {
    return "querySamplesCompleteIds: count must be undefined or an integer from 0 to ids.length (" +
           std::to_string(length) + "), got " + got;
  };
  if (!value.IsNumber()) throw Napi::TypeError::New(env, message("a value that is not a number"));
  const double c = value.As<Napi::Number>().DoubleValue();
  if (c >= 0 && c <= static_cast<double>(length) && c == static_cast<double>(static_cast<size_t>(c)))
    return static_cast<size_t>(c);
  char number[32];
  std::snprintf(number, sizeof number, "%.17g", c);
  throw Napi::RangeError::New(env, message(number));
}

// Hot path: many ids in one Float64Array or Uint32Array; `count` (optional)
// limits how many of its elements are read; `stampNs` (optional) is the
// completion time read with clockNs() before the ids were gathered; `data`
// (optional) an Array with ids[i]'s response data at i (without it a logged
// sample's response is empty).
Napi::Value CompleteBatch(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsTypedArray())
    throw Napi::TypeError::New(env, "querySamplesCompleteIds: ids must be a Float64Array or a Uint32Array of sample ids");
  Napi::TypedArray array = info[0].As<Napi::TypedArray>();
  const size_t count = completion_count(env, info[1], array.ElementLength());
  // Optional third argument: the completion time from clockNs(), read before
  // the caller gathered the ids. Checked against the series' clock range.
  int64_t stamp_ns = 0;
  if (info.Length() >= 3 && info[2].IsNumber()) {
    const double stamp = info[2].As<Napi::Number>().DoubleValue();
    if (stamp >= 1 && stamp < 9007199254740992.0) stamp_ns = static_cast<int64_t>(stamp);
  }
  const napi_typedarray_type type = array.TypedArrayType();
  if (type != napi_float64_array && type != napi_uint32_array)
    throw Napi::TypeError::New(env, "querySamplesCompleteIds: ids must be a Float64Array or a Uint32Array");
  JsResponses data = batch_responses(env, info[3], count, "completeBatch");
  SessionRef session(env);
  if (!session) {
    state(env).completions_outside_run += static_cast<double>(count);
    return env.Undefined();
  }
  const bool own = session.own();
  const loadgen::ResponseBytes responses = data.bytes();
  uint64_t published;
  if (type == napi_float64_array && stamp_ns > 0) {
    published = session->complete_at(stamp_ns, array.As<Napi::Float64Array>().Data(), count, own, &responses);
  } else if (type == napi_float64_array) {
    published = session->complete(array.As<Napi::Float64Array>().Data(), count, own, &responses);
  } else {
    published = session->complete(array.As<Napi::Uint32Array>().Data(), count, own, &responses);
  }
  return handed_over(env, published);
}

// Bytes of an ArrayBuffer, typed array or DataView (no copy); false otherwise.
bool bytes_of(const Napi::Value& value, const uint8_t** data, size_t* size) {
  if (value.IsTypedArray()) {
    Napi::TypedArray view = value.As<Napi::TypedArray>();
    *data = static_cast<const uint8_t*>(view.ArrayBuffer().Data()) + view.ByteOffset();
    *size = view.ByteLength();
  } else if (value.IsDataView()) {
    Napi::DataView view = value.As<Napi::DataView>();
    *data = static_cast<const uint8_t*>(view.ArrayBuffer().Data()) + view.ByteOffset();
    *size = view.ByteLength();
  } else if (value.IsArrayBuffer()) {
    Napi::ArrayBuffer buffer = value.As<Napi::ArrayBuffer>();
    *data = static_cast<const uint8_t*>(buffer.Data());
    *size = buffer.ByteLength();
  } else {
    return false;
  }
  return true;
}

// An optional clockNs() stamp argument: 0 (the core reads the clock) unless
// it is a number in [1, 2^53); the core clamps it to [series start, now].
int64_t stamp_argument(const Napi::CallbackInfo& info, size_t i) {
  if (info.Length() <= i || !info[i].IsNumber()) return 0;
  const double stamp = info[i].As<Napi::Number>().DoubleValue();
  return stamp >= 1 && stamp < 9007199254740992.0 ? static_cast<int64_t>(stamp) : 0;
}

// Token latencies: the first token of one sample (id as a number), with the
// first-token response bytes (optional; copied only for logged samples) and
// the time the token was read (optional stampNs, a clockNs() reading).
void FirstTokenComplete(const Napi::CallbackInfo& info) {
  const int64_t now = loadgen::now_ns();  // before anything else
  const int64_t given = stamp_argument(info, 2);
  const int64_t stamp = given != 0 ? given : now;
  Napi::Env env = info.Env();
  const uint8_t* data = nullptr;
  size_t size = 0;
  if (info.Length() >= 2 && !info[1].IsUndefined() && !bytes_of(info[1], &data, &size))
    throw Napi::TypeError::New(env, "first-token data must be an ArrayBuffer, a typed array or a DataView");
  SessionRef session(env);
  if (!session) {
    state(env).completions_outside_run += 1;
    return;
  }
  const double id = (info.Length() >= 1 && info[0].IsNumber()) ? info[0].As<Napi::Number>().DoubleValue() : -1.0;
  session->first_token(id, stamp, data, size);
}

// Token latencies: completions with each sample's output token count.
// (ids: Float64Array | Uint32Array, nTokens: Float64Array, count?, stampNs?,
// data?); nTokens must hold at least `count` elements; data as completeBatch's.
Napi::Value CompleteWithTokens(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsTypedArray())
    throw Napi::TypeError::New(env, "querySamplesCompleteIds: ids must be a Float64Array or a Uint32Array of sample ids");
  if (info.Length() < 2 || !info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array)
    throw Napi::TypeError::New(env, "querySamplesCompleteIds: nTokens must be a Float64Array (or undefined)");
  Napi::TypedArray ids = info[0].As<Napi::TypedArray>();
  Napi::TypedArray tokens = info[1].As<Napi::TypedArray>();
  const napi_typedarray_type type = ids.TypedArrayType();
  if (type != napi_float64_array && type != napi_uint32_array)
    throw Napi::TypeError::New(env, "querySamplesCompleteIds: ids must be a Float64Array or a Uint32Array");
  const size_t count = completion_count(env, info[2], ids.ElementLength());
  if (tokens.ElementLength() < count) {
    throw Napi::RangeError::New(env, "querySamplesCompleteIds: nTokens must have an element for every id completed (" +
                                         std::to_string(count) + "), got " + std::to_string(tokens.ElementLength()));
  }
  int64_t stamp_ns = 0;  // 0: the core reads the clock
  if (info.Length() >= 4 && info[3].IsNumber()) {
    const double stamp = info[3].As<Napi::Number>().DoubleValue();
    if (stamp >= 1 && stamp < 9007199254740992.0) stamp_ns = static_cast<int64_t>(stamp);
  }
  JsResponses data = batch_responses(env, info[4], count, "completeWithTokens");
  SessionRef session(env);
  if (!session) {
    state(env).completions_outside_run += static_cast<double>(count);
    return env.Undefined();
  }
  const double* n = tokens.As<Napi::Float64Array>().Data();
  const bool own = session.own();
  const loadgen::ResponseBytes responses = data.bytes();
  if (type == napi_float64_array) {
    return handed_over(env, session->complete_with_tokens(stamp_ns, ids.As<Napi::Float64Array>().Data(), n, count,
                                                          own, &responses));
  }
  return handed_over(env, session->complete_with_tokens(stamp_ns, ids.As<Napi::Uint32Array>().Data(), n, count, own,
                                                        &responses));
}

// failSample(id, kind, message, stampNs?): sample `id` failed; `kind` is an
// index into tables.failureKinds (lib/api/completion.ts maps the name). The
// id is checked by the core like a completion's; the kind here, the message
// is bounded by the core.
Napi::Value FailSample(const Napi::CallbackInfo& info) {
  const int64_t now = loadgen::now_ns();  // before anything else
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[1].IsNumber() || !info[2].IsString())
    throw Napi::TypeError::New(env, "failSample(id, kind, message, stampNs?) expects a kind index and a message");
  const double kind = info[1].As<Napi::Number>().DoubleValue();
  const bool known = kind >= 0 && kind < static_cast<double>(loadgen::kFailureKindCount) &&
                     kind == static_cast<double>(static_cast<size_t>(kind));
  if (!known)
    throw Napi::RangeError::New(env, "failSample: kind must be an index into tables.failureKinds");
  const int64_t given = stamp_argument(info, 3);
  SessionRef session(env);
  if (!session) {
    state(env).completions_outside_run += 1;
    return env.Undefined();
  }
  const double id = info[0].IsNumber() ? info[0].As<Napi::Number>().DoubleValue() : -1.0;
  const std::string message = info[2].As<Napi::String>().Utf8Value();
  return handed_over(env, session->fail(given != 0 ? given : now, id, static_cast<loadgen::FailureKind>(kind), message,
                                        session.own()));
}

Napi::Value Acknowledge(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  AddonState& s = state(env);
  if (!s.host || info.Length() < 1 || !info[0].IsNumber()) return Napi::Boolean::New(env, false);
  const double token = info[0].As<Napi::Number>().DoubleValue();
  std::string error;
  if (info.Length() >= 2 && info[1].IsString()) error = info[1].As<Napi::String>().Utf8Value();
  if (!(token >= 1) || token > 9007199254740991.0) return Napi::Boolean::New(env, false);
  return Napi::Boolean::New(env, s.host->acknowledge(static_cast<uint64_t>(token), error));
}

void Abort(const Napi::CallbackInfo& info) {
  SessionRef session(info.Env());
  if (!session) return;
  std::string reason = "aborted";
  if (info.Length() >= 1 && info[0].IsString()) reason = info[0].As<Napi::String>().Utf8Value();
  session->abort(reason);
}

// interrupt(reason): stops the active run on request, logs written and the
// result INVALID with `reason` (Session::interrupt); nothing without a run.
void Interrupt(const Napi::CallbackInfo& info) {
  SessionRef session(info.Env());
  if (!session) return;
  std::string reason = "interrupted";
  if (info.Length() >= 1 && info[0].IsString()) reason = info[0].As<Napi::String>().Utf8Value();
  // It goes into the logs: bounded (lib/api/start-test.ts shortens it first), cut at a UTF-8 character boundary.
  constexpr size_t kMaxReasonBytes = 4096;
  if (reason.size() > kMaxReasonBytes) {
    size_t end = kMaxReasonBytes;
    while (end > 0 && (static_cast<unsigned char>(reason[end]) & 0xC0) == 0x80) --end;
    reason.resize(end);
  }
  session->interrupt(reason);
}

// Called by the dispatcher on the Finished event: joins the run and returns its outcome.
Napi::Value Finish(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  AddonState& s = state(env);
  if (!s.host) throw_error(env, ErrorClass::NotRunning, "no loadgen test is running");
  s.host->finish();
  ProcessState::instance().unshare_session();
  ProcessState::instance().ports().release_all();
  Napi::Object outcome = outcome_to_js(env, s.host->session().outcome());
  detach_native_sut(s);
  if (s.run_teardown_registered) {
    s.run_teardown.Remove(env);
    s.run_teardown_registered = false;
  }
  s.host.reset();  // the run slot stays this environment's until releaseRun()
  return outcome;
}

// responseStaging() -> this environment's staging buffer (made once, held
// until its teardown): lib copies a small response into it itself and passes
// completeOne its length, since reading a small typed array through N-API
// makes V8 move its bytes out of its heap first (an allocation).
Napi::Value ResponseStaging(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  AddonState& s = state(env);
  if (s.staging_data == nullptr) {
    Napi::Uint8Array array = Napi::Uint8Array::New(env, AddonState::kStagingBytes);
    s.staging = Napi::Persistent(array);
    s.staging_data = array.Data();
    s.staging_size = array.ElementLength();
  }
  return s.staging.Value();
}

Napi::Value IsRunning(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), static_cast<bool>(state(info.Env()).host));
}

Napi::Value CompletionsOutsideRun(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), state(info.Env()).completions_outside_run);
}

Napi::Value ClockNs(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(loadgen::now_ns()));
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  env.SetInstanceData<AddonState>(new AddonState());
  register_errors(env, exports);
  exports.Set("reserveRun", Napi::Function::New(env, ReserveRun, "reserveRun"));
  exports.Set("releaseRun", Napi::Function::New(env, ReleaseRun, "releaseRun"));
  exports.Set("start", Napi::Function::New(env, Start, "start"));
  exports.Set("seriesInfo", Napi::Function::New(env, SeriesInfo, "seriesInfo"));
  exports.Set("markDispatched", Napi::Function::New(env, MarkDispatched, "markDispatched"));
  exports.Set("seriesStart", Napi::Function::New(env, SeriesStart, "seriesStart"));
  exports.Set("copySampleIndices", Napi::Function::New(env, CopySampleIndices, "copySampleIndices"));
  exports.Set("completeOne", Napi::Function::New(env, CompleteOne, "completeOne"));
  exports.Set("completeBatch", Napi::Function::New(env, CompleteBatch, "completeBatch"));
  exports.Set("completeWithTokens", Napi::Function::New(env, CompleteWithTokens, "completeWithTokens"));
  exports.Set("firstTokenComplete", Napi::Function::New(env, FirstTokenComplete, "firstTokenComplete"));
  exports.Set("failSample", Napi::Function::New(env, FailSample, "failSample"));
  exports.Set("acknowledge", Napi::Function::New(env, Acknowledge, "acknowledge"));
  exports.Set("abort", Napi::Function::New(env, Abort, "abort"));
  exports.Set("interrupt", Napi::Function::New(env, Interrupt, "interrupt"));
  exports.Set("finish", Napi::Function::New(env, Finish, "finish"));
  exports.Set("isRunning", Napi::Function::New(env, IsRunning, "isRunning"));
  exports.Set("responseStaging", Napi::Function::New(env, ResponseStaging, "responseStaging"));
  exports.Set("clockNs", Napi::Function::New(env, ClockNs, "clockNs"));
  exports.Set("napiVersion", Napi::Number::New(env, NAPI_VERSION));
  register_issue_threads(env, exports);
  register_http_sut(env, exports);
  register_config(env, exports);
  register_progress(env, exports);
  register_tables(env, exports);
  register_platform_info(env, exports);
  register_runtime_threads(env, exports);
  // Not public API, apart from the production surface: the core's pure
  // functions (loadgen trace, the conformance runner), the platform probes
  // (loadgen bench) and counters only tests read.
  Napi::Object internals = Napi::Object::New(env);
  register_conformance(env, internals);
  register_bench(env, internals);
  register_rules(env, internals);
  internals.Set("completionsOutsideRun", Napi::Function::New(env, CompletionsOutsideRun, "completionsOutsideRun"));
  exports.Set("_internals", internals);
  return exports;
}

}  // namespace
}  // namespace loadgen_addon

static Napi::Object InitLoadgen(Napi::Env env, Napi::Object exports) { return loadgen_addon::Init(env, exports); }

NODE_API_MODULE(loadgen, InitLoadgen)

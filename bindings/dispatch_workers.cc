// dispatch 'worker': worker threads take queries straight from the active
// session (no threadsafe function, no main thread on the path). They register
// through the issue-thread registry (role DispatchWorker), which gives the
// run its count, its teardown check and the Released event at the end.
// Their error slot is process-wide too (ProcessState).
#include <chrono>
#include <thread>
#include <vector>

#include "bindings/issue_threads.h"
#include "bindings/process_state.h"

namespace loadgen_addon {

namespace {

// While samples are outstanding a worker blocks only this long before its
// event loop turns again: an async SUT may complete them there.
constexpr int64_t kBusyWaitNs = 200000;
// With nothing outstanding: long enough to cost no CPU, short enough that
// Released (end of run) is seen promptly even if a notify were missed.
constexpr int64_t kIdleWaitNs = 20000000;

// registerDispatchWorker(dispatcher, threadId) -> { index, serial }
Napi::Value RegisterDispatchWorker(const Napi::CallbackInfo& info) {
  return register_thread_port(info, PortRole::DispatchWorker, "registerDispatchWorker");
}

// dispatchNext(out: Float64Array(3), flushedFirstId) -> status (Session::kDispatch*).
// Claimed: out = [series first id, first sample, sample count]. SeriesEnded:
// out[0] = the series' first id. Blocks this thread at most kIdleWaitNs.
Napi::Value DispatchNext(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsTypedArray() || !info[1].IsNumber())
    throw Napi::TypeError::New(env, "dispatchNext(out, flushedFirstId) expects a Float64Array and a number");
  Napi::TypedArray array = info[0].As<Napi::TypedArray>();
  if (array.TypedArrayType() != napi_float64_array || array.ElementLength() < 3)
    throw Napi::TypeError::New(env, "dispatchNext: out must be a Float64Array of length >= 3");
  double* out = array.As<Napi::Float64Array>().Data();
  const double flushed = info[1].As<Napi::Number>().DoubleValue();
  int status = loadgen::Session::kDispatchIdle;
  bool no_run = false;
  {
    SharedSession shared;
    loadgen::Session* s = shared.get();
    no_run = s == nullptr;
    if (s != nullptr) {
      const int64_t wait = s->outstanding_samples() > 0 ? kBusyWaitNs : kIdleWaitNs;
      loadgen::DispatchClaim claim;
      const uint64_t flushed_id = flushed >= 1 && flushed < 9007199254740992.0 ? static_cast<uint64_t>(flushed) : 0;
      status = s->dispatch_next(flushed_id, s->dispatch_spin_ns(), wait, &claim);
      out[0] = static_cast<double>(claim.first_id);
      out[1] = static_cast<double>(claim.first_sample);
      out[2] = static_cast<double>(claim.samples);
    }
  }
  // No run yet (registered early): do not let the caller's loop spin.
  if (no_run) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return Napi::Number::New(env, status);
}

// abortWithError(reason, serialized?) : aborts the active run and keeps the
// serialized error (what a worker's SUT threw, v8.serialize) for
// takeWorkerError(), so the thread running startTest can reject with it as
// the cause. Returns whether a run was aborted.
Napi::Value AbortWithError(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string reason = "a dispatch worker failed";
  if (info.Length() >= 1 && info[0].IsString()) reason = info[0].As<Napi::String>().Utf8Value();
  if (info.Length() >= 2 && info[1].IsTypedArray()) {
    Napi::TypedArray view = info[1].As<Napi::TypedArray>();
    const uint8_t* data = static_cast<const uint8_t*>(view.ArrayBuffer().Data()) + view.ByteOffset();
    ProcessState::instance().keep_worker_error(data, view.ByteLength());
  }
  SharedSession shared;
  if (shared.get() == nullptr) return Napi::Boolean::New(env, false);
  shared.get()->abort(reason);
  return Napi::Boolean::New(env, true);
}

// takeWorkerError() -> Uint8Array | undefined (and clears the slot).
Napi::Value TakeWorkerError(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::vector<uint8_t> error;
  if (!ProcessState::instance().take_worker_error(&error)) return env.Undefined();
  auto bytes = Napi::Uint8Array::New(env, error.size());
  std::copy(error.begin(), error.end(), bytes.Data());
  return bytes;
}

}  // namespace

void register_dispatch_workers(Napi::Env env, Napi::Object exports) {
  exports.Set("registerDispatchWorker", Napi::Function::New(env, RegisterDispatchWorker, "registerDispatchWorker"));
  exports.Set("dispatchNext", Napi::Function::New(env, DispatchNext, "dispatchNext"));
  exports.Set("abortWithError", Napi::Function::New(env, AbortWithError, "abortWithError"));
  exports.Set("takeWorkerError", Napi::Function::New(env, TakeWorkerError, "takeWorkerError"));
}

}  // namespace loadgen_addon

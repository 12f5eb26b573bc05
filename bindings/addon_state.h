// The addon's state of one environment (instance data): the main thread and
// each worker thread that loads the addon have their own. What must be
// process-wide is ProcessState (process_state.h), and nothing else is.
#pragma once

#include <napi.h>

#include <functional>
#include <memory>

#include "bindings/errors.h"
#include "bindings/js_host.h"
#include "native/http_sut.h"

namespace loadgen_addon {

struct AddonState {
  // The run started in this environment, from start() to finish() (or this
  // environment's teardown). Only while this environment holds the run slot.
  std::unique_ptr<JsHost> host;
  // The run's SUT inside the core, if any (a NativeHttpSut): attached to the
  // host's session for the run, detached before that session goes.
  std::shared_ptr<loadgen::HttpSut> native_sut;
  // Environment teardown (worker terminated, process exiting). Hooks run
  // last-in first-out: the run's, registered after the run's threadsafe
  // function, stops the run before that function's own teardown; the slot's,
  // registered when the slot was taken, then gives the run slot back.
  Napi::Env::CleanupHook<std::function<void()>> run_teardown;
  bool run_teardown_registered = false;
  Napi::Env::CleanupHook<std::function<void()>> slot_teardown;
  bool slot_teardown_registered = false;
  double completions_outside_run = 0;
  // responseStaging(): one response's bytes, copied there by lib (completeOne
  // logs them). V8 keeps typed arrays up to 64 bytes inside its heap.
  static constexpr size_t kStagingBytes = 64;
  Napi::Reference<Napi::Uint8Array> staging;
  const uint8_t* staging_data = nullptr;  // of `staging`, whose ArrayBuffer never moves
  size_t staging_size = 0;
  ErrorClasses error_classes;  // set by setErrorClasses
};

// Before the run's session is destroyed: the native SUT completes nothing more into it.
inline void detach_native_sut(AddonState& s) {
  if (s.native_sut) s.native_sut->detach();
  s.native_sut.reset();
}

inline AddonState& state(const Napi::Env& env) { return *env.GetInstanceData<AddonState>(); }

}  // namespace loadgen_addon

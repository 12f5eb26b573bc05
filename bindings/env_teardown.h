// Callbacks that N-API runs on an environment's thread outside any call from
// JS (threadsafe-function calls, their finalizers, async completions) can run
// after that environment began to go away (worker.terminate(), process exit)
// and before its cleanup hooks: N-API then refuses everything that needs
// JavaScript (a call, a typed array, a buffer, resolving a promise) with
// napi_pending_exception and no exception pending. node-addon-api, built with
// NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS (CMakeLists.txt), throws a
// Napi::Error for it where it would otherwise abort the process ("FATAL
// ERROR: Error::Error napi_define_properties"); every such callback runs its
// body through run_in_env(), which does nothing more once the environment is
// going away.
#pragma once

#include <napi.h>

#include <exception>
#include <string>
#include <utility>

namespace loadgen_addon {

// False once `env` can no longer run JavaScript (it never can again). Probes
// with a zero-length ArrayBuffer, which N-API refuses then; only for failure
// paths, where a Napi::Error already cleared any JS exception.
inline bool env_can_run_js(napi_env env) {
  napi_value probe = nullptr;
  return napi_create_arraybuffer(env, 0, nullptr, &probe) == napi_ok;
}

// Runs `body` in `env`. A failure in it (its message) goes to `on_error`
// while the environment is alive; once it is going away nothing more
// happens. Nothing escapes into N-API's C frames (that would terminate the
// process).
template <typename Body, typename OnError>
void run_in_env(napi_env env, Body&& body, OnError&& on_error) noexcept {
  std::string failure;
  try {
    std::forward<Body>(body)();
    return;
  } catch (const Napi::Error& e) {
    if (!env_can_run_js(env)) return;
    failure = e.Message();
  } catch (const std::exception& e) {
    failure = e.what();
  } catch (...) {
    failure = "unknown exception";
  }
  try {
    std::forward<OnError>(on_error)(failure);
  } catch (...) {
    // on_error only records the failure; nothing may leave a callback.
  }
}

}  // namespace loadgen_addon

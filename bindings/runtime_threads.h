// idleRuntimeThreads(): the runtime's helper threads to SCHED_IDLE
// (native/runtime_threads.h), all but libuv's thread pool, whose threads a
// probe finds first. yieldJsThread(nice): the JS thread to a lower priority,
// the core's threads to short slices (native/core_threads.h).
#pragma once

#include <napi.h>

namespace loadgen_addon {

// Lists the process's threads (once per process: the first load) and sets
// exports.idleRuntimeThreads and exports.yieldJsThread.
void register_runtime_threads(Napi::Env env, Napi::Object exports);

}  // namespace loadgen_addon

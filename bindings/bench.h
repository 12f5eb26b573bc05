// Platform probes for `loadgen bench`: what a clock read and a threadsafe-
// function wake cost on this machine, measured by the same code paths the
// run uses, so run overheads can be compared with the platform's floor.
#pragma once

#include <napi.h>

namespace loadgen_addon {

void register_bench(Napi::Env env, Napi::Object exports);

}  // namespace loadgen_addon

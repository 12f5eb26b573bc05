// Platform probes for `loadgen bench`: what a clock read and a threadsafe-
// function wake cost on this machine, measured by the same code paths the
// run uses, so run overheads can be compared with the platform's floor.
// Not public API: under _internals.bench (lib/native/internals.ts NativeBench).
#pragma once

#include <napi.h>

namespace loadgen_addon {

// Sets internals.bench to an object holding every NativeBench function.
void register_bench(Napi::Env env, Napi::Object internals);

}  // namespace loadgen_addon

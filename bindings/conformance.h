// _internals.conformance: the core's pure functions (RNG primitives, trace
// planning, results, early stopping, config derivation) for `loadgen trace`
// and the conformance runner; not public API. The surface is
// lib/native/internals.ts NativeConformance.
#pragma once

#include <napi.h>

namespace loadgen_addon {

// Sets internals.conformance to an object holding every NativeConformance function.
void register_conformance(Napi::Env env, Napi::Object internals);

}  // namespace loadgen_addon

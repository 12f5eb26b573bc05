// exports.conformance: the core's pure functions (RNG primitives, trace
// planning, results, early stopping, config derivation) for `loadgen trace`
// and the conformance runner. The surface is lib/native.ts NativeConformance.
#pragma once

#include <napi.h>

namespace loadgen_addon {

// Sets exports.conformance to an object holding every NativeConformance function.
void register_conformance(Napi::Env env, Napi::Object exports);

}  // namespace loadgen_addon

// _internals.rules: the core's early-stopping verdicts for `loadgen stats`
// (the run planner); not public API. The surface is lib/native/internals.ts
// NativeRules.
#pragma once

#include <napi.h>

namespace loadgen_addon {

// Sets internals.rules to an object holding every NativeRules function.
void register_rules(Napi::Env env, Napi::Object internals);

}  // namespace loadgen_addon

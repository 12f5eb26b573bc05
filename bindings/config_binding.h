// exports.config: the core's config-file loader (mlperf.conf, user.conf,
// audit.config) with provenance, for lib/config/. The surface is
// lib/native/addon.ts NativeConfig.
#pragma once

#include <napi.h>

namespace loadgen_addon {

// Sets exports.config to an object holding every NativeConfig function.
void register_config(Napi::Env env, Napi::Object exports);

}  // namespace loadgen_addon

// platformInfo(): what this build of the addon can do on this machine, for
// `loadgen doctor` (lib/cli/doctor-command.ts).
#pragma once

#include <napi.h>

namespace loadgen_addon {

// Sets exports.platformInfo.
void register_platform_info(Napi::Env env, Napi::Object exports);

}  // namespace loadgen_addon

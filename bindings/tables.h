// exports.tables: the core's field and key tables as plain data, so
// lib/settings/ and lib/config/ take their limits and config keys from
// the same rows the core uses (lib/native/tables.ts NativeTables).
#pragma once

#include <napi.h>

namespace loadgen_addon {

// Sets exports.tables = { testSettingsFields, configKeys, runSettingLimits,
// failureKinds } (failureKinds: the names by FailureKind value).
void register_tables(Napi::Env env, Napi::Object exports);

}  // namespace loadgen_addon

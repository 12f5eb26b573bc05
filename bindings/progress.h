// progress(): the live state of the process's active run for progress
// displays, as plain numbers (Session::progress; never the records).
#pragma once

#include <napi.h>

namespace loadgen_addon {

void register_progress(Napi::Env env, Napi::Object exports);

}  // namespace loadgen_addon

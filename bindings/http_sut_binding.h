// The native HTTP client SUT's JS class (NativeHttpSut) and how start()
// finds the core object behind one.
#pragma once

#include <napi.h>

#include <memory>

#include "native/http_sut.h"

namespace loadgen_addon {

void register_http_sut(Napi::Env env, Napi::Object exports);

// The HttpSut behind a NativeHttpSut object; null for any other value.
std::shared_ptr<loadgen::HttpSut> unwrap_http_sut(const Napi::Value& value);

}  // namespace loadgen_addon

// JS error classes thrown from C++. lib/native's loader hands the classes of
// lib/errors.ts to the addon once per environment (setErrorClasses); C++
// throws `new Class(message)`, so `instanceof` and `code` hold in JS.
// Argument checks throw TypeError/RangeError as JS built-ins would.
#pragma once

#include <napi.h>

#include <string>

namespace loadgen_addon {

// The lib/errors.ts classes C++ throws (errors.cc lists their names and codes).
enum class ErrorClass : int { Busy = 0, NotRunning = 1, InvalidSetting = 2 };
constexpr int kErrorClassCount = 3;

// One environment's classes, indexed by ErrorClass (AddonState holds them).
struct ErrorClasses {
  Napi::FunctionReference by_class[kErrorClassCount];
};

// Throws an instance of `cls` with `message` (SettingsError: key "(settings)").
// Before setErrorClasses (the addon loaded without lib/native), a plain Error
// carrying the class's code.
[[noreturn]] void throw_error(Napi::Env env, ErrorClass cls, const std::string& message);

// exports.setErrorClasses({ BusyError, NotRunningError, SettingsError }).
void register_errors(Napi::Env env, Napi::Object exports);

}  // namespace loadgen_addon

#include "bindings/errors.h"

#include "bindings/addon_state.h"

namespace loadgen_addon {

namespace {

struct ClassInfo {
  const char* name;  // as lib/errors.ts exports it
  const char* code;  // its `code`
};

// Indexed by ErrorClass.
constexpr ClassInfo kClasses[kErrorClassCount] = {
    {"BusyError", "ERR_LOADGEN_BUSY"},
    {"NotRunningError", "ERR_LOADGEN_NOT_RUNNING"},
    {"SettingsError", "ERR_LOADGEN_INVALID_SETTING"},
};

// SettingsError(key, value, message): the key when the core names no field.
constexpr const char* kUnnamedSettingKey = "(settings)";

Napi::Object construct(Napi::Env env, const Napi::Function& cls, ErrorClass which, const std::string& message) {
  if (which == ErrorClass::InvalidSetting) {
    return cls.New({Napi::String::New(env, kUnnamedSettingKey), env.Undefined(), Napi::String::New(env, message)});
  }
  return cls.New({Napi::String::New(env, message)});
}

// setErrorClasses({ BusyError, NotRunningError, SettingsError }): every class
// is checked (a constructor whose instances carry the expected code) before
// any is stored, so a bad argument changes nothing.
Napi::Value SetErrorClasses(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject())
    throw Napi::TypeError::New(env, "setErrorClasses(classes) expects an object");
  Napi::Object given = info[0].As<Napi::Object>();
  Napi::Function classes[kErrorClassCount];
  for (int i = 0; i < kErrorClassCount; ++i) {
    Napi::Value value = given.Get(kClasses[i].name);
    if (!value.IsFunction())
      throw Napi::TypeError::New(env, std::string("setErrorClasses: ") + kClasses[i].name + " must be a class");
    classes[i] = value.As<Napi::Function>();
    Napi::Value code = construct(env, classes[i], static_cast<ErrorClass>(i), "").Get("code");
    if (!code.IsString() || code.As<Napi::String>().Utf8Value() != kClasses[i].code)
      throw Napi::TypeError::New(env, std::string("setErrorClasses: ") + kClasses[i].name + " instances must have code " +
                                          kClasses[i].code);
  }
  ErrorClasses& stored = state(env).error_classes;
  for (int i = 0; i < kErrorClassCount; ++i) stored.by_class[i] = Napi::Persistent(classes[i]);
  return env.Undefined();
}

}  // namespace

void throw_error(Napi::Env env, ErrorClass cls, const std::string& message) {
  const Napi::FunctionReference& stored = state(env).error_classes.by_class[static_cast<int>(cls)];
  if (stored.IsEmpty()) {
    Napi::Error error = Napi::Error::New(env, message);
    error.Set("code", Napi::String::New(env, kClasses[static_cast<int>(cls)].code));
    throw error;
  }
  throw Napi::Error(env, construct(env, stored.Value(), cls, message));
}

void register_errors(Napi::Env env, Napi::Object exports) {
  exports.Set("setErrorClasses", Napi::Function::New(env, SetErrorClasses, "setErrorClasses"));
}

}  // namespace loadgen_addon

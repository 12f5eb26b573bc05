#include "bindings/platform_info.h"

#include <thread>

#include "native/platform.h"
#include "native/wait.h"

namespace loadgen_addon {
namespace {

const char* compiled_os() {
#if defined(__linux__)
  return "linux";
#elif defined(__APPLE__)
  return "darwin";
#elif defined(_WIN32)
  return "win32";
#else
  return "other";
#endif
}

const char* compiled_arch() {
#if defined(__x86_64__) || defined(_M_X64)
  return "x64";
#elif defined(__aarch64__) || defined(_M_ARM64)
  return "arm64";
#else
  return "other";
#endif
}

std::string compiler() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return "gcc " + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
         std::to_string(__GNUC_PATCHLEVEL__);
#elif defined(_MSC_VER)
  return "msvc " + std::to_string(_MSC_VER);
#else
  return "unknown";
#endif
}

Napi::Value PlatformInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  constexpr loadgen::PlatformFacilities facilities = loadgen::platform_facilities();
  Napi::Object out = Napi::Object::New(env);
  out.Set("os", compiled_os());
  out.Set("arch", compiled_arch());
  out.Set("compiler", compiler());
  out.Set("waitKind", facilities.wait_kind);
  out.Set("futex", std::string(facilities.wait_kind) == "futex");
  out.Set("canPin", facilities.can_pin);
  out.Set("knowsCurrentCpu", facilities.knows_current_cpu);
  out.Set("preciseSleep", facilities.precise_sleep);
  out.Set("currentCpu", loadgen::current_cpu());
  out.Set("hardwareThreads", std::thread::hardware_concurrency());
#if defined(LOADGEN_GLIBC_COMPAT)
  out.Set("portableLink", true);
#else
  out.Set("portableLink", false);
#endif
  return out;
}

}  // namespace

void register_platform_info(Napi::Env env, Napi::Object exports) {
  exports.Set("platformInfo", Napi::Function::New(env, PlatformInfo, "platformInfo"));
}

}  // namespace loadgen_addon

// Which operating-system facilities the core's timing code uses, decided in one
// place. Linux: futex waits, CPU pinning, sched_getcpu, 1 ns timer slack,
// clock_nanosleep. Windows: WaitOnAddress/WakeByAddressAll, SetThreadAffinityMask,
// GetCurrentProcessorNumber, a high-resolution waitable timer. Elsewhere (macOS,
// other Unix): a condition variable, no pinning, std::this_thread sleeps.
//
// LOADGEN_FORCE_PORTABLE=1 (a compile definition; scripts/test-native.mjs
// LOADGEN_PORTABLE=1) selects the generic branches on any OS, so that the code
// macOS runs is built and tested on Linux too.
#pragma once

#if defined(LOADGEN_FORCE_PORTABLE) && LOADGEN_FORCE_PORTABLE
#define LOADGEN_PLATFORM_LINUX 0
#define LOADGEN_PLATFORM_WINDOWS 0
#elif defined(__linux__)
#define LOADGEN_PLATFORM_LINUX 1
#define LOADGEN_PLATFORM_WINDOWS 0
#elif defined(_WIN32)
#define LOADGEN_PLATFORM_LINUX 0
#define LOADGEN_PLATFORM_WINDOWS 1
#else
#define LOADGEN_PLATFORM_LINUX 0
#define LOADGEN_PLATFORM_WINDOWS 0
#endif

namespace loadgen {

// What this build can do, for `loadgen doctor` (platformInfo in the addon).
struct PlatformFacilities {
  const char* wait_kind;     // "futex", "WaitOnAddress" or "condition variable"
  bool can_pin;              // the issue thread can be pinned to one CPU
  bool knows_current_cpu;    // current_cpu() returns the CPU, not -1
  bool precise_sleep;        // 1 ns timer slack / high-resolution timer
};

constexpr PlatformFacilities platform_facilities() {
#if LOADGEN_PLATFORM_LINUX
  return {"futex", true, true, true};
#elif LOADGEN_PLATFORM_WINDOWS
  return {"WaitOnAddress", true, true, true};
#else
  return {"condition variable", false, false, false};
#endif
}

}  // namespace loadgen

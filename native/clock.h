// The one clock of the core: monotonic nanoseconds (std::chrono::steady_clock).
// The reference uses the wall clock; a monotonic clock gives the same numbers
// unless the wall clock is stepped during a run, and cannot go backwards.
#pragma once

#include <chrono>
#include <cstdint>
#if defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86) || defined(_M_ARM64))
#include <intrin.h>
#endif

namespace loadgen {

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Wall-clock nanoseconds since the Unix epoch (for power_begin/end and dates).
inline int64_t wall_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#elif defined(_M_X64) || defined(_M_IX86)
  _mm_pause();
#elif defined(_M_ARM64)
  __yield();
#endif
}

}  // namespace loadgen

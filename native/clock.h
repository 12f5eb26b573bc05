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

// The two clocks read at one instant, as near as a preemptible thread can:
// the wall clock is read between two monotonic reads, retried (a few times at
// most) while a preemption left more than 20 us between them, and its
// monotonic time is their midpoint. A descheduled thread between two plain
// reads would pair instants milliseconds apart, which on a short run reads as
// the clocks disagreeing.
struct ClockPair {
  int64_t perf_ns = 0;
  int64_t wall_ns = 0;
};

inline ClockPair read_clock_pair() {
  constexpr int64_t kMaxGapNs = 20000;
  ClockPair best;
  int64_t best_gap = INT64_MAX;
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int64_t before = now_ns();
    const int64_t wall = wall_now_ns();
    const int64_t after = now_ns();
    const int64_t gap = after - before;
    if (gap < best_gap) {
      best_gap = gap;
      best = ClockPair{before + gap / 2, wall};
    }
    if (gap <= kMaxGapNs) break;
  }
  return best;
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

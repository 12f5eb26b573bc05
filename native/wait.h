// Waiting on the issue thread: until a clock time (sleep, then spin for the
// last stretch), and until a condition other threads make true (spin briefly,
// then block on a futex / condition variable). See design.md for the numbers
// behind the choices.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace loadgen {

// Per-thread timing setup for the issue thread: 1 ns timer slack (Linux) so
// sleeps end when asked, and optional pinning to one CPU. Returns a warning
// text when pinning was requested but is not permitted or not supported.
std::string prepare_issue_thread(int cpu);

// The last stretch of a timed wait spins without yielding (see wait_until_ns).
constexpr int64_t kHardSpinNs = 20000;

// Sleeps until `target_ns` (now_ns() clock) minus `spin_window_ns`, then spins
// (yielding to other runnable threads until the last 20 us).
// Returns the clock reading that ended the wait (>= target_ns).
// `yield_while_spinning` false: a thread that owns its CPU (pinned) spins
// without entering the kernel at all.
int64_t wait_until_ns(int64_t target_ns, int64_t spin_window_ns, bool yield_while_spinning = true);

// Gives the CPU to another runnable thread, if any (returns at once when
// there is none). Spins that may run beside other busy threads use it: on a
// machine with few cores a pure spin would hold a core the thread it waits
// for, or V8's and libuv's threads, need.
void yield_cpu();

// The CPU the calling thread runs on (-1 where unknown). A vDSO read on Linux.
int current_cpu();

// A wake-up channel: notifiers bump an epoch; waiters re-check their condition
// whenever the epoch moves. notify() costs one atomic increment plus a load
// when nobody sleeps.
class Signal {
 public:
  Signal();
  ~Signal();
  Signal(const Signal&) = delete;
  Signal& operator=(const Signal&) = delete;

  void notify();

  // Blocks until `ready()` is true or the clock passes `deadline_ns` (<= 0:
  // no deadline). Spins for up to `spin_ns` first. Also returns after
  // `poll_ns` at the latest so callers can look at other conditions (stalls,
  // aborts). Returns ready().
  template <typename Ready>
  bool wait(Ready ready, int64_t deadline_ns, int64_t spin_ns, int64_t poll_ns);

 private:
  uint32_t epoch() const { return epoch_.load(std::memory_order_acquire); }
  // Sleeps while the epoch still equals `seen`, at most `timeout_ns`.
  void sleep_while_epoch(uint32_t seen, int64_t timeout_ns);

  std::atomic<uint32_t> epoch_{0};
  std::atomic<int32_t> sleepers_{0};
  struct Fallback;  // condition variable where there is no futex
  Fallback* fallback_ = nullptr;
};

}  // namespace loadgen

#include "clock.h"

namespace loadgen {

template <typename Ready>
bool Signal::wait(Ready ready, int64_t deadline_ns, int64_t spin_ns, int64_t poll_ns) {
  if (ready()) return true;
  const int64_t start = now_ns();
  const int64_t spin_end = start + spin_ns;
  const int64_t poll_end = start + poll_ns;
  int64_t now = start;
  while (now < spin_end) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      cpu_relax();
    }
    now = now_ns();
    if (deadline_ns > 0 && now >= deadline_ns) return ready();
  }
  for (;;) {
    const uint32_t seen = epoch();
    if (ready()) return true;
    now = now_ns();
    if (deadline_ns > 0 && now >= deadline_ns) return false;
    if (now >= poll_end) return false;
    int64_t timeout = poll_end - now;
    if (deadline_ns > 0 && deadline_ns - now < timeout) timeout = deadline_ns - now;
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    if (!ready()) sleep_while_epoch(seen, timeout);
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }
}

}  // namespace loadgen

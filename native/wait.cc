#include "wait.h"

#include <condition_variable>
#include <mutex>
#include <thread>

#include "clock.h"

#if defined(__linux__)
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#endif

namespace loadgen {

std::string prepare_issue_thread(int cpu) {
#if defined(__linux__)
  // The default 50 us timer slack makes every sleep overshoot; 1 ns makes
  // sleep-then-spin precise.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  if (cpu >= 0) {
    if (cpu >= CPU_SETSIZE) return "issueThreadCpu " + std::to_string(cpu) + " is out of range; issue thread not pinned";
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    if (rc != 0) {
      return "could not pin the issue thread to CPU " + std::to_string(cpu) + " (" + std::strerror(rc) +
             "); running unpinned";
    }
  }
  return {};
#else
  if (cpu >= 0) return "pinning the issue thread is not supported on this platform; running unpinned";
  return {};
#endif
}

namespace {
// The last stretch of a timed wait spins without yielding (see wait_until_ns).
constexpr int64_t kHardSpinNs = 20000;

}  // namespace

int current_cpu() {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

void yield_cpu() {
#if defined(__linux__)
  sched_yield();
#else
  std::this_thread::yield();
#endif
}

int64_t wait_until_ns(int64_t target_ns, int64_t spin_window_ns, bool yield_while_spinning) {
  int64_t now = now_ns();
  if (now >= target_ns) return now;
  const int64_t sleep_until = target_ns - spin_window_ns;
  if (now < sleep_until) {
#if defined(__linux__)
    // CLOCK_MONOTONIC is what steady_clock reads on Linux.
    struct timespec ts;
    ts.tv_sec = static_cast<time_t>(sleep_until / 1000000000);
    ts.tv_nsec = static_cast<long>(sleep_until % 1000000000);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
#else
    std::this_thread::sleep_for(std::chrono::nanoseconds(sleep_until - now));
#endif
  }
  // Spin, but until the last kHardSpinNs give the CPU to any other runnable
  // thread (sched_yield returns at once when there is none): on 2 vCPUs a
  // Server issue thread spins most of the time at >= 10k QPS, and the JS
  // thread it wakes, V8's and libuv's threads must not wait behind it. The
  // last stretch is a plain spin, so the wait error stays that of a spin.
  do {
    if (yield_while_spinning && target_ns - now > kHardSpinNs) {
      yield_cpu();
    } else {
      cpu_relax();
    }
    now = now_ns();
  } while (now < target_ns);
  return now;
}

struct Signal::Fallback {
  std::mutex mutex;
  std::condition_variable cv;
};

Signal::Signal() {
#if !defined(__linux__)
  fallback_ = new Fallback();
#endif
}

Signal::~Signal() { delete fallback_; }

void Signal::notify() {
  epoch_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&epoch_), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
#else
  std::lock_guard<std::mutex> lock(fallback_->mutex);
  fallback_->cv.notify_all();
#endif
}

void Signal::sleep_while_epoch(uint32_t seen, int64_t timeout_ns) {
  if (timeout_ns <= 0) return;
#if defined(__linux__)
  struct timespec ts;
  ts.tv_sec = static_cast<time_t>(timeout_ns / 1000000000);
  ts.tv_nsec = static_cast<long>(timeout_ns % 1000000000);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&epoch_), FUTEX_WAIT_PRIVATE, seen, &ts, nullptr, 0);
#else
  std::unique_lock<std::mutex> lock(fallback_->mutex);
  fallback_->cv.wait_for(lock, std::chrono::nanoseconds(timeout_ns),
                         [&] { return epoch_.load(std::memory_order_acquire) != seen; });
#endif
}

}  // namespace loadgen

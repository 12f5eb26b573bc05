#include "wait.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "clock.h"
#include "platform.h"

#if LOADGEN_PLATFORM_LINUX
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#elif LOADGEN_PLATFORM_WINDOWS
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#include <synchapi.h>
#if defined(_MSC_VER)
#pragma comment(lib, "synchronization.lib")
#endif
// Windows 10 1803+; older SDK headers lack the name.
#ifndef CREATE_WAITABLE_TIMER_HIGH_RESOLUTION
#define CREATE_WAITABLE_TIMER_HIGH_RESOLUTION 0x00000002
#endif
#endif

namespace loadgen {

std::string prepare_issue_thread(int cpu) {
#if LOADGEN_PLATFORM_LINUX
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
#elif LOADGEN_PLATFORM_WINDOWS
  if (cpu >= 0) {
    if (cpu >= static_cast<int>(sizeof(DWORD_PTR) * 8)) {
      return "issueThreadCpu " + std::to_string(cpu) + " is out of range; issue thread not pinned";
    }
    if (SetThreadAffinityMask(GetCurrentThread(), DWORD_PTR{1} << cpu) == 0) {
      return "could not pin the issue thread to CPU " + std::to_string(cpu) + " (error " +
             std::to_string(GetLastError()) + "); running unpinned";
    }
  }
  return {};
#else
  if (cpu >= 0) return "pinning the issue thread is not supported on this platform; running unpinned";
  return {};
#endif
}

namespace {

#if LOADGEN_PLATFORM_WINDOWS
// Sleep() and std::this_thread::sleep_for end on the system tick (15.6 ms by
// default); a high-resolution waitable timer (one per thread, Windows 10
// 1803+) does not. Where it cannot be created, sleep_for it is.
struct ThreadTimer {
  HANDLE handle = CreateWaitableTimerExW(nullptr, nullptr, CREATE_WAITABLE_TIMER_HIGH_RESOLUTION, TIMER_ALL_ACCESS);
  ~ThreadTimer() {
    if (handle != nullptr) CloseHandle(handle);
  }
};

void sleep_for_ns(int64_t ns) {
  thread_local ThreadTimer timer;
  if (timer.handle != nullptr) {
    LARGE_INTEGER due;
    due.QuadPart = -(ns / 100);  // relative, in 100 ns units
    if (SetWaitableTimer(timer.handle, &due, 0, nullptr, nullptr, FALSE)) {
      WaitForSingleObject(timer.handle, INFINITE);
      return;
    }
  }
  std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
}
#endif

}  // namespace

int current_cpu() {
#if LOADGEN_PLATFORM_LINUX
  return sched_getcpu();
#elif LOADGEN_PLATFORM_WINDOWS
  return static_cast<int>(GetCurrentProcessorNumber());
#else
  return -1;
#endif
}

void yield_cpu() {
#if LOADGEN_PLATFORM_LINUX
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
#if LOADGEN_PLATFORM_LINUX
    // CLOCK_MONOTONIC is what steady_clock reads on Linux.
    struct timespec ts;
    ts.tv_sec = static_cast<time_t>(sleep_until / 1000000000);
    ts.tv_nsec = static_cast<long>(sleep_until % 1000000000);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
#elif LOADGEN_PLATFORM_WINDOWS
    sleep_for_ns(sleep_until - now);
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
#if !LOADGEN_PLATFORM_LINUX && !LOADGEN_PLATFORM_WINDOWS
  fallback_ = new Fallback();
#endif
}

Signal::~Signal() { delete fallback_; }

void Signal::notify() {
  epoch_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
#if LOADGEN_PLATFORM_LINUX
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&epoch_), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
#elif LOADGEN_PLATFORM_WINDOWS
  WakeByAddressAll(reinterpret_cast<void*>(&epoch_));
#else
  std::lock_guard<std::mutex> lock(fallback_->mutex);
  fallback_->cv.notify_all();
#endif
}

void Signal::sleep_while_epoch(uint32_t seen, int64_t timeout_ns) {
  if (timeout_ns <= 0) return;
#if LOADGEN_PLATFORM_LINUX
  struct timespec ts;
  ts.tv_sec = static_cast<time_t>(timeout_ns / 1000000000);
  ts.tv_nsec = static_cast<long>(timeout_ns % 1000000000);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&epoch_), FUTEX_WAIT_PRIVATE, seen, &ts, nullptr, 0);
#elif LOADGEN_PLATFORM_WINDOWS
  // Whole milliseconds, rounded up: a wait never ends before its timeout.
  const DWORD timeout_ms = static_cast<DWORD>(std::min<int64_t>((timeout_ns + 999999) / 1000000, 0x7fffffff));
  WaitOnAddress(reinterpret_cast<volatile void*>(&epoch_), &seen, sizeof(seen), timeout_ms);
#else
  std::unique_lock<std::mutex> lock(fallback_->mutex);
  fallback_->cv.wait_for(lock, std::chrono::nanoseconds(timeout_ns),
                         [&] { return epoch_.load(std::memory_order_acquire) != seen; });
#endif
}

}  // namespace loadgen

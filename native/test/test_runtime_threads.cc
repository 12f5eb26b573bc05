// runtime_threads.h: the process's other threads are listed with their start
// times; idle_threads moves those still there to SCHED_IDLE and leaves a
// thread alone whose id is gone (or reused), and the threads not listed.
#include "check.h"
#include "platform.h"
#include "runtime_threads.h"

#if LOADGEN_PLATFORM_LINUX
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#endif

using namespace loadgen;

#if LOADGEN_PLATFORM_LINUX

namespace {

// A thread that reports its id and waits until released.
struct ParkedThread {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<int64_t> tid{0};
  std::thread thread;

  ParkedThread() {
    thread = std::thread([this] {
      tid.store(static_cast<int64_t>(syscall(SYS_gettid)));
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [this] { return release; });
    });
    while (tid.load() == 0) std::this_thread::yield();
  }
  ~ParkedThread() {
    {
      std::lock_guard<std::mutex> lock(mu);
      release = true;
    }
    cv.notify_all();
    thread.join();
  }
};

bool listed(const std::vector<ProcessThread>& threads, int64_t tid) {
  for (const ProcessThread& t : threads)
    if (t.tid == tid) return true;
  return false;
}

}  // namespace

TEST(runtime_threads_lists_the_others_and_idles_only_those_listed) {
  ParkedThread before;
  const std::vector<ProcessThread> snapshot = other_process_threads();
  CHECK(listed(snapshot, before.tid.load()));
  CHECK(!listed(snapshot, static_cast<int64_t>(getpid())));
  CHECK(!listed(snapshot, static_cast<int64_t>(syscall(SYS_gettid))));
  for (const ProcessThread& t : snapshot) CHECK(t.start_ticks > 0);
  ParkedThread after;  // started after the snapshot: not listed, not touched
  std::vector<ProcessThread> only_before;
  for (const ProcessThread& t : snapshot)
    if (t.tid == before.tid.load()) only_before.push_back(t);
  CHECK_EQ(idle_threads(only_before), 1);
  CHECK(thread_is_idle(before.tid.load()));
  CHECK(!thread_is_idle(after.tid.load()));
  CHECK(!thread_is_idle(static_cast<int64_t>(syscall(SYS_gettid))));
  // Again: already idle, counted, nothing else changes.
  CHECK_EQ(idle_threads(only_before), 1);
}

TEST(runtime_threads_leaves_a_thread_whose_id_is_gone_or_reused) {
  ProcessThread gone;
  {
    ParkedThread t;
    gone.tid = t.tid.load();
    for (const ProcessThread& p : other_process_threads())
      if (p.tid == gone.tid) gone = p;
  }
  CHECK(gone.start_ticks > 0);
  CHECK_EQ(idle_threads({gone}), 0);
  // A live id with another start time: a later thread that took the id.
  ParkedThread live;
  ProcessThread reused{live.tid.load(), 1};
  CHECK_EQ(idle_threads({reused}), 0);
  CHECK(!thread_is_idle(live.tid.load()));
}

#else

TEST(runtime_threads_are_not_moved_where_there_is_no_idle_policy) {
  CHECK(other_process_threads().empty());
  CHECK_EQ(idle_threads({}), -1);
}

#endif

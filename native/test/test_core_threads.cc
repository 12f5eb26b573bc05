// core_threads.h: once a thread yields (a lower priority), the core's threads
// still start at the process's original priority, with the short slice
// where the kernel has custom slices; a plain thread of the yielded one
// inherits its lower priority (what the starter is for); a second call
// returns the first answer. The yielding thread is a thread of the test's
// own, so the test binary's main thread keeps its priority.
#include "check.h"
#include "core_threads.h"
#include "platform.h"

#include <atomic>
#include <string>
#include <thread>

#if LOADGEN_PLATFORM_LINUX
#include <sys/syscall.h>
#include <unistd.h>
#endif

using namespace loadgen;

#if LOADGEN_PLATFORM_LINUX

namespace {
int64_t tid_now() { return static_cast<int64_t>(syscall(SYS_gettid)); }
}  // namespace

TEST(core_threads_start_at_the_original_priority_after_a_thread_yields) {
  const int original = thread_nice(tid_now());
  // Before any yield: a plain thread, the kernel's slice.
  std::atomic<int> before_nice{-100};
  std::thread plain_before = start_core_thread("loadgen-test", [&] { before_nice = thread_nice(tid_now()); });
  plain_before.join();
  CHECK_EQ(before_nice.load(), original);

  std::thread yielding([&] {
    const YieldResult first = yield_calling_thread(7);
    CHECK_EQ(first.nice, 7);
    CHECK_EQ(thread_nice(tid_now()), 7);
    CHECK(first.slice_ns == 0 || first.slice_ns == kCoreThreadSliceNs);
    CHECK(first.slice_ns == kCoreThreadSliceNs || !first.note.empty());
    // A core thread started from here: the original priority, the short slice (when the kernel has it).
    std::atomic<int> core_nice{-100};
    std::atomic<int64_t> core_slice{-1};
    std::thread core = start_core_thread("loadgen-test", [&] {
      core_nice = thread_nice(tid_now());
      core_slice = thread_slice_ns(tid_now());
    });
    core.join();
    CHECK_EQ(core_nice.load(), original);
    if (first.slice_ns == kCoreThreadSliceNs) CHECK_EQ(core_slice.load(), kCoreThreadSliceNs);
    // A plain thread of this one inherits its lower priority.
    std::atomic<int> inherited{-100};
    std::thread child([&] { inherited = thread_nice(tid_now()); });
    child.join();
    CHECK_EQ(inherited.load(), 7);
    // Once per process: the first answer.
    const YieldResult second = yield_calling_thread(3);
    CHECK_EQ(second.nice, 7);
    CHECK_EQ(second.slice_ns, first.slice_ns);
  });
  yielding.join();
  // This thread kept its priority.
  CHECK_EQ(thread_nice(tid_now()), original);
}

#endif

#if defined(__linux__) || defined(__APPLE__)

// After the test above in this file (a process yields once): the starter exists by then on Linux.
TEST(core_threads_carry_their_names) {
  std::string seen;
  std::thread t = start_core_thread("loadgen-named", [&] { seen = current_thread_name(); });
  t.join();
  CHECK_EQ(seen, std::string("loadgen-named"));
  // Over 15 bytes: the system keeps the start (no failure, no unnamed thread).
  std::thread long_name = start_core_thread("loadgen-http-123456", [&] { seen = current_thread_name(); });
  long_name.join();
  CHECK_EQ(seen, std::string("loadgen-http-12"));
  // Once a thread yielded (the starter thread starts them): named all the same.
  std::thread yielding([&] {
    yield_calling_thread(5);
    std::thread core = start_core_thread("loadgen-after", [&] { seen = current_thread_name(); });
    core.join();
  });
  yielding.join();
  CHECK_EQ(seen, std::string("loadgen-after"));
}

#endif

#if !LOADGEN_PLATFORM_LINUX

TEST(core_threads_are_plain_threads_off_linux) {
  std::atomic<bool> ran{false};
  std::thread t = start_core_thread("loadgen-test", [&] { ran = true; });
  t.join();
  CHECK(ran.load());
  const YieldResult r = yield_calling_thread(5);
  CHECK_EQ(r.slice_ns, 0);
  CHECK(!r.note.empty());
}

#endif

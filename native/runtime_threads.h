// The threads a host runtime started before the core (Node's V8 platform
// workers: concurrent and parallel GC, background compilation), and moving
// them to the kernel's idle policy. On a CPU the issue thread shares, such a
// worker held the CPU for up to 20 ms while the issue thread was runnable
// (perf sched, benchmarks/RESULTS.md "Runtime helper threads"): the kernel
// preempts a running fair thread only at its slice's end or a tick, and the
// busy issue thread had used more than its share. A SCHED_IDLE thread is
// preempted the moment any other thread wakes. Irreversible without
// privileges (an unprivileged thread cannot leave SCHED_IDLE), so the host
// asks for it only where it wants it (the native network transport), and
// leaves out the threads it must keep (libuv's pool: bindings/runtime_threads.cc).
#pragma once

#include <cstdint>
#include <vector>

namespace loadgen {

// One thread of this process: its id and its start time (clock ticks since
// boot), which tells it from a later thread that reused the id.
struct ProcessThread {
  int64_t tid = 0;
  uint64_t start_ticks = 0;
};

// Every thread of this process now, except the process's main thread and
// the calling thread (Linux: /proc/self/task). Elsewhere: none.
std::vector<ProcessThread> other_process_threads();

// Moves each listed thread that still exists (same id, same start) to
// SCHED_IDLE. Returns how many are idle-priority now (those moved and those
// that were already), or -1 where the platform has no such policy.
int idle_threads(const std::vector<ProcessThread>& threads);

// Whether thread `tid` of this process runs under SCHED_IDLE (tests).
bool thread_is_idle(int64_t tid);

}  // namespace loadgen

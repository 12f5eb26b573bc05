// The core's own threads (issue threads, the HTTP client's reactors) beside
// a host thread that yields to them. On a CPU the issue thread shares with
// the host's JS thread, the kernel (EEVDF) lets a running thread finish its
// slice (1.4 ms here) before a thread that wakes may run, unless the waking
// one has a shorter slice and is owed CPU. So the host may lower its JS
// thread's priority (nice) and give the core's threads the shortest slice
// (Linux >= 6.12 custom slices): then the issue thread preempts the JS
// thread the moment it wakes. Measured (benchmarks/RESULTS.md, "The JS
// thread yields"): 10k requests/s, every body read in JS, the client on one
// CPU: latency p99 0.19-0.48 ms against 0.61-2.7 ms.
//
// An unprivileged thread cannot undo a lower priority, and threads inherit
// their creator's: so once the host lowers its thread, the core starts its
// threads from a thread that kept the original priority (start_core_thread).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <thread>

namespace loadgen {

// The shortest slice the kernel takes (100 µs), asked for the core's threads.
constexpr int64_t kCoreThreadSliceNs = 100000;

struct YieldResult {
  // The calling thread's nice value now (its old one when it could not be changed).
  int nice = 0;
  // The slice the core's threads run with (0: the kernel's own).
  int64_t slice_ns = 0;
  // Why something was not done ('' when all was).
  std::string note;
};

// Once per process (later calls return the first answer): starts the
// thread that starts the core's threads from now on (at the calling
// thread's priority, before it is lowered), gives every thread of the
// process under the normal policy but the calling one the short slice
// (and so every core thread started later), then lowers the calling
// thread to nice `nice` (1..19). Linux only; elsewhere nothing is done.
YieldResult yield_calling_thread(int nice);

// Starts `body` on a new thread named `name` (what top -H, perf and
// debuggers show: Linux keeps 15 bytes, the rest is cut): from the thread
// kept at the process's original priority once yield_calling_thread ran,
// with the short slice then; as std::thread otherwise.
std::thread start_core_thread(std::string name, std::function<void()> body);

// Names the calling thread (Linux, macOS: the first 15 bytes; elsewhere
// nothing). The core's threads are named so that a profile of a run tells
// them apart from Node's own (all "node" otherwise).
void name_current_thread(const std::string& name);

// The calling thread's name as the system keeps it ("" where it keeps none).
std::string current_thread_name();

// The nice value and the scheduler slice (ns; 0 when the kernel shows none)
// of thread `tid` of this process (tests, the host's report).
int thread_nice(int64_t tid);
int64_t thread_slice_ns(int64_t tid);

}  // namespace loadgen

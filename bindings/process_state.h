// The addon's process-wide state, all of it, in one object. Everything else
// is per environment (AddonState, addon_state.h). What is here must be shared by
// every environment (the main thread and each worker thread):
//  - one run per process: a run owns an issue thread that may be pinned and
//    spin, and two runs would measure each other;
//  - completions, issue-query threads and dispatch workers in one environment
//    reach the run started in another one.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "bindings/issue_threads.h"
#include "native/runtime_threads.h"
#include "native/session.h"

namespace loadgen_addon {

class ProcessState {
 public:
  // Never destroyed: worker threads and their cleanup hooks may outlive exit.
  static ProcessState& instance();

  // ---- The run slot: the one busy check ----
  // Invariant: held by at most one environment (`owner`, its AddonState), from
  // a successful reserve_run until release_run by that owner; a run starts
  // only in the environment holding it. One compare-and-swap decides.
  bool reserve_run(const void* owner);
  // No-op unless `owner` holds the slot.
  void release_run(const void* owner);
  bool holds_run(const void* owner) const;

  // ---- The active run's session, for environments other than its own ----
  // Invariant: set (by the environment that started the run) only while that
  // session exists; unshare_session() returns only once no SharedSession
  // holds it, so the owner may destroy the session right after.
  void share_session(loadgen::Session* session);
  void unshare_session();

  // ---- Registered issue-query threads and dispatch workers (all environments) ----
  // Invariant: holds every port registered and not yet unregistered or
  // released (its environment going away unregisters it); a run takes its
  // ports from it (in_run), and release_all() empties it at the run's end, as
  // the reference releases all registered threads at the end of StartTest.
  IssueThreadRegistry& ports() { return ports_; }
  // Unique per registration, for unregisterIssueThread.
  uint64_t next_port_serial() { return next_port_serial_.fetch_add(1); }

  // ---- What a dispatch worker's SUT threw (v8.serialize), for startTest's thread ----
  // One slot: the first error kept wins until it is taken.
  void keep_worker_error(const uint8_t* data, size_t size);
  // Moves the kept error into `out` and empties the slot; false when empty.
  bool take_worker_error(std::vector<uint8_t>* out);

  // ---- The runtime's own threads (native/runtime_threads.h) ----
  // The threads that existed when the addon was first loaded, besides the
  // main thread and the loading one: the V8 platform's workers (GC,
  // compilation) and Node's, before any thread of the core. Listed once
  // per process (the first environment's Init).
  void note_runtime_threads();
  // Moves them to SCHED_IDLE, once per process, except those in `keep` (the
  // thread pool's: bindings/runtime_threads.cc); returns how many are idle
  // (later calls: the first call's answer), -1 where there is no such policy.
  int idle_runtime_threads(const std::vector<int64_t>& keep);
  // The first call's answer, or -2 before it.
  int runtime_threads_idle();

 private:
  friend class SharedSession;
  ProcessState() = default;

  std::atomic<const void*> run_owner_{nullptr};

  std::atomic<loadgen::Session*> shared_session_{nullptr};
  UseGuard shared_session_guard_;  // open while shared_session_ may be used

  IssueThreadRegistry ports_;
  std::atomic<uint64_t> next_port_serial_{1};

  std::once_flag runtime_threads_noted_;
  std::vector<loadgen::ProcessThread> runtime_threads_;
  std::mutex runtime_threads_mutex_;
  int runtime_threads_idle_ = -2;  // under runtime_threads_mutex_; -2: not asked yet

  std::mutex worker_error_mutex_;
  std::vector<uint8_t> worker_error_;
  bool has_worker_error_ = false;
};

// The shared session (if any) held for the lifetime of this object: that run
// cannot be destroyed under the call. Two atomic operations, no lock.
class SharedSession {
 public:
  SharedSession();
  ~SharedSession();
  SharedSession(const SharedSession&) = delete;
  SharedSession& operator=(const SharedSession&) = delete;
  loadgen::Session* get() const { return session_; }

 private:
  loadgen::Session* session_ = nullptr;
  bool entered_ = false;
};

}  // namespace loadgen_addon

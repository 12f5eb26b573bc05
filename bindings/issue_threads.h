// Registered issue-query threads (spec/30 §6) and dispatch workers: one
// threadsafe function into each registering environment. The registry itself
// is process-wide (ProcessState, process_state.h): registrations come from
// other environments (worker threads) than the one running the test.
#pragma once

#include <napi.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "native/session.h"

namespace loadgen_addon {

// Lets other threads use an object until it is closed: enter() is two atomic
// operations (no lock on the issue or completion path); close() waits until
// nobody is inside.
class UseGuard {
 public:
  bool enter() {
    users_.fetch_add(1, std::memory_order_seq_cst);
    if (closed_.load(std::memory_order_seq_cst)) {
      users_.fetch_sub(1, std::memory_order_seq_cst);
      return false;
    }
    return true;
  }
  void leave() { users_.fetch_sub(1, std::memory_order_seq_cst); }
  void open() { closed_.store(false, std::memory_order_seq_cst); }
  void close();
  bool closed() const { return closed_.load(std::memory_order_seq_cst); }

 private:
  std::atomic<int64_t> users_{0};
  std::atomic<bool> closed_{true};
};

// Codes understood by lib/api/issue-threads.ts.
enum class PortEventKind : int { Drain = 0, SeriesStarted = 1, Released = 2 };

struct PortEvent {
  PortEventKind kind;
  uint64_t index = 0;
  uint64_t stride = 0;
};

// What a registration serves: issue-query threads (server_num_issue_query_threads)
// get drains through their TSFN; dispatch workers (dispatch 'worker') take
// queries with dispatchNext() and only hear Released through it.
enum class PortRole : int { IssueThread = 0, DispatchWorker = 1 };

// One registered thread: a threadsafe function into its environment.
class IssueThreadPort {
 public:
  static std::shared_ptr<IssueThreadPort> create(Napi::Env env, Napi::Function dispatcher, double thread_id,
                                                 PortRole role = PortRole::IssueThread);
  PortRole role() const { return role_; }

  double thread_id() const { return thread_id_; }
  uint64_t serial() const { return serial_; }
  // Issue path: queries for this thread were published (never allocates).
  void post_drain();
  // This series' role: the thread gets queries index, index + stride, ...
  void post_series(uint64_t index, uint64_t stride);
  // The run is over (or unregistered): tell JS, then let its event loop go.
  void release();
  // Environment teardown: no more calls into it.
  void teardown();
  std::atomic<bool> in_run{false};

 private:
  static void CallJs(Napi::Env env, Napi::Function dispatcher, IssueThreadPort* port, PortEvent* event);
  using Tsfn = Napi::TypedThreadSafeFunction<IssueThreadPort, PortEvent, &IssueThreadPort::CallJs>;

  Tsfn tsfn_;
  UseGuard guard_;      // the TSFN may be called while open
  std::mutex release_mutex_;
  bool released_ = false;
  std::atomic<uint64_t> index_{0};
  double thread_id_ = 0;
  PortRole role_ = PortRole::IssueThread;
  uint64_t serial_ = 0;
  std::shared_ptr<IssueThreadPort> self_;  // dropped by the TSFN's finalizer
};

// Held by ProcessState (process_state.h).
class IssueThreadRegistry {
 public:
  // Returns the registration index (registration order).
  uint64_t add(std::shared_ptr<IssueThreadPort> port);
  // Removes a port (unregistered or its environment is going away); returns it if found.
  std::shared_ptr<IssueThreadPort> remove(uint64_t serial);
  // Waits up to timeout_ms for >= n registrations of `role`; their ids in order.
  std::vector<uint64_t> wait_for(uint64_t n, int64_t timeout_ms, PortRole role = PortRole::IssueThread);
  // The first `count` registrations of `role`, marked as in the run.
  std::vector<std::shared_ptr<IssueThreadPort>> take(uint64_t count, PortRole role = PortRole::IssueThread);
  // End of a run: every registration is released (the reference releases all
  // registered threads at the end of StartTest).
  void release_all();

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::shared_ptr<IssueThreadPort>> ports_;
};

// Module exports: registerIssueThread(dispatcher, threadId) -> {index, serial},
// unregisterIssueThread(serial), publishedQueries().
void register_issue_threads(Napi::Env env, Napi::Object exports);
// Module exports of bindings/dispatch_workers.cc (dispatch 'worker').
void register_dispatch_workers(Napi::Env env, Napi::Object exports);

// registerIssueThread / registerDispatchWorker: registers the calling
// environment's dispatcher as a thread of the given role; returns {index, serial}.
Napi::Value register_thread_port(const Napi::CallbackInfo& info, PortRole role, const char* function_name);

}  // namespace loadgen_addon

// How published queries reach the SUT (the `dispatch` setting): wake the
// host's thread when no drain is pending (wake, with an optional lead for
// Server), let the host's thread poll (poll), or let worker threads claim
// them (worker); registered issue threads get their share by stride; the
// null-native SUT completes them on the issue thread; a SUT inside the core
// (native_sut.h) gets them from the issue thread. Also the one writer of
// the dispatched time stamp. The poller and a spinning worker issue a due
// Server query the issue thread is late for, through the issuing primitive.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "clock.h"
#include "recorder.h"
#include "run_log.h"
#include "series.h"
#include "session_host.h"
#include "wait.h"

namespace loadgen {

// dispatch_next() results (Session::kDispatch* are the same values).
constexpr int kDispatchClaimed = 1, kDispatchIdle = 0, kDispatchSeriesEnded = -1, kDispatchOver = -2;
// The poller spins (instead of yielding) this close to a due time.
constexpr int64_t kPollHardSpinNs = 10000;

// Stamps dispatched_ns = `elapsed_ns` for queries first, first + stride, ...
// below `end` of `series`: the moment they reached the SUT. Callers keep
// `end` within the published queries.
void stamp_dispatched(Series& series, uint64_t first, uint64_t end, uint64_t stride, int64_t elapsed_ns);

class Dispatch {
 public:
  // `issuing_stopped`: aborted or interrupted (the poller and workers issue
  // nothing more); `aborted`: the run failed (waiting workers return).
  Dispatch(const SessionConfig& config, SessionHost* host, const std::atomic<Series*>& current,
           const std::atomic<bool>& aborted, const std::atomic<bool>& issuing_stopped, Recorder& recorder)
      : config_(config), host_(host), current_(current), aborted_(aborted), issuing_stopped_(issuing_stopped),
        recorder_(recorder) {}

  // ---- Session thread ----
  // Before the first series: room for `issue_threads` registered issue
  // threads (the flags never move once allocated).
  void begin_run(uint64_t issue_threads);
  // Waits for `n` registered issue threads (logging them); returns how many
  // get this series' queries (0: none), `spread` false keeping them idle.
  uint64_t attach_issue_threads(uint64_t n, bool spread, RunLog& log);
  // Worker dispatch, before the first series: waits for the registrations.
  // False (with `error` logged) when too few registered: the run must abort.
  bool attach_workers(RunLog& log, std::string* error);
  // The series published its last query: workers flush once nothing is left.
  void end_series(Series& series);
  // Worker dispatch, after a series' completions: the workers' JS tasks are over.
  void quiesce_workers();
  // The run is over (or aborted): waiting workers return.
  void end_run();
  void notify_workers() { worker_signal_.notify(); }

  // ---- Issue thread ----
  // Wake, Server, wake_lead_ns before a query is due: wakes the host's
  // thread when it sleeps; its drain then waits for the query.
  void wake_ahead();
  // Queries [first, last] of `series` were just published by the issue thread.
  void hand_to_sut(Series& series, uint64_t first, uint64_t last);

  // ---- Host threads (see Session for each) ----
  uint64_t published_queries() const;
  uint64_t wait_published(uint64_t seen, int64_t window_ns, bool when_idle);
  uint64_t drain_published(uint64_t seen);
  bool hold_drain_for_next_due();
  void begin_drain() { drain_pending_.store(false, std::memory_order_seq_cst); }
  void begin_thread_drain(uint64_t t) {
    if (t < thread_drain_capacity_) thread_drain_pending_[t].store(false, std::memory_order_seq_cst);
  }
  void mark_dispatched(uint64_t first, uint64_t end, uint64_t stride);
  int dispatch_next(uint64_t flushed_first_id, int64_t spin_ns, int64_t wait_ns, DispatchClaim* out);
  uint64_t outstanding_samples() const;

 private:
  Series* current() const { return current_.load(std::memory_order_acquire); }
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }
  bool issuing_stopped() const { return issuing_stopped_.load(std::memory_order_acquire); }
  // When the next unpublished query of `series` is due (now_ns() clock):
  // Server only, and -1 when unknown (nothing published yet, so start_ns may
  // not be visible to this thread; or every query published).
  int64_t next_due_ns(const Series& series) const;
  // Claims the next published, unclaimed work of `series` for a worker.
  bool claim(Series& series, DispatchClaim* out);

  const SessionConfig& config_;
  SessionHost* host_;
  const std::atomic<Series*>& current_;
  const std::atomic<bool>& aborted_;
  const std::atomic<bool>& issuing_stopped_;
  Recorder& recorder_;  // the null-native SUT
  std::atomic<bool> drain_pending_{false};
  // One pending-drain flag per registered issue thread; sized once per run
  // (server_num_issue_query_threads) so the array never moves while hosts read it.
  std::unique_ptr<std::atomic<bool>[]> thread_drain_pending_;
  uint64_t thread_drain_capacity_ = 0;
  uint64_t issue_threads_logged_ = 0;  // "Registered IssueQueryThread" lines written
  // Worker dispatch: notified on every publish (a futex wake only when a
  // worker sleeps), at each series' end and when the run ends.
  Signal worker_signal_;
  uint64_t worker_parts_ = 1;  // registered workers: an Offline query is split into this many claims
  bool workers_attached_ = false;
  // Workers inside dispatch_next(): one that is inside has finished the
  // synchronous JS of its last claim, including the accuracy-log calls that
  // follow a completion (see quiesce_workers()).
  std::atomic<uint64_t> workers_inside_{0};
  std::atomic<bool> run_over_{false};
};

// Inline: the issue thread calls it right after publishing each query (the
// null-native SUT's completion is stamped inside).
inline void Dispatch::hand_to_sut(Series& series, uint64_t first, uint64_t last) {
  if (config_.native_sut) {
    config_.native_sut->issue(series, first, last);
  } else if (config_.complete_on_issue_thread) {
    for (uint64_t q = first; q <= last; ++q) recorder_.complete_on_issue_thread(series, q, now_ns() - series.start_ns);
  } else if (series.issue_stride != 0) {
    // Wake each issue thread that got a query, unless its drain is pending.
    const uint64_t stride = series.issue_stride;
    for (uint64_t q = first; q <= last && q < first + stride; ++q) {
      const uint64_t t = q % stride;
      if (!thread_drain_pending_[t].exchange(true, std::memory_order_seq_cst)) host_->wake_issue_thread(t);
    }
  } else if (config_.dispatch == DispatchMode::Worker) {
    worker_signal_.notify();  // a syscall only when a worker sleeps
  } else if (config_.dispatch == DispatchMode::Poll) {
    // Nothing: the host's thread polls published_queries() while the series runs.
  } else if (!drain_pending_.exchange(true, std::memory_order_seq_cst)) {
    host_->wake();
  }
}

}  // namespace loadgen

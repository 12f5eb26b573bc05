// One test run from start to end: settings -> loadable sets -> for each
// phase of the mode (test_plan.h) its series: generate, issue on the
// session's thread, wait for completions -> results -> logs.
// Host-neutral: the N-API binding (or a C++ test) implements SessionHost.
//
// The data path, one file each: scheduler (when a query is due) -> issuer
// (the one issuing primitive and stop rule) -> issue_loop (the issue
// thread) -> dispatch (to the SUT) -> recorder (completions) ->
// series_results -> run_log; series holds the records they share,
// find_peak the FindPeakPerformance search.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "accuracy_log.h"
#include "dispatch.h"
#include "find_peak.h"
#include "live_stats.h"
#include "recorder.h"
#include "run_log.h"
#include "run_outcome.h"
#include "series.h"
#include "session_host.h"
#include "settings.h"
#include "trace.h"
#include "wait.h"

namespace loadgen {

class Session {
 public:
  Session(SessionConfig config, SessionHost* host);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start();  // spawns the session thread
  void join();

  // ---- Called from the host's thread(s) while the run is active ----

  // False before the first series started.
  bool has_series() const { return current() != nullptr; }
  // Number of queries of the current series issued so far (acquire).
  uint64_t published_queries() const { return dispatch_.published_queries(); }
  // dispatch 'poll': published_queries(), except that when nothing beyond
  // `seen` is published the calling thread waits (yielding, spinning in the
  // last microseconds before a Server query is due) until something is, for
  // at most `window_ns`, or until `window_ns` past the due time of a Server
  // query due within `window_ns`.
  // In a Server series (not coalescing) the poller also issues a due query
  // the issue thread has not issued yet (it is late): one CAS on next_issue
  // decides who issues each query.
  uint64_t poll_published(uint64_t seen, int64_t window_ns) { return dispatch_.wait_published(seen, window_ns, true); }
  static constexpr int64_t kPollHardSpinNs = loadgen::kPollHardSpinNs;
  // Clears the pending-drain flag; call before reading published_queries() in a drain.
  void begin_drain() { dispatch_.begin_drain(); }
  // A wake-mode drain: begin_drain() and published_queries(), but when the
  // issue thread woke the host ahead of a Server query (wake_lead_ns before
  // it is due) and nothing beyond `seen` is published yet, first waits for
  // it (the drain is already running when it is published; the wake-up's
  // latency is hidden up to the lead).
  uint64_t drain_published(uint64_t seen) { return dispatch_.drain_published(seen); }
  // After a wake-mode drain with a wake lead: true when the next Server query
  // is due within the lead and no wake is pending, having marked a drain
  // pending (so the issue thread does not wake the host for it); the host
  // then stays and calls drain_published() again instead of returning to its
  // event loop. The host bounds how long it stays (kMaxDrainHoldNs).
  bool hold_drain_for_next_due() { return dispatch_.hold_drain_for_next_due(); }
  static constexpr int64_t kMaxDrainHoldNs = 1000000;
  // The same for registered issue thread `t` (see SessionHost::wake_issue_thread).
  void begin_thread_drain(uint64_t t) { dispatch_.begin_thread_drain(t); }
  // Whether the current series coalesces queries (server_coalesce_queries).
  bool coalescing() const {
    const Series* s = current();
    return s != nullptr && s->coalesce;
  }

  // The current series' start (its clock reading, the origin of its
  // figures) and whether it is a performance series, when its first id is
  // `first_id` and it has begun issuing (its start is published with its
  // first query); false otherwise. Any thread.
  bool series_start(uint64_t first_id, int64_t* start_ns, bool* performance) const {
    const Series* s = current();
    if (s == nullptr || s->first_id != first_id || s->published.load(std::memory_order_acquire) == 0) return false;
    *start_ns = s->start_ns;
    *performance = s->kind == SeriesKind::Performance;
    return true;
  }

  const QueryTrace& trace() const { return current()->trace; }
  bool performance_series() const { return current()->kind == SeriesKind::Performance; }
  uint64_t accuracy_sampled_count() const { return current()->accuracy_sampled_count; }
  // Copies the QSL indices of samples [first, first + count) of the current
  // series into `dest` when that series' first id is `first_id` and the
  // range lies within it; false otherwise (another series, or out of range).
  bool copy_sample_indices(uint64_t series_first_id, uint64_t first, uint64_t count, SampleIndex* dest) const {
    const Series* s = current();
    if (s == nullptr || s->first_id != series_first_id) return false;
    const std::vector<SampleIndex>& indices = s->trace.sample_index;
    if (first > indices.size() || count > indices.size() - first) return false;
    std::copy_n(indices.data() + first, count, dest);
    return true;
  }
  // Id of the current series' first sample: sample k has id first_id() + k.
  uint64_t first_id() const { return current()->first_id; }
  // Timestamps the moment queries first, first + stride, ... below `end`
  // are handed to the SUT (one clock reading). Ignores unissued queries.
  void mark_dispatched(uint64_t first, uint64_t end, uint64_t stride = 1) { dispatch_.mark_dispatched(first, end, stride); }
  void mark_dispatched(uint64_t q) { mark_dispatched(q, q + 1); }
  // Records completion of samples by id (one clock reading for the batch).
  // Ids are validated; bad ones are only counted.
  //
  // hand_over (SingleStream/MultiStream, from the thread that takes the
  // host's queries, i.e. drains them): when this call completes the query in
  // flight, it issues the next one itself (stamps its issue time, runs the
  // stop rule, publishes it) instead of leaving that to the issue thread,
  // and returns the new published_queries(); the caller must then hand that
  // query to the SUT (no wake() comes for it). Returns 0 otherwise.
  //
  // responses: the samples' response bytes; each accuracy-logged sample's
  // record is written in this call (Recorder::complete). Null: this call
  // writes no accuracy record.
  uint64_t complete(const double* ids, size_t count, bool hand_over = false, const ResponseBytes* responses = nullptr);
  uint64_t complete(const uint32_t* ids, size_t count, bool hand_over = false,
                    const ResponseBytes* responses = nullptr);
  // Same, with the completion time read by the caller before it gathered the
  // ids (now_ns() clock). A stamp outside [series start, now], or before the
  // sample's query was issued, is replaced by now.
  //
  // Under token latencies (not Offline), every completion call here fails a
  // sample that has no first token recorded as no_first_token (counted,
  // logged, the run INVALID), and a completion stamped before the sample's
  // first token counts as now (Recorder::complete).
  uint64_t complete_at(int64_t stamp_ns, const double* ids, size_t count, bool hand_over = false,
                       const ResponseBytes* responses = nullptr);
  // Token latencies: the same, with each sample's output token count
  // (n_tokens[i] for ids[i]; NaN counts as 0, fractions truncate). A stamp of
  // 0 means now. Without use_token_latencies the counts are ignored.
  uint64_t complete_with_tokens(int64_t stamp_ns, const double* ids, const double* n_tokens, size_t count,
                                bool hand_over = false, const ResponseBytes* responses = nullptr);
  uint64_t complete_with_tokens(int64_t stamp_ns, const uint32_t* ids, const double* n_tokens, size_t count,
                                bool hand_over = false, const ResponseBytes* responses = nullptr);
  // Sample `id` failed (a network SUT's HTTP error, reset, timeout, ...) at
  // `stamp_ns` (0 or outside [series start, now]: now): it completes exactly
  // as complete_at() completes it (the same id checks and hand-over), and
  // is counted by `kind`, its `message` (escaped, capped) becomes an error
  // line of the detail log, and the run is INVALID. Failed samples are left
  // out of the latency, token and throughput statistics. Any thread.
  uint64_t fail(int64_t stamp_ns, double id, FailureKind kind, const std::string& message, bool hand_over = false);
  // The first token of sample `id` arrived at `stamp_ns` (now_ns() clock; 0,
  // outside [series start, now] or before the sample's query was issued means now). `data` (the first-token response)
  // is copied only for accuracy-logged samples. No effect without
  // use_token_latencies; bad ids are counted like completion ids.
  void first_token(double id, int64_t stamp_ns, const uint8_t* data = nullptr, size_t size = 0) {
    recorder_.first_token(id, stamp_ns, data, size);
  }
  // Whether the run records token latencies (use_token_latencies).
  bool token_latencies() const { return settings_.use_token_latencies; }
  // ---- Worker dispatch (config dispatch == Worker), from any worker thread ----
  // Claims the next published, unclaimed work of the current series: one
  // query (all due queries with server_coalesce_queries; an Offline query is
  // split into dispatch_workers parts) and stamps its dispatched time. Spins
  // `spin_ns`, then sleeps on a futex, at most `wait_ns` in total. Returns
  // kDispatchClaimed with `out` set; kDispatchSeriesEnded when the series
  // whose first id is not `flushed_first_id` has published its last query
  // and nothing is left to claim (the worker flushes, then passes that id);
  // kDispatchIdle when the wait timed out; kDispatchOver when the run ended.
  // A spinning worker issues a due Server query the issue thread is late for.
  static constexpr int kDispatchClaimed = loadgen::kDispatchClaimed, kDispatchIdle = loadgen::kDispatchIdle,
                       kDispatchSeriesEnded = loadgen::kDispatchSeriesEnded, kDispatchOver = loadgen::kDispatchOver;
  int dispatch_next(uint64_t flushed_first_id, int64_t spin_ns, int64_t wait_ns, DispatchClaim* out) {
    return dispatch_.dispatch_next(flushed_first_id, spin_ns, wait_ns, out);
  }
  // Samples of the current series issued but not completed (a worker blocks
  // only briefly while some are outstanding: their async completions may
  // need its event loop).
  uint64_t outstanding_samples() const { return dispatch_.outstanding_samples(); }
  int64_t dispatch_spin_ns() const { return config_.dispatch_spin_ns; }

  // Ends the run early (the SUT or QSL failed). Safe from any thread.
  void abort(const std::string& reason);
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }
  // Ends the run early on request (a signal, an AbortSignal), not a failure:
  // issuing stops at once like the reference's early-outs ("Ending early:
  // <reason>"), queries already issued are waited for (up to the stall
  // limit), the remaining phases and FindPeak trials are skipped, every log
  // is written and the result is INVALID with `reason` among its reasons.
  // Safe from any thread; the first reason wins, later calls do nothing.
  void interrupt(const std::string& reason);
  bool interrupted() const { return interrupted_.load(std::memory_order_acquire); }

  // Live progress of the current series from counters and a histogram (any
  // thread, any time; never reads the per-sample records). live_stats.cc.
  LiveSnapshot progress() const;

  // ---- After finished() ----
  const RunOutcome& outcome() const { return outcome_; }

 private:
  Series* current() const { return current_.load(std::memory_order_acquire); }
  bool issuing_stopped() const { return issuing_stopped_.load(std::memory_order_acquire); }
  void run();
  void finish_run();
  // One phase of the mode: its sets, and the series of each round.
  void run_phase(SeriesKind kind);
  // One FindPeakPerformance trial at `qps` (find_peak.h, PeakTrials::run).
  bool run_peak_trial(double qps, bool load, bool unload, PeakTrialResult* result);
  // The failed samples by kind since the last call (a FindPeak trial's);
  // the recorder's messages move to peak_failure_messages_ on the way.
  FailedSampleCounts failures_since_last_trial();
  // Loads `set` (if `load`), generates, issues and waits for one series,
  // then unloads (if `unload`).
  Series* run_series(const LoadableSet& set, SeriesKind kind, bool load = true, bool unload = true);
  Series* prepare_series(const LoadableSet& set, SeriesKind kind);

  SessionConfig config_;
  SessionHost* host_;
  std::thread thread_;
  TestSettings settings_;  // after the test05 override
  EffectiveSettings effective_;
  SequenceState sequence_;
  std::vector<std::unique_ptr<Series>> series_;
  std::atomic<Series*> current_{nullptr};
  std::atomic<bool> aborted_{false};
  std::mutex abort_mutex_;  // outcome_.abort_reason, from any thread
  std::atomic<bool> interrupted_{false};
  std::mutex interrupt_mutex_;    // orders interrupt() calls: the first reason wins
  std::string interrupt_reason_;  // written once, before interrupted_ is set (release)
  bool interrupt_logged_ = false;  // an issue loop logged its stop for it (session thread)
  // Aborted or interrupted: nobody issues another query (the issue loop, a
  // hand-over, the poller, a spinning worker). Set after either flag.
  std::atomic<bool> issuing_stopped_{false};
  // completion_timeout_ms, capped by max_duration_ms when that is set; 0 = none.
  int64_t stall_limit_ns_ = 0;
  bool clock_check_ = false;  // the performance phase: measure PerfClock vs system_clock around its series
  Signal completions_;        // the issue thread waits on it; completing calls notify it
  RunOutcome outcome_;
  // FindPeak: failed-sample counts at the end of the last trial, and the
  // messages taken from the recorder so far (in order; the detail log gets
  // them at the end, before the rest).
  FailedSampleCounts peak_failures_seen_;
  std::vector<FailureMessage> peak_failure_messages_;
  AccuracyLog accuracy_log_;
  LiveStats live_;  // progress(): fed by the completion paths
  RunLog log_{outcome_};
  Recorder recorder_{current_, issuing_stopped_, completions_, live_, accuracy_log_};
  Dispatch dispatch_{config_, host_, current_, aborted_, issuing_stopped_, recorder_};
};

}  // namespace loadgen

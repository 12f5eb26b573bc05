// One test run from start to end: settings -> loadable set -> trace -> issue
// loop on a dedicated thread -> wait for completions -> results and summary.
// Host-neutral: the N-API binding (or a C++ test) implements SessionHost.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "accuracy_log.h"
#include "chrome_trace.h"
#include "detail_log.h"
#include "live_stats.h"
#include "results.h"
#include "scratch_array.h"
#include "settings.h"
#include "trace.h"
#include "wait.h"

namespace loadgen {

// What the session needs from its host. All calls come from the session's
// own thread, never concurrently.
class SessionHost {
 public:
  virtual ~SessionHost() = default;
  // QSL calls; block until done. Return false with `error` set to abort the run.
  virtual bool load_samples(const std::vector<SampleIndex>& indices, std::string* error) = 0;
  virtual bool unload_samples(const std::vector<SampleIndex>& indices, std::string* error) = 0;
  // The series' trace is final; queries are published after this returns.
  virtual void series_started() = 0;
  // Queries were published while no drain was pending: the host must call
  // Session::begin_drain() and then take every query below published_queries().
  virtual void wake() = 0;
  // After the last query of the series was published (the SUT's FlushQueries).
  virtual void flush_queries() = 0;
  // The run is over and outcome() is final. Last call of the session thread.
  virtual void finished() = 0;

  // ---- Registered issue-query threads (spec/30 §6); a host without them keeps the defaults ----
  // server_num_issue_query_threads = n > 0, before each series (any scenario,
  // as the reference): waits up to `timeout_ms` until at least n threads are
  // registered, then returns the registered threads' ids in registration order.
  virtual std::vector<uint64_t> wait_for_issue_threads(uint64_t n, int64_t timeout_ms) { return {}; }
  // Server: this series' query q goes to registered thread q % count (0: none,
  // queries go through wake()). Called before the series' first query.
  virtual void use_issue_threads(uint64_t count) {}
  // Queries for issue thread `t` were published while it had no drain pending:
  // the host must call Session::begin_thread_drain(t), then take that thread's
  // queries below published_queries().
  virtual void wake_issue_thread(uint64_t t) {}

  // ---- Dispatch workers (SessionConfig::dispatch == Worker) ----
  // Before the first series: waits up to `timeout_ms` until at least n worker
  // threads are registered and returns their ids (registration order). The
  // workers then take queries with Session::dispatch_next() on their own.
  virtual std::vector<uint64_t> wait_for_dispatch_workers(uint64_t n, int64_t timeout_ms) { return {}; }
};

// How queries reach the SUT (the `dispatch` setting; README "Dispatch modes").
enum class DispatchMode : int {
  Wake = 0,    // publish, and host_->wake() when no drain is pending
  Poll = 1,    // publish only: the host's thread polls published_queries()
  Worker = 2,  // publish and notify: worker threads claim with dispatch_next()
};

// What Session::dispatch_next() handed a worker.
struct DispatchClaim {
  uint64_t first_id = 0;      // the series' first sample id (identifies the series)
  uint64_t first_sample = 0;  // claimed samples [first_sample, first_sample + samples) of the series
  uint64_t samples = 0;
};

struct LogOutputSettings {
  std::string outdir = ".";
  std::string prefix = "mlperf_log_";
  std::string suffix;
  bool prefix_with_datetime = false;
  bool copy_summary_to_stdout = false;
  bool copy_detail_to_stdout = false;
  bool enable_trace = false;  // mlperf_log_trace.json (created empty when false)
};

struct SessionConfig {
  TestSettings settings;
  uint64_t qsl_total_count = 0;
  uint64_t qsl_performance_count = 0;
  std::string sut_name;
  std::string qsl_name;
  // The "null-native" SUT: every query is completed on the issue thread right
  // after it is issued; the host's wake()/flush_queries() are never called.
  bool complete_on_issue_thread = false;
  // false: the QSL lives in the core (nothing to load), load_samples is not called.
  bool host_loads_samples = true;
  int issue_thread_cpu = -1;
  // Longest wait with samples outstanding and no completion arriving (0 = forever).
  uint64_t completion_timeout_ms = 60000;
  // How long each series waits for server_num_issue_query_threads registrations
  // (the reference's fixed 10 s; tests shorten it).
  int64_t issue_thread_wait_ms = 10000;
  DispatchMode dispatch = DispatchMode::Wake;
  uint64_t dispatch_workers = 1;  // Worker: threads that must register before the run
  // Worker: how long a worker spins for a query (dispatchSpinUs): Server,
  // from that long before the next query is due; otherwise once idle, before it sleeps.
  int64_t dispatch_spin_ns = 0;
  // Wake, Server: wake the host this long before a query is due and let its
  // drain wait for it (wakeLeadUs; 0: wake when it is published).
  int64_t wake_lead_ns = 0;
  LogOutputSettings log;
  // Messages of what happened to the settings before the run (the audit.config
  // warning and its FromConfig errors): logged right after the detail-log
  // header, where the reference's StartTest logs them (spec/00 §6 step 9).
  std::vector<LogMessage> pre_run_messages;
};

// Ids that completion calls rejected, by reason. Never written to records.
struct CompletionErrorCounts {
  uint64_t invalid_ids = 0;    // not an integer id of this run
  uint64_t unissued_ids = 0;   // a sample of this run not issued yet
  uint64_t duplicate_ids = 0;  // completed before
  double first_invalid_id = 0;
  double first_duplicate_id = 0;
  // Token latencies (spec/30 §9, spec/60 §1.2), one per offending sample.
  uint64_t first_token_after_completion = 0;  // firstTokenComplete after the sample completed
  uint64_t duplicate_first_tokens = 0;        // a second firstTokenComplete
  uint64_t missing_first_tokens = 0;          // completed without a first token (not Offline)
  uint64_t zero_tokens = 0;                   // n_tokens missing or 0
  uint64_t negative_tokens = 0;               // n_tokens < 0 (counted as 0)
  uint64_t one_token = 0;                     // n_tokens == 1 (counted as 0)
};

// Distribution of one overhead measure over the queries of a series (ns).
struct OverheadStats {
  uint64_t count = 0;
  int64_t p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
  double mean = 0;
};

// The loadgen's own share of the latency, per query of the reported series.
// "Due" is when the query should have reached the SUT: its scheduled time
// (Server), the start of issuing (Offline), or the completion of the
// previous query (SingleStream/MultiStream; the start for the first).
struct RunOverhead {
  bool present = false;
  OverheadStats issue_lateness;  // issued - due
  bool has_delivery_lag = false;  // false for the null-native SUT (nothing is delivered)
  OverheadStats delivery_lag;     // SUT received (dispatched) - due
};

// One FindPeakPerformance trial (a full performance run at `target_qps`).
struct PeakTrial {
  double target_qps = 0;
  bool perf_constraints_met = false;
  int64_t target_percentile_latency_ns = 0;
  uint64_t queries_issued = 0;
  RunOverhead overhead;
};

struct RunOutcome {
  Mode mode = Mode::PerformanceOnly;  // after the test05 override
  bool has_summary = false;
  PerformanceSummary summary;
  EffectiveSettings effective;
  std::string test_datetime;
  std::string summary_path;
  std::string summary_text;
  std::string detail_log_path;
  std::string accuracy_log_path;
  uint64_t accuracy_log_records = 0;
  std::vector<LogMessage> messages;  // errors, warnings and notable events, in order
  uint64_t error_count = 0;
  uint64_t warning_count = 0;
  bool aborted = false;
  std::string abort_reason;
  // Why the result is INVALID beyond the reference's four checks.
  std::vector<std::string> extra_invalid_reasons;
  // Over every series of the run (accuracy rounds and the performance run).
  uint64_t series_count = 0;
  uint64_t generated_query_count = 0;
  uint64_t generated_sample_count = 0;
  uint64_t issued_query_count = 0;
  uint64_t issued_sample_count = 0;
  uint64_t completed_sample_count = 0;
  uint64_t incomplete_sample_count = 0;
  CompletionErrorCounts completion_errors;
  int64_t issue_duration_ns = 0;  // performance series: start of issuing to the last completion
  RunOverhead overhead;
  // FindPeakPerformance: every trial in order, and the peak found (0 if none).
  std::vector<PeakTrial> peak_trials;
  double peak_qps = 0;
};

// One issuing series: an accuracy round or the performance run. Everything
// the completing threads touch lives here and is never freed before the
// session, so a late completion can only be rejected, never use freed memory.
// Why a Server series with poll_issue stopped issuing (Series::end_reason).
enum ServerEnd : int { kServerEndNone = 0, kServerEndLastQuery, kServerEndTooManyOutstanding, kServerEndMaxQueries, kServerEndMaxDuration };

struct Series {
  SeriesKind kind = SeriesKind::Performance;
  QueryTrace trace;
  std::vector<SampleIndex> loaded_set;  // what was loaded for it (FindPeak keeps one set loaded)
  uint64_t samples_per_query = 1;
  uint64_t sample_count = 0;
  uint64_t first_id = 1;  // id of sample 0 (sample sequence id + 1)
  int64_t start_ns = 0;
  int64_t wall_start_ns = 0;  // system clock at start_ns (power_begin)
  // Per query, relative to start_ns.
  std::unique_ptr<int64_t[]> issued_ns;
  std::unique_ptr<int64_t[]> dispatched_ns;
  // Per query, only when a query has more than one sample.
  std::unique_ptr<std::atomic<uint32_t>[]> outstanding;
  std::unique_ptr<std::atomic<int64_t>[]> query_done_ns;
  // Per sample: completion time relative to start_ns, or kNotCompleted.
  std::unique_ptr<std::atomic<int64_t>[]> completed_ns;
  std::atomic<uint64_t> published{0};
  std::atomic<uint64_t> done_queries{0};
  std::atomic<uint64_t> completed_samples{0};
  uint64_t issued_queries = 0;
  // Registered issue threads receiving this series' queries (query q goes to
  // thread q % issue_stride); 0: the host's own thread gets every query.
  uint64_t issue_stride = 0;
  // server_coalesce_queries (Server only, spec/30 §7): queries already due
  // when one is issued are published with it, and a host drain hands its
  // whole backlog (all due) to the SUT in one IssueQuery call per thread.
  bool coalesce = false;
  // Worker dispatch: samples handed to workers so far (claims never overlap),
  // and whether the last query of the series was published.
  std::atomic<uint64_t> claimed_samples{0};
  std::atomic<bool> issuing_ended{false};
  // SingleStream/MultiStream hand-over (Session::complete with hand_over):
  // the completing call that makes the next query due may issue it itself.
  // next_issue: how many queries were claimed for issuing, by the issue
  // thread or a completing call (one CAS per query decides who issues it);
  // kHandOverClosed once the issue loop is over. issue_ended: set, before its
  // publication, with the query after which the stop checks end issuing.
  static constexpr uint64_t kHandOverClosed = UINT64_MAX;
  bool hand_over = false;
  std::atomic<uint64_t> next_issue{0};
  std::atomic<bool> issue_ended{false};
  // dispatch 'poll', Server, not coalescing: the polling thread may issue a
  // due query before a late issue thread does (Session::poll_issue_due);
  // next_issue and issue_ended as for hand_over, and why issuing ends
  // (ServerEnd) with the figures its log message names.
  bool poll_issue = false;
  std::atomic<int> end_reason{0};
  uint64_t end_outstanding = 0;  // written before issue_ended (release)
  int64_t end_elapsed_ns = 0;
  // Completion calls with hand_over under way: the issue thread leaves a
  // done query's successor to them (it claims only when none is).
  std::atomic<uint32_t> handing_over{0};
  // The stop checks' limits (spec/30 §4), copied for completing threads.
  uint64_t stop_min_queries = 0, stop_max_queries = 0;
  int64_t stop_target_ns = 0, stop_max_ns = 0;
  // use_token_latencies only (null otherwise: 16 bytes a sample matter). Per
  // sample: first-token time relative to start_ns (kNotCompleted until
  // recorded) and the n_tokens its completion reported (0 = none).
  std::unique_ptr<std::atomic<int64_t>[]> first_token_ns;
  std::unique_ptr<std::atomic<int64_t>[]> n_tokens;
  // Token mode outside Offline: first tokens are expected and accuracy
  // records carry token_data (a copy, so completing threads never read effective_).
  bool needs_first_token = false;
  // First-token response bytes of accuracy-logged samples (the record's
  // token_data), by sample index; only sampled samples are ever cached.
  std::mutex token_data_mutex;
  std::unordered_map<uint64_t, std::vector<uint8_t>> token_data;

  static constexpr int64_t kNotCompleted = INT64_MIN;
  bool query_done(uint64_t q) const { return query_done_time(q) != kNotCompleted; }
  int64_t query_done_time(uint64_t q) const {
    if (samples_per_query == 1) return completed_ns[q].load(std::memory_order_acquire);
    return query_done_ns[q].load(std::memory_order_acquire);
  }
};

// Per issued query of `series`, `times[q]` (issued_ns or dispatched_ns)
// minus when the query was due (RunOverhead); queries without a time, or
// whose predecessor never completed, are left out.
ScratchArray<int64_t> times_since_due(const Series& series, Scenario scenario, const int64_t* times);

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
  uint64_t published_queries() const;
  // dispatch 'poll': published_queries(), except that when nothing beyond
  // `seen` is published the calling thread waits (yielding, spinning in the
  // last microseconds before a Server query is due) until something is, for
  // at most `window_ns`, or until `window_ns` past the due time of a Server
  // query due within `window_ns`.
  // In a Server series (not coalescing) the poller also issues a due query
  // the issue thread has not issued yet (it is late): one CAS on next_issue
  // decides who issues each query.
  uint64_t poll_published(uint64_t seen, int64_t window_ns) { return wait_published(seen, window_ns, true); }
  static constexpr int64_t kPollHardSpinNs = 10000;
  // Clears the pending-drain flag; call before reading published_queries() in a drain.
  void begin_drain() { drain_pending_.store(false, std::memory_order_seq_cst); }
  // A wake-mode drain: begin_drain() and published_queries(), but when the
  // issue thread woke the host ahead of a Server query (wake_lead_ns before
  // it is due) and nothing beyond `seen` is published yet, first waits for
  // it (the drain is already running when it is published; the wake-up's
  // latency is hidden up to the lead).
  uint64_t drain_published(uint64_t seen);
  // After a wake-mode drain with a wake lead: true when the next Server query
  // is due within the lead and no wake is pending, having marked a drain
  // pending (so the issue thread does not wake the host for it); the host
  // then stays and calls drain_published() again instead of returning to its
  // event loop. The host bounds how long it stays (kMaxDrainHoldNs).
  bool hold_drain_for_next_due();
  static constexpr int64_t kMaxDrainHoldNs = 1000000;
  // The same for registered issue thread `t` (see SessionHost::wake_issue_thread).
  void begin_thread_drain(uint64_t t) {
    if (t < thread_drain_capacity_) thread_drain_pending_[t].store(false, std::memory_order_seq_cst);
  }
  // Whether the current series coalesces queries (server_coalesce_queries).
  bool coalescing() const {
    const Series* s = current();
    return s != nullptr && s->coalesce;
  }

  const QueryTrace& trace() const { return current()->trace; }
  // Id of the current series' first sample: sample k has id first_id() + k.
  uint64_t first_id() const { return current()->first_id; }
  // Timestamps the moment query `q` is handed to the SUT. Ignores unissued queries.
  void mark_dispatched(uint64_t q);
  // Records completion of samples by id (one clock reading for the batch).
  // Ids are validated; bad ones are only counted.
  //
  // hand_over (SingleStream/MultiStream, from the thread that takes the
  // host's queries, i.e. drains them): when this call completes the query in
  // flight, it issues the next one itself (stamps its issue time, runs the
  // stop checks, publishes it) instead of leaving that to the issue thread,
  // and returns the new published_queries(); the caller must then hand that
  // query to the SUT (no wake() comes for it). Returns 0 otherwise.
  uint64_t complete(const double* ids, size_t count, bool hand_over = false);
  uint64_t complete(const uint32_t* ids, size_t count, bool hand_over = false);
  // Same, with the completion time read by the caller before it gathered the
  // ids (now_ns() clock). A stamp outside [series start, now] is replaced by now.
  uint64_t complete_at(int64_t stamp_ns, const double* ids, size_t count, bool hand_over = false);
  // Token latencies: the same, with each sample's output token count
  // (n_tokens[i] for ids[i]; NaN counts as 0, fractions truncate). A stamp of
  // 0 means now. Without use_token_latencies the counts are ignored.
  uint64_t complete_with_tokens(int64_t stamp_ns, const double* ids, const double* n_tokens, size_t count,
                                bool hand_over = false);
  uint64_t complete_with_tokens(int64_t stamp_ns, const uint32_t* ids, const double* n_tokens, size_t count,
                                bool hand_over = false);
  // The first token of sample `id` arrived at `stamp_ns` (now_ns() clock; 0 or
  // outside [series start, now] means now). `data` (the first-token response)
  // is copied only for accuracy-logged samples. No effect without
  // use_token_latencies; bad ids are counted like completion ids.
  void first_token(double id, int64_t stamp_ns, const uint8_t* data = nullptr, size_t size = 0);
  // Whether the run records token latencies (use_token_latencies).
  bool token_latencies() const { return settings_.use_token_latencies; }
  // The response bytes of a completed sample: written to the accuracy log if
  // the sample is selected for it (accuracy mode: all). Returns true if logged.
  bool log_response(double id, const uint8_t* data, size_t size);
  // ---- Worker dispatch (config dispatch == Worker), from any worker thread ----
  // Claims the next published, unclaimed work of the current series: one
  // query (all due queries with server_coalesce_queries; an Offline query is
  // split into dispatch_workers parts) and stamps its dispatched time. Spins
  // `spin_ns`, then sleeps on a futex, at most `wait_ns` in total. Returns
  // kDispatchClaimed with `out` set; kDispatchSeriesEnded when the series
  // whose first id is not `flushed_first_id` has published its last query
  // and nothing is left to claim (the worker flushes, then passes that id);
  // kDispatchIdle when the wait timed out; kDispatchOver when the run ended.
  static constexpr int kDispatchClaimed = 1, kDispatchIdle = 0, kDispatchSeriesEnded = -1, kDispatchOver = -2;
  int dispatch_next(uint64_t flushed_first_id, int64_t spin_ns, int64_t wait_ns, DispatchClaim* out);
  // Samples of the current series issued but not completed (a worker blocks
  // only briefly while some are outstanding: their async completions may
  // need its event loop).
  uint64_t outstanding_samples() const;
  int64_t dispatch_spin_ns() const { return config_.dispatch_spin_ns; }

  // Ends the run early (the SUT or QSL failed). Safe from any thread.
  void abort(const std::string& reason);
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }

  // Live progress of the current series from counters and a histogram (any
  // thread, any time; never reads the per-sample records). live_stats.cc.
  LiveSnapshot progress() const;

  // ---- After finished() ----
  const RunOutcome& outcome() const { return outcome_; }

 private:
  Series* current() const { return current_.load(std::memory_order_acquire); }
  // When the next unpublished query of `series` is due (now_ns() clock):
  // Server only, and -1 when unknown (nothing published yet, so start_ns may
  // not be visible to this thread; or every query published).
  int64_t next_due_ns(const Series& series) const;
  // poll_published(); with `when_idle` false it only waits for a Server
  // query due within `window_ns` (and returns at once otherwise).
  uint64_t wait_published(uint64_t seen, int64_t window_ns, bool when_idle);
  // dispatch 'poll', Server: issues query `p` from the polling thread when it
  // is due and still unclaimed. Returns the new published count, 0 if not.
  uint64_t poll_issue_due(Series& series, uint64_t p);
  // Server with poll_issue: whether issuing ends after `issued` queries,
  // decided by whoever issues the last one, before publishing it (the
  // other thread must not issue past it); the issue thread logs why.
  void decide_server_end(Series& series, uint64_t issued, int64_t elapsed) const;
  void run();
  void run_accuracy(uint64_t qsl_total);
  void run_performance(uint64_t qsl_total);
  void run_find_peak(uint64_t qsl_total);
  // One FindPeakPerformance trial at `qps`: derives its settings, then loads
  // (if `load`), runs and unloads (if `unload`) its performance set.
  bool run_peak_trial(double qps, bool load, bool unload, PerformanceSummary* summary);
  // Loads `set` (if `load`), generates, issues and waits for one series,
  // then unloads (if `unload`).
  Series* run_series(const LoadableSet& set, SeriesKind kind, bool load = true, bool unload = true);
  Series* prepare_series(const LoadableSet& set, SeriesKind kind);
  void issue_queries(Series& series);
  template <typename Ready>
  bool wait_with_stall_limit(Series& series, Ready ready);
  void complete_on_issue_thread(Series& series, uint64_t q, int64_t t);
  int64_t scheduled_ns(const Series& series, uint64_t q) const;
  PerformanceSummary summarize_series(Series& series);
  RunOverhead measure_overhead(const Series& series) const;
  void write_detail_header();
  void write_series_footer(const Series& series);
  void write_completion_errors();
  void write_detail_results();
  void write_summary();
  // mlperf_log_trace.json: one series' samples from its records.
  void write_trace_series(const Series& series);
  // print_timestamps lines and the PerfClock/system_clock check (spec/00 §6.1).
  void check_perf_clocks(int64_t pc_start, int64_t sc_start, int64_t pc_stop, int64_t sc_stop);
  // Waits for server_num_issue_query_threads registrations; returns the stride.
  uint64_t attach_issue_threads();
  uint64_t errors_so_far();
  void log(const std::string& key, const std::string& text, bool is_error, bool is_warning);
  // Tokens = void: the plain completion path (no token bookkeeping at all).
  template <typename Tokens, typename Id>
  uint64_t complete_ids(int64_t stamp, const Id* ids, const Tokens* n_tokens, size_t count, bool hand_over);
  // SingleStream/MultiStream: whether the stop checks end issuing after
  // `issued` queries, the last issued `elapsed` ns after the start (or the
  // trace ran out). Mirrors the issue loop's checks.
  static bool sequence_ends(const Series& series, uint64_t issued, int64_t elapsed);
  // A completing call issues the next query if it is due and unclaimed;
  // returns the new published count, or 0.
  uint64_t hand_over_next(Series& series);
  int64_t clamp_stamp(int64_t stamp_ns) const;
  // Token errors of a finished series (spec/30 §9), counted into outcome_.
  void check_tokens(const Series& series);
  // Its TTFT/TPOT/token-count arrays in sample-id order (no error counting).
  void fill_token_results(const Series& series, SeriesResult* raw) const;

  SessionConfig config_;
  SessionHost* host_;
  std::thread thread_;
  TestSettings settings_;  // after the test05 override
  EffectiveSettings effective_;
  SequenceState sequence_;
  std::vector<std::unique_ptr<Series>> series_;
  std::atomic<Series*> current_{nullptr};
  AccuracyLog accuracy_log_;
  DetailLog detail_;
  uint64_t completion_error_lines_ = 0;  // detail-log lines written for rejected ids

  // completion_timeout_ms, capped by max_duration_ms when that is set; 0 = none.
  int64_t stall_limit_ns_ = 0;
  std::atomic<bool> drain_pending_{false};
  // Where the issue thread last waited for a Server query (wait_published
  // spins only on another CPU). -2: not yet known.
  std::atomic<int> issue_thread_cpu_{-2};
  // One pending-drain flag per registered issue thread; sized once per run
  // (server_num_issue_query_threads) so the array never moves while hosts read it.
  std::unique_ptr<std::atomic<bool>[]> thread_drain_pending_;
  uint64_t thread_drain_capacity_ = 0;
  uint64_t issue_threads_logged_ = 0;  // "Registered IssueQueryThread" lines written
  ChromeTrace chrome_trace_;
  bool clock_check_ = false;  // run_performance: measure PerfClock vs system_clock around its series
  std::atomic<bool> aborted_{false};
  std::atomic<uint64_t> invalid_ids_{0};
  std::atomic<uint64_t> unissued_ids_{0};
  std::atomic<uint64_t> duplicate_ids_{0};
  std::atomic<double> first_invalid_id_{0};
  std::atomic<double> first_duplicate_id_{0};
  std::atomic<uint64_t> first_token_after_completion_{0};
  std::atomic<uint64_t> duplicate_first_tokens_{0};
  Signal signal_;
  // Worker dispatch: notified on every publish (a futex wake only when a
  // worker sleeps), at each series' end and when the run ends.
  Signal dispatch_signal_;
  uint64_t dispatch_parts_ = 1;  // registered workers: an Offline query is split into this many claims
  bool dispatch_attached_ = false;
  // Workers inside dispatch_next(): one that is inside has finished the
  // synchronous JS of its last claim, including the accuracy-log calls that
  // follow a completion (see quiesce_dispatch_workers()).
  std::atomic<uint64_t> dispatch_inside_{0};
  void quiesce_dispatch_workers();
  // Worker dispatch, before the first series: waits for the registrations; false aborts the run.
  bool attach_dispatch_workers();
  std::atomic<bool> run_over_{false};
  bool claim(Series& series, DispatchClaim* out);

  LiveStats live_;  // progress(): fed by the completion paths
  std::mutex messages_mutex_;  // messages come from the session thread and abort()
  RunOutcome outcome_;
};

}  // namespace loadgen

// What a session needs from its host (the N-API binding or a C++ test) and
// how it is configured: the host interface, dispatch modes and the run's
// configuration. Plain types; the session itself is in session.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "native_sut.h"
#include "trace.h"

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
  // The same, with a SUT inside the core (SessionConfig::native_sut): its
  // queries never pass through the host, but its responses do (the host
  // logs their bodies and counts their tokens by the series), and they may
  // reach the host on another path than this call. So the series is the
  // host's before its first query is issued: returns once the host has taken
  // it; false, with `error` set, aborts the run.
  virtual bool await_series_started(std::string* error) {
    series_started();
    return true;
  }
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
  // loadgen_report_data.json (report.html's data). false: the folder gets
  // exactly the reference's files (a submission's file-list check rejects others).
  bool report_data = true;
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
  // A SUT inside the core (the native HTTP client, http_sut.h): the issue
  // thread hands it each query (never the host's wake()/flush_queries());
  // it completes samples through the session from its own threads.
  std::shared_ptr<NativeSut> native_sut;
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

}  // namespace loadgen

// One issuing series (an accuracy round or the performance run): its trace,
// the per-query and per-sample records, and the state of the lock-free issue
// protocol that the issue thread, completing calls, the poller and dispatch
// workers share. Everything the completing threads touch lives here and is
// never freed before the session, so a late completion can only be rejected,
// never use freed memory.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "settings.h"
#include "trace.h"

namespace loadgen {

// Why issuing a series ends (the stop rule, stop_rule.h, decides it).
enum class StopReason : int {
  None = 0,
  LastQuery,           // every generated query is issued (non-Server performance: "ran out")
  Natural,             // min query count and min duration met (not Server)
  TooManyOutstanding,  // Server: more than max_async_queries outstanding
  MaxQueries,          // max_query_count reached
  MaxDuration,         // max_duration passed
};

// The effective limits a series stops on (0: no limit where noted).
struct StopLimits {
  uint64_t min_queries = 0;
  uint64_t max_queries = 0;  // 0: none
  uint64_t max_async = 0;    // Server only; 0: none
  int64_t target_ns = 0;     // min duration
  int64_t max_ns = 0;        // 0: none
};

// A stop decision with the figures its log message names.
struct StopDecision {
  StopReason reason = StopReason::None;
  uint64_t outstanding = 0;  // TooManyOutstanding
  int64_t elapsed_ns = 0;    // the issue time of the last query, from the series start
  uint64_t issued = 0;       // queries issued when it was decided (the last one's index + 1)
};

struct Series {
  SeriesKind kind = SeriesKind::Performance;
  Scenario scenario = Scenario::SingleStream;
  QueryTrace trace;
  std::vector<SampleIndex> loaded_set;  // what was loaded for it (FindPeak keeps one set loaded)
  uint64_t samples_per_query = 1;
  uint64_t sample_count = 0;
  // Id of sample 0; sample k has id first_id + k. From reserve_sample_ids:
  // unique within the process, so any id below it is stale (see there).
  uint64_t first_id = 1;
  int64_t start_ns = 0;
  int64_t wall_start_ns = 0;  // system clock at start_ns (power_begin)
  // Per query, relative to start_ns.
  std::unique_ptr<int64_t[]> issued_ns;
  // Atomic (relaxed: nothing is ordered by it) because a host thread may
  // stamp a query while the session reads the stamps after a completion
  // timeout or an abort, with no completion to order the two (found by TSan).
  std::unique_ptr<std::atomic<int64_t>[]> dispatched_ns;
  // Per query, only when a query has more than one sample.
  std::unique_ptr<std::atomic<uint32_t>[]> outstanding;
  std::unique_ptr<std::atomic<int64_t>[]> query_done_ns;
  // Per sample: completion time relative to start_ns, or kNotCompleted.
  std::unique_ptr<std::atomic<int64_t>[]> completed_ns;
  std::atomic<uint64_t> done_queries{0};
  std::atomic<uint64_t> completed_samples{0};
  uint64_t issued_queries = 0;  // final, once issuing ended

  // ---- The issue protocol (issuer.h) ----
  // Queries published so far: [0, published) are issued and visible (release
  // store by their issuer, acquire load by every reader).
  std::atomic<uint64_t> published{0};
  // Where another thread may issue (hand_over, poll_issue): how many queries
  // were claimed for issuing (one CAS per query decides who issues it);
  // kHandOverClosed once the issue loop is over.
  static constexpr uint64_t kHandOverClosed = UINT64_MAX;
  std::atomic<uint64_t> next_issue{0};
  // Set with `end` by the issuer of the query after which issuing ends,
  // before that query's publication (nobody may claim past it).
  std::atomic<bool> issue_ended{false};
  StopDecision end;  // written before issue_ended (release), read after it (acquire)
  StopLimits limits;  // fixed before the first publication
  // SingleStream/MultiStream: the completing call that makes the next query
  // due may issue it (Session::complete with hand_over).
  bool hand_over = false;
  // Server, dispatch 'poll' or spinning workers, not coalescing: the polling
  // thread may issue a due query before a late issue thread does.
  bool poll_issue = false;
  bool others_issue() const { return hand_over || poll_issue; }
  // Completion calls with hand_over under way: the issue thread leaves a
  // done query's successor to them (it claims only when none is).
  std::atomic<uint32_t> handing_over{0};
  // Where the issue thread last waited for a Server query (the poller spins
  // only on another CPU). -2: not yet known.
  std::atomic<int> issue_thread_cpu{-2};
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

  // ---- Token latencies ----
  // use_token_latencies only (null otherwise: 16 bytes a sample matter). Per
  // sample: first-token time relative to start_ns (kNotCompleted until
  // recorded) and the n_tokens its completion reported (0 = none).
  std::unique_ptr<std::atomic<int64_t>[]> first_token_ns;
  std::unique_ptr<std::atomic<int64_t>[]> n_tokens;
  // Token mode outside Offline: first tokens are expected and accuracy
  // records carry token_data (a copy, so completing threads never read the settings).
  bool needs_first_token = false;
  // First-token response bytes of accuracy-logged samples (the record's
  // token_data), by sample index; only sampled samples are ever cached.
  std::mutex token_data_mutex;
  std::unordered_map<uint64_t, std::vector<uint8_t>> token_data;

  // ---- Failed samples (Session::fail) ----
  // Indices of the samples completed as failed, in arrival order. Failures
  // are off the normal path, so a lock is fine; read after the series
  // (failed_sample_mask) to leave them out of the statistics.
  mutable std::mutex failed_mutex;
  std::vector<uint64_t> failed_samples;

  // Samples whose response goes to the accuracy log (trace.accuracy_log_sampled
  // counted once, before timing: hosts skip the lookup when 0). Last: the
  // fields above keep the layout the issue protocol's timings were measured with.
  uint64_t accuracy_sampled_count = 0;

  static constexpr int64_t kNotCompleted = INT64_MIN;
  bool query_done(uint64_t q) const { return query_done_time(q) != kNotCompleted; }
  int64_t query_done_time(uint64_t q) const {
    if (samples_per_query == 1) return completed_ns[q].load(std::memory_order_acquire);
    return query_done_ns[q].load(std::memory_order_acquire);
  }
};

// Takes `count` consecutive sample ids from one process-wide counter and
// returns the first. Ids start at 1 and are never reused within the process:
// every id below a series' first id was given to an earlier series (of this
// run or an earlier one), so a late completion of it is counted as stale and
// can never complete a sample of the current series. Ids stay below 2^53 (as
// doubles) for 9e15 samples; a Uint32Array holds them for the first ~4.29e9.
uint64_t reserve_sample_ids(uint64_t count);

// A series for `trace` with its records allocated (nothing issued, nothing
// completed), its ids reserved (reserve_sample_ids) and its stop limits set
// from `effective`. `trace` must hold at least one query.
std::unique_ptr<Series> make_series(const EffectiveSettings& effective, const TestSettings& settings,
                                    SeriesKind kind, QueryTrace trace);

// When query `q` was scheduled, relative to the series start: its scheduled
// time (Server), the start (Offline), or its issue time (SingleStream/MultiStream).
inline int64_t scheduled_ns(const Series& series, uint64_t q) {
  switch (series.scenario) {
    case Scenario::Server:
      return series.trace.scheduled_delta_ns[q];
    case Scenario::Offline:
      return 0;
    default:
      return series.issued_ns[q];
  }
}

}  // namespace loadgen

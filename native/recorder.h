// Completion: what the SUT reports back. Completion calls (any thread)
// record each sample's completion time, first token and token count into
// the series' preallocated records, count rejected ids, feed the live
// statistics and, where the SUT completes SingleStream/MultiStream queries
// on the thread that drains them, hand the next query over through the
// issuing primitive. Also the null-native SUT (completes on the issue
// thread) and the accuracy log's records. Every id is resolved by one
// function (resolve_id) before anything is touched.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include <mutex>
#include <string>
#include <vector>

#include "accuracy_log.h"
#include "failure_kinds.h"
#include "live_stats.h"
#include "run_outcome.h"
#include "series.h"
#include "wait.h"

namespace loadgen {

// The response bytes of the samples a completion call completes, for the
// accuracy log: read only for the samples it logs, after each one's
// completion is recorded (so the unlogged ones cost nothing). get(context,
// i, ...) gives the bytes of ids[i] (size 0: an empty response), or false
// when the caller's value is not bytes: no record is written for it (the
// caller reports that).
struct ResponseBytes {
  bool (*get)(void* context, size_t i, const uint8_t** data, size_t* size);
  void* context;
};

class Recorder {
 public:
  // `current`: the series completions go to; `issuing_stopped`: the run was
  // aborted or interrupted (no hand-over issues); `completions`: notified
  // when a query is done (the issue thread waits on it).
  Recorder(const std::atomic<Series*>& current, const std::atomic<bool>& issuing_stopped, Signal& completions,
           LiveStats& live, AccuracyLog& accuracy_log)
      : current_(current), issuing_stopped_(issuing_stopped), completions_(completions), live_(live),
        accuracy_log_(accuracy_log) {}

  // Records completion of samples by id at `stamp` (now_ns() clock). Ids are
  // validated; bad ones are only counted. Tokens = void: no token bookkeeping;
  // else n_tokens[i] for ids[i]. hand_over: see Session::complete. Returns the
  // new published count when this call issued the next query, else 0.
  // `failure`: the samples completed by this call failed (Session::fail).
  // `responses` (not with a failure; null: none): an accuracy-logged sample
  // gets its record here, in the completing call, before its query counts as
  // done; a duplicate completion of one writes another, as the reference's
  // does (spec/30 §8), and one that failed as no_first_token none.
  //
  // This is the one place that decides what a completed sample is:
  // - `caller_stamp` (the stamp is the SUT's, already clamp_stamp'ed): a
  //   stamp before the sample's query was issued is replaced by now, so no
  //   latency is ever below issue (the SUT passed an old clockNs() reading);
  // - token latencies outside Offline (Series::needs_first_token): a sample
  //   completed with no first token recorded fails as no_first_token (never
  //   a completed sample with no TTFT), and a completion stamped before its
  //   first token is replaced by now (a TPOT is never negative).
  struct Failure {
    FailureKind kind;
    const std::string* message;
  };
  template <typename Tokens, typename Id>
  uint64_t complete(int64_t stamp, bool caller_stamp, const Id* ids, const Tokens* n_tokens, size_t count,
                    bool hand_over, const Failure* failure = nullptr, const ResponseBytes* responses = nullptr);
  // A caller's stamp outside [series start, now] is replaced by now.
  int64_t clamp_stamp(int64_t stamp_ns) const;
  // The first token of sample `id` at `stamp_ns` (see Session::first_token).
  void first_token(double id, int64_t stamp_ns, const uint8_t* data, size_t size);
  // The null-native SUT: completes query `q` at `t` (from the series start)
  // on the issue thread, with the QSL index as its response.
  void complete_on_issue_thread(Series& series, uint64_t q, int64_t t);
  // The rejected-id counts so far (into the fields they own).
  void copy_error_counts(CompletionErrorCounts* out) const;
  // The failed-sample counts so far and the messages kept (moved out).
  void take_failures(FailedSampleCounts* counts, std::vector<FailureMessage>* messages);

 private:
  enum class IdStatus { Valid, Invalid, Stale, Unissued };
  // The one id resolution: sample `*k` of `series` for a completion id, if
  // it names a sample of the series (Stale: an id below the series' first,
  // i.e. of an earlier series or run, see reserve_sample_ids; Invalid
  // otherwise: not an integer id of it, or no series) that was issued
  // (Unissued: beyond `published` queries).
  template <typename Id>
  static IdStatus resolve_id(const Series* series, uint64_t published, Id id, uint64_t* k);
  void count_rejected(IdStatus status, double id);
  // Sample `k` of `series` completed as failed: counted, its message kept
  // (the first kMaxFailureLinesPerKind of its kind).
  // done_ns: the sample's completion stamp, from the series start.
  void record_failure(Series& series, uint64_t k, const Failure& failure, int64_t done_ns);
  // Sample `k`'s response (responses' element `i`): one accuracy record if
  // the sample is logged and has not failed as no_first_token.
  void log_response(Series& series, uint64_t k, const ResponseBytes& responses, size_t i);
  // A completing call issues the next query if it is due and unclaimed;
  // returns the new published count, or 0.
  uint64_t hand_over_next(Series& series);

  const std::atomic<Series*>& current_;
  const std::atomic<bool>& issuing_stopped_;
  Signal& completions_;
  LiveStats& live_;
  AccuracyLog& accuracy_log_;
  std::atomic<uint64_t> invalid_ids_{0};
  std::atomic<uint64_t> unissued_ids_{0};
  std::atomic<uint64_t> stale_ids_{0};
  std::atomic<uint64_t> duplicate_ids_{0};
  std::atomic<double> first_invalid_id_{0};
  std::atomic<double> first_duplicate_id_{0};
  std::atomic<uint64_t> first_token_after_completion_{0};
  std::atomic<uint64_t> duplicate_first_tokens_{0};
  // Token latencies: samples completed with no first token (each failed as
  // no_first_token).
  std::atomic<uint64_t> missing_first_tokens_{0};
  std::atomic<uint64_t> failed_by_kind_[kFailureKindCount] = {};
  std::mutex failure_messages_mutex_;
  std::vector<FailureMessage> failure_messages_;
};

}  // namespace loadgen

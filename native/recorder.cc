#include "recorder.h"

#include <cmath>
#include <type_traits>
#include <vector>

#include "clock.h"
#include "issuer.h"
#include "user_text.h"

namespace loadgen {

namespace {

constexpr int64_t kNotCompleted = Series::kNotCompleted;

inline bool id_to_u64(double id, uint64_t* out) {
  // Rejects NaN, fractions, negatives and values beyond 2^53 before any use.
  if (!(id >= 1.0 && id <= 9007199254740992.0) || std::floor(id) != id) return false;
  *out = static_cast<uint64_t>(id);
  return true;
}
inline bool id_to_u64(uint32_t id, uint64_t* out) {
  *out = id;
  return id != 0;
}
inline double id_as_double(double id) { return id; }
inline double id_as_double(uint32_t id) { return static_cast<double>(id); }

// n_tokens as the SUT reported it: NaN counts as missing (0), fractions
// truncate, out-of-range values saturate (the validity rules apply later).
inline int64_t token_count_of(double n) {
  if (!(n == n)) return 0;
  if (n >= 9.2e18) return INT64_MAX;
  if (n <= -9.2e18) return INT64_MIN + 1;  // INT64_MIN is the "no slot" marker
  return static_cast<int64_t>(n);
}

// The detail-log message of a sample the core fails as no_first_token: a
// token-latency sample completed before (or without) its first token. The
// reference logs "Attempted to record a sample latency before it's first
// token latency" and records it with an INT64_MIN first-token latency (spec/30
// §9), which then enters every TTFT/TPOT statistic; here it is a failed sample.
const std::string kNoFirstTokenMessage =
    "completed with no first token recorded (firstTokenComplete did not come before the completion)";

// The null-native SUT's response: the QSL index as 4 little-endian bytes
// (what the reference's own null SUT in the golden runs returns).
struct IndexPayload {
  uint8_t bytes[4];
};
IndexPayload index_payload(uint64_t qsl_index) {
  const uint32_t v = static_cast<uint32_t>(qsl_index);
  return {{static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v >> 16),
           static_cast<uint8_t>(v >> 24)}};
}

}  // namespace

template <typename Id>
Recorder::IdStatus Recorder::resolve_id(const Series* series, uint64_t published, Id id, uint64_t* k) {
  uint64_t n;
  if (series == nullptr || !id_to_u64(id, &n)) return IdStatus::Invalid;
  if (n < series->first_id) return IdStatus::Stale;
  if (n - series->first_id >= series->sample_count) return IdStatus::Invalid;
  *k = n - series->first_id;
  return *k < published * series->samples_per_query ? IdStatus::Valid : IdStatus::Unissued;
}

void Recorder::count_rejected(IdStatus status, double id) {
  if (status == IdStatus::Unissued) {
    unissued_ids_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (status == IdStatus::Stale) {
    stale_ids_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  double expected = 0;
  first_invalid_id_.compare_exchange_strong(expected, id);
  invalid_ids_.fetch_add(1, std::memory_order_relaxed);
}

void Recorder::record_failure(Series& series, uint64_t k, const Failure& failure, int64_t done_ns) {
  {
    std::lock_guard<std::mutex> lock(series.failed_mutex);
    series.failed_samples.push_back(k);
  }
  const size_t kind = static_cast<size_t>(failure.kind);
  if (failed_by_kind_[kind].fetch_add(1, std::memory_order_relaxed) >= kMaxFailureLinesPerKind) return;
  // The SUT's text goes into the detail log: one line, bounded.
  FailureMessage kept{failure.kind, echo_input(*failure.message, kMaxFailureMessageBytes), series.start_ns + done_ns};
  std::lock_guard<std::mutex> lock(failure_messages_mutex_);
  failure_messages_.push_back(std::move(kept));
}

template <typename Tokens, typename Id>
uint64_t Recorder::complete(int64_t stamp, bool caller_stamp, const Id* ids, const Tokens* n_tokens, size_t count,
                            bool hand_over, const Failure* failure, const ResponseBytes* responses) {
  Series* s = current_.load(std::memory_order_acquire);
  const uint64_t published = s ? s->published.load(std::memory_order_acquire) : 0;
  if (published == 0) {
    // Nothing of this series is issued: every id is rejected, by its kind.
    for (size_t i = 0; i < count; ++i) {
      uint64_t k = 0;
      count_rejected(resolve_id(s, 0, ids[i], &k), id_as_double(ids[i]));
    }
    return 0;
  }
  Series& series = *s;
  hand_over = hand_over && series.hand_over;
  // Before any completion is visible: the issue thread must not claim the
  // next query while this call may still hand it over.
  if (hand_over) series.handing_over.fetch_add(1, std::memory_order_seq_cst);
  const int64_t t = stamp - series.start_ns;
  // Now (from the series start), read at most once per call and only for a
  // stamp that cannot be right: it is then the completion time.
  int64_t now_t = kNotCompleted;
  const auto now_from_start = [&] {
    if (now_t == kNotCompleted) now_t = now_ns() - series.start_ns;
    return now_t;
  };
  // A failure passed by the caller is the sample's outcome whatever tokens it had.
  const bool needs_first_token = series.needs_first_token && failure == nullptr;
  const Failure no_first_token{FailureKind::NoFirstToken, &kNoFirstTokenMessage};
  const uint64_t spq = series.samples_per_query;
  // One test per sample while no sample of the series is logged.
  const ResponseBytes* logged = failure == nullptr && series.accuracy_sampled_count != 0 ? responses : nullptr;
  if (logged != nullptr) accuracy_log_.prefetch_next();
  uint64_t newly_completed = 0;
  bool any_query_done = false;
  for (size_t i = 0; i < count; ++i) {
    uint64_t k = 0;
    const IdStatus status = resolve_id(s, published, ids[i], &k);
    if (status != IdStatus::Valid) {
      count_rejected(status, id_as_double(ids[i]));
      continue;
    }
    // Our own clock was read on entry, after the SUT received the query; a
    // caller's stamp may be older than the query's issue (visible: the
    // issuer wrote issued_ns before publishing it).
    int64_t done = t;
    if (caller_stamp && done < series.issued_ns[k / spq]) done = now_from_start();
    bool missing_first_token = false;
    if (needs_first_token) {
      // The one extra load of the token path.
      const int64_t first = series.first_token_ns[k].load(std::memory_order_acquire);
      if (first == kNotCompleted) {
        missing_first_token = true;
      } else if (done < first) {
        done = now_from_start();  // first tokens are stamped no later than when they were recorded
      }
    }
    int64_t not_completed = kNotCompleted;
    if (!series.completed_ns[k].compare_exchange_strong(not_completed, done, std::memory_order_acq_rel)) {
      double expected = 0;
      first_duplicate_id_.compare_exchange_strong(expected, id_as_double(ids[i]));
      duplicate_ids_.fetch_add(1, std::memory_order_relaxed);
      if (logged != nullptr) log_response(series, k, *logged, i);
      continue;
    }
    if constexpr (!std::is_void_v<Tokens>) {
      // Only the winner of the CAS writes, before the query counts as done.
      if (series.n_tokens) series.n_tokens[k].store(token_count_of(n_tokens[i]), std::memory_order_relaxed);
    }
    // Before the query counts as done: whoever reads the series after its
    // last completion sees the failure.
    if (failure != nullptr) {
      record_failure(series, k, *failure, done);
    } else if (missing_first_token) {
      missing_first_tokens_.fetch_add(1, std::memory_order_relaxed);
      record_failure(series, k, no_first_token, done);
    }
    // After the token count is stored (the record carries it), before the
    // query counts as done (whoever ends the series and the log comes after).
    if (logged != nullptr) log_response(series, k, *logged, i);
    ++newly_completed;
    live_.record_completion(series, k / spq, done);
    if (spq == 1) {
      series.done_queries.fetch_add(1, std::memory_order_acq_rel);
      any_query_done = true;
    } else if (series.outstanding[k / spq].fetch_sub(1, std::memory_order_acq_rel) == 1) {
      series.query_done_ns[k / spq].store(done, std::memory_order_release);
      series.done_queries.fetch_add(1, std::memory_order_acq_rel);
      any_query_done = true;
    }
  }
  if (newly_completed != 0) series.completed_samples.fetch_add(newly_completed, std::memory_order_acq_rel);
  const uint64_t handed = hand_over && any_query_done ? hand_over_next(series) : 0;
  if (hand_over) series.handing_over.fetch_sub(1, std::memory_order_seq_cst);
  // A hand-over needs no wake of the issue thread (it learns of the last
  // query of the series from hand_over_next's own notify).
  if (any_query_done && handed == 0) completions_.notify();
  return handed;
}

template uint64_t Recorder::complete<void, double>(int64_t, bool, const double*, const void*, size_t, bool,
                                                   const Failure*, const ResponseBytes*);
template uint64_t Recorder::complete<void, uint32_t>(int64_t, bool, const uint32_t*, const void*, size_t, bool,
                                                     const Failure*, const ResponseBytes*);
template uint64_t Recorder::complete<double, double>(int64_t, bool, const double*, const double*, size_t, bool,
                                                     const Failure*, const ResponseBytes*);
template uint64_t Recorder::complete<double, uint32_t>(int64_t, bool, const uint32_t*, const double*, size_t, bool,
                                                       const Failure*, const ResponseBytes*);

uint64_t Recorder::hand_over_next(Series& series) {
  // Due when query n-1 is done. Whether issuing ended is known: the claimant
  // of n-1 decided it before publishing n-1, and this call saw that
  // publication (it completed a sample of n-1).
  const uint64_t n = series.next_issue.load(std::memory_order_acquire);
  if (n == 0 || n >= series.trace.query_count() || !series.query_done(n - 1)) return 0;
  const Issued issued = try_issue(series, n, issuing_stopped_.load(std::memory_order_acquire));
  // Delivered as issued: the drain on this thread hands it to the SUT when
  // this call returns, without a stamp of its own (lib/dispatch/drain.ts);
  // a drain that takes it later (after an event-loop turn) stamps it then.
  if (issued.published != 0) series.dispatched_ns[n].store(series.issued_ns[n], std::memory_order_relaxed);
  // The issue thread logs the stop and ends its loop.
  if (issued.reason != StopReason::None) completions_.notify();
  return issued.published;
}

int64_t Recorder::clamp_stamp(int64_t stamp_ns) const {
  const int64_t now = now_ns();
  const Series* s = current_.load(std::memory_order_acquire);
  if (s == nullptr || stamp_ns < s->start_ns || stamp_ns > now) stamp_ns = now;
  return stamp_ns;
}

void Recorder::first_token(double id, int64_t stamp_ns, const uint8_t* data, size_t size) {
  stamp_ns = stamp_ns == 0 ? now_ns() : clamp_stamp(stamp_ns);
  Series* s = current_.load(std::memory_order_acquire);
  if (s != nullptr && !s->first_token_ns) return;  // token latencies off
  const uint64_t published = s ? s->published.load(std::memory_order_acquire) : 0;
  uint64_t k = 0;
  const IdStatus status = resolve_id(s, published, id, &k);
  if (status != IdStatus::Valid) {
    count_rejected(status, id);
    return;
  }
  Series& series = *s;
  if (series.completed_ns[k].load(std::memory_order_acquire) != kNotCompleted) {
    first_token_after_completion_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // A stamp older than the query's issue (an old clockNs() reading) is
  // replaced by now, as one before the series start is: no TTFT below issue.
  int64_t first = stamp_ns - series.start_ns;
  if (first < series.issued_ns[k / series.samples_per_query]) first = now_ns() - series.start_ns;
  int64_t not_recorded = kNotCompleted;
  if (!series.first_token_ns[k].compare_exchange_strong(not_recorded, first, std::memory_order_acq_rel)) {
    duplicate_first_tokens_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // Offline records never carry token_data, so nothing is cached there.
  if (series.trace.accuracy_log_sampled[k] && series.needs_first_token) {
    std::vector<uint8_t> bytes(data, data + size);
    std::lock_guard<std::mutex> lock(series.token_data_mutex);
    series.token_data[k] = std::move(bytes);
  }
}

void Recorder::log_response(Series& series, uint64_t k, const ResponseBytes& responses, size_t i) {
  if (!series.trace.accuracy_log_sampled[k]) return;
  // Completed with no first token: it failed as no_first_token (complete),
  // and a failed sample writes no accuracy record (nor token_data it never had).
  if (series.needs_first_token && series.first_token_ns[k].load(std::memory_order_acquire) == kNotCompleted) return;
  const uint8_t* data = nullptr;
  size_t size = 0;
  if (!responses.get(responses.context, i, &data, &size)) return;
  // Copied straight into the ring slot's buffer (no allocation while it fits).
  accuracy_log_.append_with([&](AccuracyLog::Record& record) {
    record.set_with_index_at(series.trace.first_sample_id + k, &series.trace.sample_index[k], data, size);
    if (!series.n_tokens) return;
    record.set_token_count(series.n_tokens[k].load(std::memory_order_relaxed));
    if (!series.needs_first_token) return;
    std::lock_guard<std::mutex> lock(series.token_data_mutex);
    const auto it = series.token_data.find(k);
    if (it != series.token_data.end()) {
      record.set_token_data(it->second.data(), it->second.size());
    } else {
      record.set_token_data(nullptr, 0);
    }
  });
}

void Recorder::complete_on_issue_thread(Series& series, uint64_t q, int64_t t) {
  const uint64_t spq = series.samples_per_query;
  const uint64_t first = q * spq;
  // A large query (Offline) is completed in chunks, each stamped when it is
  // recorded, so the result measures what recording costs, not zero.
  constexpr uint64_t kStampEvery = 4096;
  // It reports no first token: under token latencies (not Offline) each of
  // its samples fails as no_first_token, as any SUT's would (see complete).
  // Two loops, not a test per sample: that test (not hoisted by the compiler
  // past the release stores) cost Offline's 10^6 samples 26 % of their rate
  // (1.69 -> 1.24 G samples/s, bench trial, medians of 10).
  if (series.needs_first_token) {
    const Failure no_first_token{FailureKind::NoFirstToken, &kNoFirstTokenMessage};
    for (uint64_t k = first; k < first + spq; ++k) {
      if (k != first && (k - first) % kStampEvery == 0) t = now_ns() - series.start_ns;
      series.completed_ns[k].store(t, std::memory_order_release);
      missing_first_tokens_.fetch_add(1, std::memory_order_relaxed);
      record_failure(series, k, no_first_token, t);  // a failed sample writes no accuracy record
    }
  } else {
    for (uint64_t k = first; k < first + spq; ++k) {
      if (k != first && (k - first) % kStampEvery == 0) t = now_ns() - series.start_ns;
      series.completed_ns[k].store(t, std::memory_order_release);
      if (series.trace.accuracy_log_sampled[k]) {
        const uint64_t index = series.trace.sample_index[k];
        const IndexPayload payload = index_payload(index);
        accuracy_log_.append_with([&](AccuracyLog::Record& record) {
          record.set(series.trace.first_sample_id + k, index, payload.bytes, sizeof payload.bytes);
          // The null SUT reports no tokens: the record still has the token field (Offline).
          if (series.n_tokens) record.set_token_count(0);
        });
      }
    }
  }
  live_.record_completion(series, q, t, spq);
  if (spq > 1) {
    series.outstanding[q].store(0, std::memory_order_relaxed);
    series.query_done_ns[q].store(t, std::memory_order_release);
  }
  series.done_queries.fetch_add(1, std::memory_order_acq_rel);
  series.completed_samples.fetch_add(spq, std::memory_order_release);
}

void Recorder::copy_error_counts(CompletionErrorCounts* out) const {
  out->invalid_ids = invalid_ids_.load();
  out->unissued_ids = unissued_ids_.load();
  out->stale_ids = stale_ids_.load();
  out->duplicate_ids = duplicate_ids_.load();
  out->first_invalid_id = first_invalid_id_.load();
  out->first_duplicate_id = first_duplicate_id_.load();
  out->first_token_after_completion = first_token_after_completion_.load();
  out->duplicate_first_tokens = duplicate_first_tokens_.load();
  out->missing_first_tokens = missing_first_tokens_.load();
}

void Recorder::take_failures(FailedSampleCounts* counts, std::vector<FailureMessage>* messages) {
  *counts = FailedSampleCounts{};
  for (size_t i = 0; i < kFailureKindCount; ++i) {
    counts->by_kind[i] = failed_by_kind_[i].load();
    counts->total += counts->by_kind[i];
  }
  std::lock_guard<std::mutex> lock(failure_messages_mutex_);
  *messages = std::move(failure_messages_);
  failure_messages_.clear();
}

}  // namespace loadgen

// Live statistics of the running series for progress displays: a
// fixed-precision latency histogram with atomic counters, fed from the
// completion path, plus the series' phase. Readers get a snapshot of plain
// numbers; they never touch the per-sample records (design.md: live progress
// reads counters and a histogram; final statistics stay exact, from records).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#if defined(_MSC_VER)
#include <intrin.h>
#endif

#include "settings.h"
#include "trace.h"

namespace loadgen {

// HdrHistogram-style log-linear histogram of non-negative ns values: exact
// below 2^kSubBits, then 2^kSubBits equal buckets per power of two, so any
// recorded value is known to within 1/128 (0.8 %). Lock-free: record() is
// one relaxed fetch_add, no allocation (the buckets are allocated once).
class LatencyHistogram {
 public:
  static constexpr int kSubBits = 7;
  static constexpr uint64_t kSub = uint64_t{1} << kSubBits;
  // Values at or above 2^(kMaxExponent + 1) ns (~2.4 h) land in the top bucket.
  static constexpr int kMaxExponent = 42;
  static constexpr size_t kBuckets = kSub + static_cast<size_t>(kMaxExponent - kSubBits + 1) * kSub;

  LatencyHistogram();
  // Adds `n` values of `value_ns` (negative values count as 0). Any thread.
  void record(int64_t value_ns, uint64_t n = 1) noexcept {
    counts_[bucket_of(value_ns)].fetch_add(n, std::memory_order_relaxed);
  }
  // Zeroes every bucket (not atomic as a whole: racing records may survive).
  void reset() noexcept;
  // Copies the buckets into `out` (kBuckets elements); returns their sum.
  uint64_t copy_to(uint64_t* out) const noexcept;

  static size_t bucket_of(int64_t value_ns) noexcept {
    if (value_ns < static_cast<int64_t>(kSub)) return value_ns < 0 ? 0 : static_cast<size_t>(value_ns);
    const uint64_t v = static_cast<uint64_t>(value_ns);
    const int exponent = highest_bit(v);
    if (exponent > kMaxExponent) return kBuckets - 1;
    const int shift = exponent - kSubBits;
    return static_cast<size_t>(kSub + static_cast<uint64_t>(shift) * kSub + ((v >> shift) - kSub));
  }
  // Index of the highest set bit of v (v != 0).
  static int highest_bit(uint64_t v) noexcept {
#if defined(_MSC_VER)
    unsigned long index = 0;
    _BitScanReverse64(&index, v);
    return static_cast<int>(index);
#else
    return 63 - __builtin_clzll(v);
#endif
  }
  // Smallest value of bucket `i`, and its width (1 in the exact range).
  static int64_t bucket_low(size_t i) noexcept;
  static int64_t bucket_width(size_t i) noexcept;
  // The value at fraction p (0..1) of `total` counts: the midpoint of the
  // bucket holding that rank (0 when total is 0).
  static int64_t value_at(const uint64_t* counts, uint64_t total, double p) noexcept;

 private:
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;
};

// What a progress display shows; plain numbers, no per-sample data.
struct LiveSnapshot {
  bool has_series = false;
  // 0 no series yet, 1 issuing, 2 issuing ended (waiting for completions).
  int phase = 0;
  SeriesKind kind = SeriesKind::Performance;
  Scenario scenario = Scenario::SingleStream;
  uint64_t series_index = 0;   // 0-based index of the current series in the run
  uint64_t series_started = 0; // series started so far (accuracy rounds, trials, the performance run)
  int64_t elapsed_ns = 0;      // since the current series started issuing
  // How long issuing is expected to take: the minimum duration, or for
  // Server the last query's scheduled time; 0 when unknown (accuracy series).
  int64_t target_duration_ns = 0;
  uint64_t generated_queries = 0;
  uint64_t samples_per_query = 1;
  uint64_t issued_queries = 0;
  uint64_t issued_samples = 0;
  uint64_t completed_samples = 0;
  uint64_t outstanding_samples = 0;
  // From the histogram of this series' completed sample latencies.
  uint64_t latency_count = 0;
  int64_t p50_ns = 0;
  int64_t p99_ns = 0;
  int64_t max_ns = 0;  // upper end of the highest non-empty bucket
};

// The session's live state. Written by the session thread at series
// boundaries and by completing threads through record_completion().
class LiveStats {
 public:
  // Session thread, before the series becomes current.
  void begin_series(SeriesKind kind, Scenario scenario, int64_t target_duration_ns, uint64_t generated_queries,
                    uint64_t samples_per_query) noexcept;
  void issuing_started(int64_t start_ns) noexcept { start_ns_.store(start_ns, std::memory_order_release); phase_.store(1, std::memory_order_release); }
  void issuing_ended() noexcept { phase_.store(2, std::memory_order_release); }

  // Completion hot path: `n` samples of query `q` completed at `done_ns`
  // (relative to the series start). Latency from the query's scheduled time
  // as the results compute it; one histogram increment, no locks.
  // (A template so this header needs no series.h: scheduled_ns is found with the series.)
  template <typename SeriesT>
  void record_completion(const SeriesT& series, uint64_t q, int64_t done_ns, uint64_t n = 1) noexcept {
    histogram_.record(done_ns - scheduled_ns(series, q), n);
  }

  // Any thread. `issued_queries`/`completed_samples` come from the series' counters.
  LiveSnapshot snapshot(int64_t now_ns, uint64_t issued_queries, uint64_t completed_samples) const;

 private:
  LatencyHistogram histogram_;
  std::atomic<int> phase_{0};
  std::atomic<int> kind_{static_cast<int>(SeriesKind::Performance)};
  std::atomic<int> scenario_{0};
  std::atomic<uint64_t> series_started_{0};
  std::atomic<int64_t> start_ns_{0};
  std::atomic<int64_t> target_duration_ns_{0};
  std::atomic<uint64_t> generated_queries_{0};
  std::atomic<uint64_t> samples_per_query_{1};
};

}  // namespace loadgen

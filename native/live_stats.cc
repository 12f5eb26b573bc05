#include "live_stats.h"

#include <vector>

#include "clock.h"
#include "session.h"

namespace loadgen {

LatencyHistogram::LatencyHistogram() : counts_(new std::atomic<uint64_t>[kBuckets]) { reset(); }

void LatencyHistogram::reset() noexcept {
  for (size_t i = 0; i < kBuckets; ++i) counts_[i].store(0, std::memory_order_relaxed);
}

uint64_t LatencyHistogram::copy_to(uint64_t* out) const noexcept {
  uint64_t total = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    out[i] = counts_[i].load(std::memory_order_relaxed);
    total += out[i];
  }
  return total;
}

int64_t LatencyHistogram::bucket_low(size_t i) noexcept {
  if (i < kSub) return static_cast<int64_t>(i);
  const uint64_t shift = (i - kSub) / kSub;
  const uint64_t sub = (i - kSub) % kSub;
  return static_cast<int64_t>((kSub + sub) << shift);
}

int64_t LatencyHistogram::bucket_width(size_t i) noexcept {
  if (i < kSub) return 1;
  return static_cast<int64_t>(uint64_t{1} << ((i - kSub) / kSub));
}

int64_t LatencyHistogram::value_at(const uint64_t* counts, uint64_t total, double p) noexcept {
  if (total == 0) return 0;
  // The rank the exact results use: the sample at index floor(p * n).
  uint64_t rank = static_cast<uint64_t>(p * static_cast<double>(total));
  if (rank >= total) rank = total - 1;
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += counts[i];
    if (seen > rank) return bucket_low(i) + bucket_width(i) / 2;
  }
  return bucket_low(kBuckets - 1);
}

void LiveStats::begin_series(SeriesKind kind, Scenario scenario, int64_t target_duration_ns,
                             uint64_t generated_queries, uint64_t samples_per_query) noexcept {
  phase_.store(0, std::memory_order_relaxed);
  histogram_.reset();
  kind_.store(static_cast<int>(kind), std::memory_order_relaxed);
  scenario_.store(static_cast<int>(scenario), std::memory_order_relaxed);
  start_ns_.store(0, std::memory_order_relaxed);
  target_duration_ns_.store(target_duration_ns, std::memory_order_relaxed);
  generated_queries_.store(generated_queries, std::memory_order_relaxed);
  samples_per_query_.store(samples_per_query == 0 ? 1 : samples_per_query, std::memory_order_relaxed);
  series_started_.fetch_add(1, std::memory_order_release);
}

LiveSnapshot LiveStats::snapshot(int64_t now_ns, uint64_t issued_queries, uint64_t completed_samples) const {
  LiveSnapshot out;
  out.series_started = series_started_.load(std::memory_order_acquire);
  out.has_series = out.series_started != 0;
  if (!out.has_series) return out;
  out.series_index = out.series_started - 1;
  out.phase = phase_.load(std::memory_order_acquire);
  out.kind = static_cast<SeriesKind>(kind_.load(std::memory_order_relaxed));
  out.scenario = static_cast<Scenario>(scenario_.load(std::memory_order_relaxed));
  const int64_t start = start_ns_.load(std::memory_order_acquire);
  out.elapsed_ns = out.phase == 0 || start == 0 ? 0 : now_ns - start;
  out.target_duration_ns = target_duration_ns_.load(std::memory_order_relaxed);
  out.generated_queries = generated_queries_.load(std::memory_order_relaxed);
  out.samples_per_query = samples_per_query_.load(std::memory_order_relaxed);
  out.issued_queries = issued_queries;
  out.issued_samples = issued_queries * out.samples_per_query;
  out.completed_samples = completed_samples;
  out.outstanding_samples = out.issued_samples > completed_samples ? out.issued_samples - completed_samples : 0;
  // A reader's copy (allocated here, off the completion path).
  std::vector<uint64_t> counts(LatencyHistogram::kBuckets);
  const uint64_t total = histogram_.copy_to(counts.data());
  out.latency_count = total;
  out.p50_ns = LatencyHistogram::value_at(counts.data(), total, 0.50);
  out.p99_ns = LatencyHistogram::value_at(counts.data(), total, 0.99);
  for (size_t i = LatencyHistogram::kBuckets; i-- > 0;) {
    if (counts[i] != 0) {
      out.max_ns = LatencyHistogram::bucket_low(i) + LatencyHistogram::bucket_width(i) - 1;
      break;
    }
  }
  return out;
}

// Session's side of the live statistics (declared in session.h; here so the
// session file only carries the recording calls).
LiveSnapshot Session::progress() const {
  const Series* s = current();
  const uint64_t issued = s ? s->published.load(std::memory_order_acquire) : 0;
  const uint64_t completed = s ? s->completed_samples.load(std::memory_order_acquire) : 0;
  return live_.snapshot(now_ns(), issued, completed);
}

}  // namespace loadgen

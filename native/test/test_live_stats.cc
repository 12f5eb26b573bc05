// The live latency histogram: bucket layout, precision and percentiles.
#include <cstdlib>
#include <vector>

#include "check.h"
#include "live_stats.h"

using namespace loadgen;

TEST(live_histogram_buckets_are_contiguous_and_precise) {
  using H = LatencyHistogram;
  // Exact below 128 ns; every bucket starts where the previous one ends.
  CHECK_EQ(H::bucket_of(0), size_t{0});
  CHECK_EQ(H::bucket_of(-5), size_t{0});
  CHECK_EQ(H::bucket_of(127), size_t{127});
  for (size_t i = 1; i + 1 < H::kBuckets; ++i) {
    CHECK_EQ(H::bucket_low(i), H::bucket_low(i - 1) + H::bucket_width(i - 1));
  }
  // Any value lands in the bucket that holds it, within 1/128 of its size.
  for (int64_t v : {int64_t{128}, int64_t{1000}, int64_t{123456}, int64_t{999999999}, int64_t{3600} * 1000000000}) {
    const size_t b = H::bucket_of(v);
    CHECK(H::bucket_low(b) <= v && v < H::bucket_low(b) + H::bucket_width(b));
    CHECK(static_cast<double>(H::bucket_width(b)) <= static_cast<double>(v) / 128.0 + 1);
  }
  CHECK_EQ(H::bucket_of(INT64_MAX), H::kBuckets - 1);
}

TEST(live_histogram_percentiles_follow_the_exact_rank) {
  LatencyHistogram h;
  for (int64_t v = 1; v <= 10000; ++v) h.record(v * 1000);  // 1 us .. 10 ms
  h.record(5000, 0);  // n = 0 adds nothing
  std::vector<uint64_t> counts(LatencyHistogram::kBuckets);
  const uint64_t total = h.copy_to(counts.data());
  CHECK_EQ(total, uint64_t{10000});
  const int64_t p99 = LatencyHistogram::value_at(counts.data(), total, 0.99);
  CHECK(std::llabs(p99 - 9901000) <= 9901000 / 128);
  const int64_t p50 = LatencyHistogram::value_at(counts.data(), total, 0.50);
  CHECK(std::llabs(p50 - 5001000) <= 5001000 / 128);
  h.reset();
  CHECK_EQ(h.copy_to(counts.data()), uint64_t{0});
  CHECK_EQ(LatencyHistogram::value_at(counts.data(), 0, 0.99), int64_t{0});
}

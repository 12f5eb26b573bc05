// The CPU-noise probe's statistics (cpu_noise.h): residual-delay percentiles
// computed by hand for small gap sets, and a short live measurement.
#include <cstdint>
#include <vector>

#include "check.h"
#include "cpu_noise.h"

using loadgen::CpuNoise;

TEST(cpu_noise_residual_of_no_gaps_is_zero) {
  CHECK_EQ(loadgen::residual_percentile({}, 1000000, 0.99), 0);
  CpuNoise n;
  loadgen::summarize_gaps({}, 1000000, &n);
  CHECK_EQ(n.gaps, 0u);
  CHECK_EQ(n.lost_ns, 0);
  CHECK_EQ(n.residual_p999_ns, 0);
}

TEST(cpu_noise_residual_percentiles_by_hand) {
  // One 100 us gap in 1 s: an instant falls in it with probability 1e-4,
  // so p99 and p99.9 see no delay.
  CHECK_EQ(loadgen::residual_percentile({100000}, 1000000000, 0.99), 0);
  CHECK_EQ(loadgen::residual_percentile({100000}, 1000000000, 0.999), 0);
  // One 100 us gap in 1 ms (10% of the time): P(delay > x) = (100 - x) / 1000 us.
  // p99: (100 - x) / 1000 <= 0.01 -> x = 90 us. p50: no delay.
  CHECK_EQ(loadgen::residual_percentile({100000}, 1000000, 0.99), 90000);
  CHECK_EQ(loadgen::residual_percentile({100000}, 1000000, 0.50), 0);
  // Ten 10 us gaps in 1 ms: P(delay > x) = 10 * (10 - x) / 1000 us <= 0.001 -> x = 9.9 us.
  CHECK_EQ(loadgen::residual_percentile(std::vector<int64_t>(10, 10000), 1000000, 0.999), 9900);
}

TEST(cpu_noise_summary_orders_gaps) {
  CpuNoise n;
  loadgen::summarize_gaps({5000, 1000, 3000, 2000, 4000}, 1000000, &n);
  CHECK_EQ(n.gaps, 5u);
  CHECK_EQ(n.lost_ns, 15000);
  CHECK_EQ(n.gap_p50_ns, 3000);
  CHECK_EQ(n.gap_max_ns, 5000);
  CHECK_EQ(n.duration_ns, 1000000);
}

TEST(cpu_noise_live_measurement_is_consistent) {
  const CpuNoise n = loadgen::measure_cpu_noise(-1, 20000000);
  CHECK(!n.pinned);
  CHECK(n.duration_ns >= 20000000);
  CHECK(n.lost_ns <= n.duration_ns);
  CHECK(n.residual_p50_ns <= n.residual_p99_ns);
  CHECK(n.residual_p99_ns <= n.residual_p999_ns);
  CHECK(n.gap_p50_ns <= n.gap_max_ns);
}

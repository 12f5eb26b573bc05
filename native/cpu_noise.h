// How much a CPU is taken away from a thread that wants it all the time:
// a spinning thread records every gap between clock reads longer than a
// threshold (interrupts, hypervisor exits, other threads). From the gaps
// follows the delay an event due at a random instant sees on that CPU:
// the floor of issue lateness for any issuer running there (`loadgen bench`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loadgen {

struct CpuNoise {
  int cpu = -1;           // the CPU asked for (-1: unpinned)
  bool pinned = false;    // whether pinning succeeded
  std::string warning;    // why not, when it did not
  int64_t duration_ns = 0;
  uint64_t gaps = 0;      // gaps longer than the threshold
  int64_t lost_ns = 0;    // their total length
  int64_t gap_p50_ns = 0, gap_p99_ns = 0, gap_max_ns = 0;
  // Delay seen by an event due at a uniformly random instant: an instant
  // inside a gap waits for the rest of it.
  int64_t residual_p50_ns = 0, residual_p99_ns = 0, residual_p999_ns = 0;
};

// Fills the gap and residual statistics from the recorded gaps (any order)
// over a measurement of `duration_ns`.
void summarize_gaps(std::vector<int64_t> gaps, int64_t duration_ns, CpuNoise* out);

// The smallest delay x such that an instant drawn uniformly from
// [0, duration_ns) waits longer than x with probability at most 1 - p:
// sum over gaps of max(0, gap - x) <= (1 - p) * duration_ns.
int64_t residual_percentile(const std::vector<int64_t>& gaps, int64_t duration_ns, double p);

// Spins on a new thread (pinned to `cpu` when >= 0) for `duration_ns`,
// recording gaps longer than `threshold_ns`.
CpuNoise measure_cpu_noise(int cpu, int64_t duration_ns, int64_t threshold_ns = 1000);

}  // namespace loadgen

#include "cpu_noise.h"

#include <algorithm>
#include <thread>

#include "clock.h"
#include "wait.h"

namespace loadgen {

int64_t residual_percentile(const std::vector<int64_t>& gaps, int64_t duration_ns, double p) {
  if (gaps.empty() || duration_ns <= 0) return 0;
  const double allowed = (1.0 - p) * static_cast<double>(duration_ns);
  const auto tail_mass = [&](int64_t x) {
    double sum = 0;
    for (int64_t g : gaps) {
      if (g > x) sum += static_cast<double>(g - x);
    }
    return sum;
  };
  // tail_mass falls as x grows; find the first x where it is within `allowed`.
  int64_t lo = 0;
  int64_t hi = *std::max_element(gaps.begin(), gaps.end());
  if (tail_mass(lo) <= allowed) return 0;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (tail_mass(mid) <= allowed) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return hi;
}

void summarize_gaps(std::vector<int64_t> gaps, int64_t duration_ns, CpuNoise* out) {
  out->duration_ns = duration_ns;
  out->gaps = gaps.size();
  out->lost_ns = 0;
  for (int64_t g : gaps) out->lost_ns += g;
  out->residual_p50_ns = residual_percentile(gaps, duration_ns, 0.50);
  out->residual_p99_ns = residual_percentile(gaps, duration_ns, 0.99);
  out->residual_p999_ns = residual_percentile(gaps, duration_ns, 0.999);
  if (gaps.empty()) {
    out->gap_p50_ns = out->gap_p99_ns = out->gap_max_ns = 0;
    return;
  }
  std::sort(gaps.begin(), gaps.end());
  const auto at = [&](double p) {
    return gaps[std::min(gaps.size() - 1, static_cast<size_t>(p * static_cast<double>(gaps.size())))];
  };
  out->gap_p50_ns = at(0.50);
  out->gap_p99_ns = at(0.99);
  out->gap_max_ns = gaps.back();
}

CpuNoise measure_cpu_noise(int cpu, int64_t duration_ns, int64_t threshold_ns) {
  CpuNoise out;
  out.cpu = cpu;
  std::vector<int64_t> gaps;
  int64_t measured_ns = 0;
  std::thread spinner([&] {
    out.warning = prepare_issue_thread(cpu);
    out.pinned = cpu >= 0 && out.warning.empty();
    // Reserved up front: a reallocation inside the loop would itself be a gap.
    gaps.reserve(static_cast<size_t>(std::min<int64_t>(duration_ns / 1000 + 1, int64_t{1} << 22)));
    const int64_t start = now_ns();
    const int64_t end = start + duration_ns;
    int64_t previous = start;
    for (;;) {
      const int64_t now = now_ns();
      if (now - previous > threshold_ns && gaps.size() < gaps.capacity()) gaps.push_back(now - previous);
      previous = now;
      if (now >= end) break;
    }
    measured_ns = previous - start;
  });
  spinner.join();
  summarize_gaps(std::move(gaps), measured_ns, &out);
  return out;
}

}  // namespace loadgen

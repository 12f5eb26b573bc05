// How the issue thread waits until query q is due, one small unit per
// scenario (the reference's QueryScheduler<scenario>): Server sleeps, then
// spins, to the scheduled time; SingleStream/MultiStream wait for the
// previous query's completion (or for a completing call that issued the
// next one itself); Offline issues at once. The issue loop is a template
// over these: no virtual call or allocation per query.
//
// Each unit has `bool wait_due(uint64_t q, int64_t* now, AtLead&& at_lead)`:
// false when the run was aborted or stalled; else `*now` is the clock
// reading (now_ns()) at which q is due. Server calls `at_lead()` once,
// `lead_ns` before the due time, when a lead is set (wake-ahead); it returns
// true before q is due (`*now` past max_duration) when max_duration ends the
// wait (server_wait_until_ns): q is then not to be issued.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "clock.h"
#include "native_sut.h"
#include "series.h"
#include "stop_rule.h"
#include "wait.h"

namespace loadgen {

// Server: sleep until this long before a scheduled time, then spin (design.md:
// ~120 us covers the wake-up latency of an idle vCPU at the median). A pinned
// issue thread owns its CPU: it never sleeps nor yields, since waking a
// halted vCPU and entering the kernel are what make lateness's tail (2-vCPU
// VM, null-native, 10k QPS, pinned: p99 22 us sleeping; 0.2-13 us spinning,
// tracking the host's preemptions that bench.cpuNoise measures).
constexpr int64_t kServerSpinWindowNs = 120000;
// Longest single sleep of the issue thread, so an abort is noticed promptly.
constexpr int64_t kMaxSleepSliceNs = 50000000;
// Spin this long for a completion before blocking (SingleStream/MultiStream).
constexpr int64_t kCompletionSpinNs = 50000;

// Waits until `ready()`, woken by `completions` (notified by completing
// calls). False when the run is aborted, or when no sample of `series`
// completed for `stall_limit_ns` (0: no limit) and `ready()` is still false.
template <typename Ready>
bool wait_for_completions(const Series& series, Signal& completions, int64_t stall_limit_ns,
                          const std::atomic<bool>& aborted, Ready ready) {
  const int64_t poll_ns =
      stall_limit_ns > 0 ? std::min<int64_t>(50000000, std::max<int64_t>(stall_limit_ns / 8, 1000000)) : 50000000;
  uint64_t seen_completions = series.completed_samples.load(std::memory_order_acquire);
  int64_t last_progress = now_ns();
  for (;;) {
    if (completions.wait(ready, 0, kCompletionSpinNs, poll_ns)) return true;
    if (aborted.load(std::memory_order_acquire)) return false;
    const uint64_t count = series.completed_samples.load(std::memory_order_acquire);
    const int64_t now = now_ns();
    if (count != seen_completions) {
      seen_completions = count;
      last_progress = now;
    } else if (stall_limit_ns > 0 && now - last_progress >= stall_limit_ns) {
      return ready();
    }
  }
}

// A SUT inside the core (the native HTTP client) does its work on threads of
// this process, which an unpinned issue thread's spin takes CPU from: its
// window is at most a tenth of the mean time between queries (10-120 us), so
// spinning costs ~10 % of a CPU at any rate instead of all of it above ~8k QPS
// (profiled: sched_yield and clock reads were a third of the client's CPU at
// 20k requests/s on one CPU). Below ~1k QPS it is the usual 120 us.
inline int64_t native_sut_spin_window_ns(const Series& series) {
  const uint64_t queries = series.trace.query_count();
  if (queries == 0) return kServerSpinWindowNs;
  const int64_t mean_gap = series.trace.scheduled_delta_ns.back() / static_cast<int64_t>(queries);
  return std::clamp<int64_t>(mean_gap / 10, 10000, kServerSpinWindowNs);
}

// A native SUT's unpinned issue thread: the spin window follows how late
// its sleeps end (the wake-up latency this machine gives it now), so it is
// awake at the due time without spinning longer than that: it sleeps until
// `window()` before the due time, wakes `late` after that, and spins only
// the difference. A fixed tenth of the mean gap (10 us at 10k QPS) woke
// ~19 us late at p50 on a VM whose wake-ups take 25-50 us. The estimate is
// a quantile of the sleeps' lateness, learned online (frugal streaming
// quantile: one compare and add per sleep), and the window stays within
// [kMinNs, max_ns]. From ~200 QPS up: the p90, and max_ns a quarter of the
// mean gap, at most 120 us (with a half, a single 30k requests/s run on a
// loaded CPU fell behind: the punctual issue thread starved the reactor and
// the JS thread; with the p99 at 1k requests/s, 5-35 % more CPU a request
// for no shorter tail). Below: the p99, and max_ns a 25th of the mean gap up
// to 2 ms (at most 4 % of a CPU): there a sleep is tens of ms, ends 0.2-1 ms
// late on an idle vCPU here, and with the p90 and 120 us a tenth of the
// queries went out 0.3-1 ms late at 20 QPS, inside every TTFT.
struct AdaptiveSpinWindow {
  static constexpr int64_t kMinNs = 10000;
  static constexpr int64_t kMarginNs = 5000;
  // Down this much a sleep that ended within the estimate, up up_steps times it one that did not:
  // the quantile up_steps / (up_steps + 1).
  static constexpr int64_t kStepNs = 500;
  static constexpr int64_t kP90UpSteps = 9;
  static constexpr int64_t kP99UpSteps = 99;
  static constexpr int64_t kLongGapShare = 25;
  static constexpr int64_t kMaxLongGapWindowNs = 2000000;
  int64_t max_ns = kServerSpinWindowNs;
  int64_t up_steps = kP90UpSteps;
  int64_t late_estimate_ns = 0;

  // The window's bound for a mean gap between queries of `mean_gap_ns`.
  static int64_t max_window_ns(int64_t mean_gap_ns) {
    const int64_t long_gap = std::min(mean_gap_ns / kLongGapShare, kMaxLongGapWindowNs);
    return std::clamp<int64_t>(std::min(mean_gap_ns / 4, std::max(kServerSpinWindowNs, long_gap)), kMinNs,
                               kMaxLongGapWindowNs);
  }

  explicit AdaptiveSpinWindow(const Series& series, int64_t initial_ns) {
    const uint64_t queries = series.trace.query_count();
    if (queries > 0) max_ns = max_window_ns(series.trace.scheduled_delta_ns.back() / static_cast<int64_t>(queries));
    up_steps = max_ns > kServerSpinWindowNs ? kP99UpSteps : kP90UpSteps;
    late_estimate_ns = std::clamp<int64_t>(initial_ns - kMarginNs, 0, max_ns);
  }
  int64_t window() const { return std::clamp(late_estimate_ns + kMarginNs, kMinNs, max_ns); }
  // A sleep meant to end at t ended at t + late_ns.
  void observe(int64_t late_ns) {
    late_estimate_ns += late_ns > late_estimate_ns ? up_steps * kStepNs : -kStepNs;
    late_estimate_ns = std::clamp<int64_t>(late_estimate_ns, 0, max_ns);
  }
};

// Server: the scheduled time, from the series start.
struct ServerScheduler {
  Series& series;
  const std::atomic<bool>& aborted;
  bool pinned;          // the issue thread owns its CPU: spin, never sleep
  int64_t lead_ns = 0;  // > 0: at_lead() this long before each due time
  // Unpinned: the sleep-then-spin window (kServerSpinWindowNs, or less: see
  // native_sut_spin_window_ns).
  int64_t unpinned_window_ns = kServerSpinWindowNs;
  // Unpinned with a native SUT: the window follows the sleeps' lateness.
  AdaptiveSpinWindow* adaptive = nullptr;
  // A native SUT that works on this thread while it waits (begin_inline_issuing).
  NativeSut* inline_sut = nullptr;

  int64_t wait(int64_t target_ns, int64_t window_ns, bool yield_while_spinning) const {
    return inline_sut != nullptr ? inline_sut->wait_until(target_ns, window_ns, yield_while_spinning)
                                 : wait_until_ns(target_ns, window_ns, yield_while_spinning);
  }

  int64_t spin_window_ns() const {
    if (pinned) return kMaxSleepSliceNs;
    return adaptive != nullptr ? adaptive->window() : unpinned_window_ns;
  }

  template <typename AtLead>
  bool wait_due(uint64_t q, int64_t* now, AtLead&& at_lead) const {
    const int64_t wait_until = server_wait_until_ns(series, q);
    const int64_t target = series.start_ns + wait_until;
    const int64_t window = spin_window_ns();
    int64_t t = now_ns();
    // In slices, so an abort is noticed (pinned: spun, not slept).
    while (target - t > kMaxSleepSliceNs + window && !aborted.load(std::memory_order_acquire)) {
      t = wait(t + kMaxSleepSliceNs, pinned ? kMaxSleepSliceNs : 0, !pinned);
    }
    if (aborted.load(std::memory_order_acquire)) return false;
    series.issue_thread_cpu.store(current_cpu(), std::memory_order_relaxed);
    if (wait_until != series.trace.scheduled_delta_ns[q]) {  // max_duration, before q is due
      *now = wait(target, window, !pinned);
      return true;
    }
    if (lead_ns > 0) {
      wait(target - lead_ns, window, !pinned);
      at_lead();
    }
    if (adaptive != nullptr && !pinned && target - t > window) {
      // The sleep alone first, to see how late it ends.
      const int64_t sleep_until = target - window;
      adaptive->observe(wait(sleep_until, 0, false) - sleep_until);
    }
    *now = wait(target, window, !pinned);
    return true;
  }
};

// SingleStream/MultiStream: the previous query's completion.
struct SequenceScheduler {
  Series& series;
  Signal& completions;
  const std::atomic<bool>& aborted;
  int64_t stall_limit_ns;

  template <typename AtLead>
  bool wait_due(uint64_t q, int64_t* now, AtLead&&) const {
    if (q > 0) {
      // With hand-over the completing call may have issued this query (and
      // more) already. No per-query wake then: only the end of issuing or a
      // completion that handed nothing over.
      const bool due = wait_for_completions(series, completions, stall_limit_ns, aborted, [&] {
        if (!series.hand_over) return series.query_done(q - 1);
        if (series.issue_ended.load(std::memory_order_acquire)) return true;
        return series.query_done(series.next_issue.load(std::memory_order_acquire) - 1) &&
               series.handing_over.load(std::memory_order_seq_cst) == 0;
      });
      if (!due) return false;
    }
    *now = now_ns();
    return true;
  }
};

// Offline: its one query is due at once.
struct OfflineScheduler {
  template <typename AtLead>
  bool wait_due(uint64_t, int64_t* now, AtLead&&) const {
    *now = now_ns();
    return true;
  }
};

}  // namespace loadgen

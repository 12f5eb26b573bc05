#include "dispatch.h"

#include <algorithm>
#include <vector>

#include "clock.h"
#include "issuer.h"

namespace loadgen {

void stamp_dispatched(Series& series, uint64_t first, uint64_t end, uint64_t stride, int64_t elapsed_ns) {
  // One writer per query: the drain that hands it over, or the worker claim
  // holding its first sample.
  for (uint64_t q = first; q < end; q += stride) series.dispatched_ns[q].store(elapsed_ns, std::memory_order_relaxed);
}

void Dispatch::begin_run(uint64_t issue_threads) {
  thread_drain_capacity_ = std::min<uint64_t>(issue_threads, 4096);
  if (thread_drain_capacity_ != 0) {
    thread_drain_pending_.reset(new std::atomic<bool>[thread_drain_capacity_]);
    for (uint64_t t = 0; t < thread_drain_capacity_; ++t) thread_drain_pending_[t].store(false);
  }
}

uint64_t Dispatch::attach_issue_threads(uint64_t n, bool spread, RunLog& log) {
  if (n == 0) return 0;
  const std::vector<uint64_t> ids = host_->wait_for_issue_threads(n, config_.issue_thread_wait_ms);
  for (uint64_t i = issue_threads_logged_; i < ids.size(); ++i) {
    log.log("generic_message",
            "Registered IssueQueryThread[" + std::to_string(i) + "]. thread ID : " + std::to_string(ids[i]), false,
            false);
  }
  issue_threads_logged_ = std::max<uint64_t>(issue_threads_logged_, ids.size());
  if (ids.size() != n) {
    log.log("error_runtime",
            "Mismatch between settings and number of registered IssueQueryThreads! "
            "settings.server_num_issue_query_threads = " +
                std::to_string(n) + " but " + std::to_string(ids.size()) + " threads registered.",
            true, false);
  }
  // Only Server spreads queries over registered threads; the null-native SUT
  // completes on the issue thread. With fewer registrations than asked, the
  // registered ones share all queries (the reference would leave holes).
  uint64_t stride = 0;
  if (spread) stride = std::min<uint64_t>(std::min<uint64_t>(ids.size(), n), thread_drain_capacity_);
  for (uint64_t t = 0; t < stride; ++t) thread_drain_pending_[t].store(false, std::memory_order_seq_cst);
  host_->use_issue_threads(stride);
  return stride;
}

bool Dispatch::attach_workers(RunLog& log, std::string* error) {
  if (workers_attached_) return true;
  const uint64_t n = config_.dispatch_workers;
  const std::vector<uint64_t> ids = host_->wait_for_dispatch_workers(n, config_.issue_thread_wait_ms);
  for (uint64_t i = 0; i < ids.size(); ++i) {
    log.log("generic_message",
            "Registered dispatch worker[" + std::to_string(i) + "]. thread ID : " + std::to_string(ids[i]), false,
            false);
  }
  if (ids.size() < n) {
    *error = "dispatch 'worker' needs " + std::to_string(n) + " registered worker thread(s) but " +
             std::to_string(ids.size()) + " registered within " + std::to_string(config_.issue_thread_wait_ms) +
             " ms";
    log.log("error_runtime", *error, true, false);
    return false;
  }
  worker_parts_ = std::max<uint64_t>(1, n);
  workers_attached_ = true;
  return true;
}

void Dispatch::end_series(Series& series) {
  series.issuing_ended.store(true, std::memory_order_seq_cst);
  worker_signal_.notify();
}

void Dispatch::quiesce_workers() {
  // A worker may still be inside its completion call (which also writes the
  // sampled responses' accuracy records); the series' records must be in
  // before the log moves on. Every worker back inside dispatch_next() proves
  // its task ended. Bounded: a worker that stopped (its SUT threw) never returns.
  const int64_t deadline = now_ns() + 1000000000;
  while (workers_inside_.load(std::memory_order_seq_cst) < worker_parts_ && !aborted() && now_ns() < deadline) {
    wait_until_ns(now_ns() + 50000, 0);
  }
}

void Dispatch::end_run() {
  run_over_.store(true, std::memory_order_seq_cst);
  worker_signal_.notify();
}

void Dispatch::wake_ahead() {
  if (!drain_pending_.exchange(true, std::memory_order_seq_cst)) host_->wake();
}

uint64_t Dispatch::published_queries() const {
  const Series* s = current();
  return s ? s->published.load(std::memory_order_acquire) : 0;
}

int64_t Dispatch::next_due_ns(const Series& series) const {
  if (series.scenario != Scenario::Server) return -1;
  // Acquire: a publication happens after start_ns was written.
  const uint64_t p = series.published.load(std::memory_order_acquire);
  if (p == 0 || p >= series.trace.query_count()) return -1;
  return series.start_ns + series.trace.scheduled_delta_ns[p];
}

uint64_t Dispatch::drain_published(uint64_t seen) {
  if (config_.wake_lead_ns > 0) wait_published(seen, config_.wake_lead_ns, false);
  begin_drain();
  return published_queries();
}

bool Dispatch::hold_drain_for_next_due() {
  if (config_.wake_lead_ns <= 0) return false;
  const Series* s = current();
  if (s == nullptr) return false;
  const int64_t due = next_due_ns(*s);
  if (due < 0 || due - now_ns() > config_.wake_lead_ns) return false;
  // Taken by a pending wake already: its drain comes; leave this one.
  return !drain_pending_.exchange(true, std::memory_order_seq_cst);
}

uint64_t Dispatch::wait_published(uint64_t seen, int64_t window_ns, bool when_idle) {
  Series* s = current();
  if (s == nullptr) return 0;
  uint64_t p = s->published.load(std::memory_order_acquire);
  if (p != seen || window_ns <= 0) return p;
  int64_t now = now_ns();
  // Poll: at most one window a call (fewer event-loop turns: each allocates,
  // and ~1M turns a second meant ~100 scavenges a second, whose pauses set
  // the delivery lag's p99), or until a window past the next query's due time.
  const int64_t due = next_due_ns(*s);
  const bool due_soon = due >= 0 && due - now <= window_ns;
  if (!due_soon && !when_idle) return p;
  const int64_t give_up = due_soon ? std::max(due, now) + window_ns : now + window_ns;
  for (;;) {
    // Yield (other threads of this process may need the core) until the
    // last stretch before the due time, then spin; but never spin on the
    // issue thread's CPU: the query would wait for this thread's time slice
    // to end (measured: issue lateness p99 3.8 ms at 1k QPS).
    if (due >= 0 && due - now <= kPollHardSpinNs &&
        current_cpu() != s->issue_thread_cpu.load(std::memory_order_relaxed)) {
      cpu_relax();
    } else {
      yield_cpu();
    }
    p = s->published.load(std::memory_order_acquire);
    if (p != seen || issuing_stopped() || current() != s) return p;
    now = now_ns();
    // The issue thread is late for query p: issue it from here (one CAS decides).
    // poll_issue is read only after due_soon: a due time exists once a query
    // was published (acquire), and poll_issue is written before the first
    // publication; read earlier it races with the issue thread (TSan).
    if (due_soon && now >= due && s->poll_issue) {
      const uint64_t issued = try_issue(*s, p, issuing_stopped()).published;
      if (issued != 0) return issued;
    }
    if (now >= give_up) return p;
  }
}

void Dispatch::mark_dispatched(uint64_t first, uint64_t end, uint64_t stride) {
  Series* s = current();
  if (s == nullptr) return;
  // Only published queries: the range comes from JS.
  end = std::min(end, s->published.load(std::memory_order_acquire));
  if (first >= end) return;
  stamp_dispatched(*s, first, end, stride == 0 ? 1 : stride, now_ns() - s->start_ns);
}

uint64_t Dispatch::outstanding_samples() const {
  const Series* s = current();
  if (s == nullptr) return 0;
  const uint64_t issued = s->published.load(std::memory_order_acquire) * s->samples_per_query;
  const uint64_t done = s->completed_samples.load(std::memory_order_acquire);
  return issued > done ? issued - done : 0;
}

bool Dispatch::claim(Series& series, DispatchClaim* out) {
  const uint64_t spq = series.samples_per_query;
  // Offline's one query is split so every worker gets a part; otherwise a
  // claim is one whole query (every due one when coalescing).
  const bool split = series.scenario == Scenario::Offline;
  uint64_t cur = series.claimed_samples.load(std::memory_order_acquire);
  uint64_t n = 0;
  for (;;) {
    const uint64_t available = series.published.load(std::memory_order_acquire) * spq;
    if (cur >= available) return false;
    // Read only after a publication was seen (acquire): attach_workers wrote
    // worker_parts_ before the first one, and a worker may look earlier (TSan).
    const uint64_t part = split ? (spq + worker_parts_ - 1) / worker_parts_ : spq;
    n = series.coalesce ? available - cur : std::min(part, available - cur);
    if (series.claimed_samples.compare_exchange_weak(cur, cur + n, std::memory_order_acq_rel)) break;
  }
  // The claim holding a query's first sample stamps its delivery.
  stamp_dispatched(series, (cur + spq - 1) / spq, (cur + n + spq - 1) / spq, 1, now_ns() - series.start_ns);
  out->first_id = series.first_id;
  out->first_sample = cur;
  out->samples = n;
  return true;
}

int Dispatch::dispatch_next(uint64_t flushed_first_id, int64_t spin_ns, int64_t wait_ns, DispatchClaim* out) {
  workers_inside_.fetch_add(1, std::memory_order_seq_cst);
  struct Leave {
    std::atomic<uint64_t>& inside;
    ~Leave() { inside.fetch_sub(1, std::memory_order_seq_cst); }
  } leave{workers_inside_};
  int status = kDispatchIdle;
  // Signal::wait may call the predicate again after it returned true (its
  // check before sleeping): a claim already made must not be replaced.
  auto ready = [&] {
    if (status != kDispatchIdle) return true;
    if (aborted()) {
      status = kDispatchOver;
      return true;
    }
    Series* s = current();
    if (s == nullptr) {
      if (!run_over_.load(std::memory_order_acquire)) return false;
      status = kDispatchOver;
      return true;
    }
    if (claim(*s, out)) {
      status = kDispatchClaimed;
      return true;
    }
    if (s->issuing_ended.load(std::memory_order_acquire) && s->first_id != flushed_first_id) {
      // Everything is published now: claim what the first look may have missed.
      if (claim(*s, out)) {
        status = kDispatchClaimed;
        return true;
      }
      out->first_id = s->first_id;
      status = kDispatchSeriesEnded;
      return true;
    }
    // After the last series' end was reported: a worker flushes even when the
    // run ended before it got to look (a loaded machine).
    if (run_over_.load(std::memory_order_acquire)) {
      status = kDispatchOver;
      return true;
    }
    return false;
  };
  const int64_t deadline = now_ns() + std::max<int64_t>(wait_ns, 0);
  if (spin_ns > 0 && !ready()) {
    // Server: the next query's time is known. Sleep (a publication wakes us
    // early) until spin_ns before it is due, then spin for it: a spinning
    // worker's delivery lag without spinning between queries.
    // A late issue thread: the worker issues the due query itself (one CAS
    // decides who issues it).
    Series* s = current();
    const uint64_t p = s != nullptr ? s->published.load(std::memory_order_acquire) : 0;
    const int64_t due = s != nullptr ? next_due_ns(*s) : -1;
    if (due >= 0) {
      const int64_t now = now_ns();
      const int64_t spin_from = std::min(deadline, due - spin_ns);
      if (spin_from > now) worker_signal_.wait(ready, spin_from, 0, spin_from - now);
      if (status != kDispatchIdle) return status;
      const int64_t until = std::min(deadline, std::max(due, now_ns()) + spin_ns);
      while (!ready()) {
        const int64_t t = now_ns();
        if (t >= until) break;
        // poll_issue after due (see wait_published): due >= 0 means a publication was seen.
        if (t >= due && s->poll_issue && try_issue(*s, p, issuing_stopped()).published != 0) continue;  // claimed by ready() next
        yield_cpu();
      }
      return status;
    }
  }
  worker_signal_.wait(ready, deadline, std::min(spin_ns, wait_ns), wait_ns);
  return status;
}

}  // namespace loadgen

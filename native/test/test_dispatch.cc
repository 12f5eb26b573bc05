// Dispatch modes without JS: poll (a host thread polls published_queries())
// and worker (threads claim work with Session::dispatch_next()).
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "check.h"
#include "test_util.h"
#include "fake_host.h"
#include "session.h"

using namespace loadgen;
using loadgen_test::count_of;
using loadgen_test::FakeHost;
using loadgen_test::read_file;
using loadgen_test::temp_outdir;

namespace {

SessionConfig dispatch_config(Scenario scenario, DispatchMode mode, const std::string& name) {
  SessionConfig c;
  c.settings.scenario = scenario;
  c.settings.min_duration_ms = 100;
  c.settings.min_query_count = 100;
  c.settings.server_target_qps = 10000;  // >= 662 queries for early stopping at p99
  c.settings.single_stream_expected_latency_ns = 50;
  c.settings.offline_expected_qps = 1000;
  c.qsl_total_count = 64;
  c.qsl_performance_count = 64;
  c.sut_name = "dispatch-sut";
  c.qsl_name = "dispatch-qsl";
  c.dispatch = mode;
  c.issue_thread_wait_ms = 2000;
  c.log.outdir = temp_outdir(name);
  return c;
}

// Counts what the session asks of its host (poll and worker modes never wake
// it) and has `registered` dispatch workers.
class DispatchHost : public FakeHost {
 public:
  explicit DispatchHost(uint64_t registered = 0) : registered_(registered) {}
  std::vector<uint64_t> wait_for_dispatch_workers(uint64_t, int64_t) override {
    std::vector<uint64_t> ids;
    for (uint64_t i = 0; i < registered_; ++i) ids.push_back(100 + i);
    return ids;
  }

 private:
  uint64_t registered_;
};

// Per sample of the run's one series: how often it was delivered. Large
// enough for these runs. Ids are unique in the process (reserve_sample_ids),
// so samples are counted from the series' first id.
struct Deliveries {
  static constexpr uint64_t kSamples = 1 << 20;
  std::unique_ptr<std::atomic<int>[]> count{new std::atomic<int>[kSamples]()};
  std::atomic<uint64_t> total{0};
  std::atomic<uint64_t> series_first_id{0};
  std::atomic<bool> unexpected{false};  // a second series, or beyond kSamples
  void add(uint64_t first_id, uint64_t k) {
    uint64_t expected = 0;
    if (!series_first_id.compare_exchange_strong(expected, first_id) && expected != first_id) unexpected.store(true);
    if (k >= kSamples) {
      unexpected.store(true);
      return;
    }
    count[k].fetch_add(1);
    total.fetch_add(1);
  }
  bool each_once(uint64_t n) const {
    if (unexpected.load() || n > kSamples) return false;
    for (uint64_t k = 0; k < n; ++k)
      if (count[k].load() != 1) return false;
    return true;
  }
};

// A worker thread as runDispatchWorker runs it: claim, complete, flush once per series.
void worker_loop(Session* session, Deliveries* seen, std::atomic<uint64_t>* claims, std::atomic<int>* flushes,
                 int64_t spin_ns) {
  uint64_t flushed = 0;
  for (;;) {
    DispatchClaim c;
    const int status = session->dispatch_next(flushed, spin_ns, 2000000, &c);
    if (status == Session::kDispatchOver) return;
    if (status == Session::kDispatchSeriesEnded) {
      flushed = c.first_id;
      flushes->fetch_add(1);
      continue;
    }
    if (status != Session::kDispatchClaimed) continue;
    claims->fetch_add(1);
    std::vector<double> ids;
    for (uint64_t k = c.first_sample; k < c.first_sample + c.samples; ++k) {
      ids.push_back(static_cast<double>(c.first_id + k));
      seen->add(c.first_id, k);
    }
    session->complete(ids.data(), ids.size());
  }
}

struct WorkerRun {
  RunOutcome outcome;
  std::vector<uint64_t> claims;  // per worker
  int flushes;
  int wakes;
  bool each_once;
  uint64_t delivered;
};

// spin_ns as dispatchSpinUs sets it (Server: from that long before each due time).
WorkerRun run_workers(Scenario scenario, const std::string& name, int workers, int64_t spin_ns = 20000,
                      uint64_t max_query_count = 0) {
  SessionConfig c = dispatch_config(scenario, DispatchMode::Worker, name);
  c.dispatch_spin_ns = spin_ns;  // as the binding passes dispatchSpinUs
  if (max_query_count != 0) {
    c.settings.max_query_count = max_query_count;
    c.settings.min_duration_ms = 10000;
  }
  if (scenario == Scenario::Offline) {
    c.settings.min_duration_ms = 0;  // one query of min_query_count samples
    c.settings.min_query_count = 1000;
  }
  c.dispatch_workers = static_cast<uint64_t>(workers);
  DispatchHost host(static_cast<uint64_t>(workers));
  Session session(c, &host);
  Deliveries seen;
  std::vector<std::atomic<uint64_t>> claims(workers);
  std::atomic<int> flushes{0};
  session.start();
  std::vector<std::thread> threads;
  for (int i = 0; i < workers; ++i) threads.emplace_back(worker_loop, &session, &seen, &claims[i], &flushes, spin_ns);
  host.wait_finished();
  session.join();
  for (auto& t : threads) t.join();
  WorkerRun r;
  r.outcome = session.outcome();
  for (auto& n : claims) r.claims.push_back(n.load());
  r.flushes = flushes.load();
  r.wakes = host.wakes.load();
  r.each_once = seen.each_once(r.outcome.issued_sample_count);
  r.delivered = seen.total.load();
  return r;
}

}  // namespace

TEST(dispatch_worker_server_delivers_every_sample_once_across_workers) {
  WorkerRun r = run_workers(Scenario::Server, "worker_server", 2);
  CHECK(r.outcome.has_summary);  // validity (p99 under 100 ms) depends on the machine's load
  CHECK_EQ(r.outcome.completed_sample_count, r.outcome.issued_sample_count);
  CHECK_EQ(r.delivered, r.outcome.issued_sample_count);
  CHECK(r.each_once);
  CHECK_EQ(r.wakes, 0);
  CHECK_EQ(r.flushes, 2);  // each worker flushes the one series once
  CHECK_EQ(r.claims[0] + r.claims[1], r.outcome.issued_query_count);
}

TEST(dispatch_worker_server_without_and_with_long_spin_delivers_every_sample_once) {
  // 0: futex sleep only. 5 ms: longer than most gaps at 10k QPS, so the
  // worker is inside its spin before nearly every due time.
  for (const int64_t spin_ns : {int64_t{0}, int64_t{5000000}}) {
    WorkerRun r = run_workers(Scenario::Server, "worker_server_spin", 1, spin_ns);
    CHECK(r.outcome.has_summary);
    CHECK_EQ(r.outcome.completed_sample_count, r.outcome.issued_sample_count);
    CHECK_EQ(r.delivered, r.outcome.issued_sample_count);
    CHECK(r.each_once);
    CHECK_EQ(r.flushes, 1);
  }
}

TEST(dispatch_worker_spinning_server_max_query_count_is_exact_whoever_issues) {
  // Spinning workers issue due queries a late issue thread has not (try_issue).
  WorkerRun r = run_workers(Scenario::Server, "worker_spin_max_queries", 2, 5000000, 700);
  CHECK_EQ(r.outcome.issued_query_count, uint64_t{700});
  CHECK_EQ(r.delivered, uint64_t{700});
  CHECK(r.each_once);
  CHECK_EQ(r.outcome.completed_sample_count, uint64_t{700});
}

TEST(dispatch_worker_single_stream_valid) {
  WorkerRun r = run_workers(Scenario::SingleStream, "worker_ss", 2);
  CHECK(r.outcome.summary.result_valid);
  CHECK(r.each_once);
  CHECK_EQ(r.delivered, r.outcome.issued_sample_count);
  CHECK_EQ(r.wakes, 0);
}

TEST(dispatch_worker_offline_query_is_split_per_worker) {
  WorkerRun r = run_workers(Scenario::Offline, "worker_offline", 2);
  CHECK(r.outcome.summary.result_valid);
  CHECK_EQ(r.outcome.issued_query_count, uint64_t{1});
  CHECK(r.each_once);
  CHECK_EQ(r.delivered, r.outcome.issued_sample_count);
  CHECK_EQ(r.claims[0] + r.claims[1], uint64_t{2});  // two halves, whoever took them
}

TEST(dispatch_worker_too_few_registrations_aborts) {
  SessionConfig c = dispatch_config(Scenario::Server, DispatchMode::Worker, "worker_missing");
  c.dispatch_workers = 3;
  DispatchHost host(1);
  Session session(c, &host);
  session.start();
  host.wait_finished();
  session.join();
  CHECK(session.outcome().aborted);
  CHECK(session.outcome().abort_reason.find("needs 3 registered worker") != std::string::npos);
  CHECK(!session.outcome().has_summary);
}

namespace {

// dispatch 'poll' in Server: a host thread polling as lib/dispatch/dispatch.ts's
// PollLoop does, which also issues queries the issue thread is late for.
// `complete` false: the SUT never answers (for max_async_queries).
struct PollRun {
  RunOutcome outcome;
  uint64_t delivered;
  bool each_once;
  int wakes;
  std::string detail;
};

// `on_series` runs on the poller when it sees a new series, before taking its queries.
PollRun run_poll(SessionConfig c, bool complete, const std::function<void(Session&)>& on_series = {}) {
  DispatchHost host;
  Session session(c, &host);
  Deliveries seen;
  std::atomic<bool> stop{false};
  session.start();
  std::thread poller([&] {
    uint64_t cursor = 0;
    uint64_t first_id = 0;
    while (!stop.load()) {
      if (!session.has_series()) continue;
      if (session.first_id() != first_id) {
        first_id = session.first_id();
        cursor = 0;
        if (on_series) on_series(session);
      }
      // As lib/dispatch/dispatch.ts's PollLoop: spin for a query due within 50 us.
      const uint64_t published = session.poll_published(cursor, 50000);
      for (; cursor < published; ++cursor) {
        session.mark_dispatched(cursor);
        seen.add(first_id, cursor);
        if (!complete) continue;
        const double id = static_cast<double>(first_id + cursor);
        session.complete(&id, 1);
      }
    }
  });
  host.wait_finished();
  stop.store(true);
  poller.join();
  session.join();
  PollRun r;
  r.outcome = session.outcome();
  r.delivered = seen.total.load();
  r.each_once = seen.each_once(r.outcome.issued_sample_count);
  r.wakes = host.wakes.load();
  r.detail = read_file(r.outcome.detail_log_path);
  return r;
}

}  // namespace

// What lib/dispatch/sample-indices.ts reads: the current series' QSL
// indices in chunks, refused for another series or a range outside it
// (the arguments come from JS).
TEST(session_copies_sample_indices_of_the_current_series_only) {
  {
    SessionConfig c = dispatch_config(Scenario::Server, DispatchMode::Poll, "copy_indices_idle");
    DispatchHost host;
    Session session(c, &host);
    uint32_t dest = 0;
    CHECK(!session.copy_sample_indices(1, 0, 1, &dest));  // no series yet
  }
  bool checked = false;
  const PollRun r = run_poll(dispatch_config(Scenario::Server, DispatchMode::Poll, "copy_indices"), true, [&](Session& session) {
    const std::vector<uint32_t>& indices = session.trace().sample_index;
    const uint64_t n = indices.size();
    const uint64_t first_id = session.first_id();
    if (checked || n < 3) return;
    checked = true;
    std::vector<uint32_t> dest(8, 0xdeadbeef);
    CHECK(session.copy_sample_indices(first_id, 1, 2, dest.data()));
    CHECK_EQ(dest[0], indices[1]);
    CHECK_EQ(dest[1], indices[2]);
    CHECK_EQ(dest[2], 0xdeadbeefu);  // only count entries written
    CHECK(session.copy_sample_indices(first_id, n - 1, 1, dest.data()));
    CHECK_EQ(dest[0], indices[n - 1]);
    CHECK(session.copy_sample_indices(first_id, n, 0, dest.data()));  // empty range at the end
    CHECK(!session.copy_sample_indices(first_id + 1, 0, 1, dest.data()));  // another series' id
    CHECK(!session.copy_sample_indices(first_id, n, 1, dest.data()));
    CHECK(!session.copy_sample_indices(first_id, n + 1, 0, dest.data()));
    CHECK(!session.copy_sample_indices(first_id, 1, UINT64_MAX, dest.data()));  // no overflow
  });
  CHECK(r.outcome.summary.result_valid);
  CHECK(checked);
}

TEST(dispatch_poll_never_wakes_the_host) {
  {
    SessionConfig c = dispatch_config(Scenario::Server, DispatchMode::Poll, "poll_server_idle");
    DispatchHost host;
    Session session(c, &host);
    CHECK_EQ(session.poll_published(0, 50000), uint64_t{0});  // no series yet: returns at once
  }
  const PollRun r = run_poll(dispatch_config(Scenario::Server, DispatchMode::Poll, "poll_server"), true);
  CHECK(r.outcome.summary.result_valid);
  CHECK_EQ(r.wakes, 0);
  CHECK_EQ(r.delivered, r.outcome.issued_sample_count);
  CHECK(r.each_once);
}

namespace {

// wake mode as bindings/js_host.cc drains: wake() hands a drain to the host
// thread, which waits for a query it was woken ahead of (drain_published)
// and stays for the next one when it is due within the lead.
class WakeAheadHost : public DispatchHost {
 public:
  void wake() override {
    DispatchHost::wake();
    std::lock_guard<std::mutex> lock(m);
    ++posted;
    cv.notify_all();
  }
  std::mutex m;
  std::condition_variable cv;
  uint64_t posted = 0;
};

}  // namespace

TEST(dispatch_wake_ahead_drains_deliver_every_sample_once) {
  SessionConfig c = dispatch_config(Scenario::Server, DispatchMode::Wake, "wake_ahead");
  c.settings.server_target_qps = 20000;  // gaps below the 100 us lead are common
  c.wake_lead_ns = 100000;
  WakeAheadHost host;
  Session session(c, &host);
  Deliveries seen;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> drain_calls{0};
  session.start();
  std::thread drainer([&] {
    uint64_t handled = 0;
    uint64_t drained = 0;
    uint64_t cursor = 0;
    uint64_t first_id = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(host.m);
        host.cv.wait_for(lock, std::chrono::milliseconds(5), [&] { return host.posted > handled || stop.load(); });
        if (stop.load()) return;
        if (host.posted == handled) continue;
        handled = host.posted;
      }
      do {
        drain_calls.fetch_add(1);
        const uint64_t published = session.drain_published(drained);
        drained = published;
        if (session.first_id() != first_id) {
          first_id = session.first_id();
          cursor = 0;
        }
        for (; cursor < published; ++cursor) {
          session.mark_dispatched(cursor);
          const double id = static_cast<double>(first_id + cursor);
          seen.add(first_id, cursor);
          session.complete(&id, 1);
        }
      } while (session.hold_drain_for_next_due());
    }
  });
  host.wait_finished();
  stop.store(true);
  host.cv.notify_all();
  drainer.join();
  session.join();
  const RunOutcome& o = session.outcome();
  CHECK(o.has_summary);
  CHECK_EQ(o.completed_sample_count, o.issued_sample_count);
  CHECK_EQ(seen.total.load(), o.issued_sample_count);
  CHECK(seen.each_once(o.issued_sample_count));
  // Ahead of a query and, when the issue thread was later than the drain
  // waited, at its publication: at most two wakes a query, never one per spin.
  CHECK(host.wakes.load() <= 2 * static_cast<int>(o.issued_query_count));
  CHECK(drain_calls.load() >= static_cast<uint64_t>(host.wakes.load()));
}


TEST(dispatch_poll_server_max_query_count_is_exact_whoever_issues) {
  SessionConfig c = dispatch_config(Scenario::Server, DispatchMode::Poll, "poll_max_queries");
  c.settings.server_target_qps = 50000;  // dense: the poller often issues before the issue thread
  c.settings.min_duration_ms = 10000;
  c.settings.max_query_count = 700;
  const PollRun r = run_poll(c, true);
  CHECK_EQ(r.outcome.issued_query_count, uint64_t{700});
  CHECK_EQ(r.delivered, uint64_t{700});
  CHECK(r.each_once);
  CHECK_EQ(r.outcome.completed_sample_count, uint64_t{700});
  CHECK_EQ(count_of(r.detail, "Ending early: Max query count reached. query_count 700"), size_t{1});
}

TEST(dispatch_poll_server_max_async_queries_stops_after_the_first_excess) {
  SessionConfig c = dispatch_config(Scenario::Server, DispatchMode::Poll, "poll_max_async");
  c.settings.server_target_qps = 50000;
  c.settings.server_max_async_queries = 10;
  c.completion_timeout_ms = 200;  // the SUT never answers
  const PollRun r = run_poll(c, false);
  CHECK_EQ(r.outcome.issued_query_count, uint64_t{11});  // outstanding 11 > 10 ends issuing
  CHECK_EQ(r.delivered, uint64_t{11});
  CHECK(r.each_once);
  CHECK_EQ(count_of(r.detail, "Ending early: Too many outstanding queries. issued 11 outstanding 11"), size_t{1});
}

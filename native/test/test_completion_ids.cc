// Completion ids: unique within the process (reserve_sample_ids), so a late
// completion of an earlier series or run is counted as stale and never
// credited; and completions from many threads at once, racing with the end
// of the series, are each counted exactly once.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "check.h"
#include "fake_host.h"
#include "session.h"
#include "test_util.h"

using namespace loadgen;
using loadgen_test::count_of;
using loadgen_test::FakeHost;
using loadgen_test::read_file;
using loadgen_test::temp_outdir;

namespace {

SessionConfig offline_config(const std::string& name, uint64_t samples) {
  SessionConfig c;
  c.settings.scenario = Scenario::Offline;
  c.settings.min_duration_ms = 0;  // one query of min_query_count samples
  c.settings.min_query_count = samples;
  c.qsl_total_count = 64;
  c.qsl_performance_count = 64;
  c.sut_name = "ids-sut";
  c.qsl_name = "ids-qsl";
  c.log.outdir = temp_outdir(name);
  return c;
}

// Completes each query inside the drain; at the first drain of each series,
// first sends `late` (ids of an earlier run) and the first id of the series
// before it in this run, as a SUT still finishing old work would.
class LateHost : public FakeHost {
 public:
  explicit LateHost(std::vector<double> late = {}) : late_(std::move(late)) {}
  void wake() override {
    session_->begin_drain();
    const uint64_t first = session_->first_id();
    if (first != series_first_) {
      if (series_first_ != 0) {
        const double previous = static_cast<double>(series_first_);
        session_->complete(&previous, 1);
        ++late_sent;
      }
      if (!late_.empty()) {
        session_->complete(late_.data(), late_.size());
        late_sent += late_.size();
        late_.clear();
      }
      series_first_ = first;
      firsts.push_back(first);
      cursor_ = 0;
    }
    const uint64_t published = session_->published_queries();
    for (; cursor_ < published; ++cursor_) complete_query(cursor_);
  }

  uint64_t late_sent = 0;
  std::vector<uint64_t> firsts;  // each series' first id, in order
  uint64_t last_id() const { return series_first_ + session_->trace().sample_count() - 1; }

 private:
  std::vector<double> late_;
  uint64_t series_first_ = 0;
  uint64_t cursor_ = 0;
};

}  // namespace

TEST(sample_ids_are_reserved_disjoint_from_any_thread) {
  constexpr int kThreads = 8, kPerThread = 500;
  constexpr uint64_t kCount = 7;
  std::vector<std::vector<uint64_t>> firsts(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&firsts, t] {
      for (int i = 0; i < kPerThread; ++i) firsts[t].push_back(reserve_sample_ids(kCount));
    });
  }
  for (auto& thread : threads) thread.join();
  std::vector<uint64_t> all;
  for (const auto& f : firsts) all.insert(all.end(), f.begin(), f.end());
  std::sort(all.begin(), all.end());
  CHECK(all.front() >= 1);
  bool disjoint = true;
  for (size_t i = 1; i < all.size(); ++i) disjoint = disjoint && all[i] - all[i - 1] >= kCount;
  CHECK(disjoint);
  // Later reservations begin past every earlier one.
  CHECK(reserve_sample_ids(1) >= all.back() + kCount);
}

TEST(session_ids_continue_across_runs_and_a_late_completion_is_stale_not_credited) {
  // Run 1: an ordinary run.
  LateHost first_host;
  SessionConfig c1 = offline_config("ids_run1", 100);
  Session run1(c1, &first_host);
  const RunOutcome& o1 = first_host.run(run1);
  CHECK_EQ(o1.completed_sample_count, uint64_t{100});
  const uint64_t run1_first = first_host.firsts.at(0);
  const uint64_t run1_last = first_host.last_id();

  // Run 2 receives completions of every run 1 id (and run 1's first again) before its own.
  std::vector<double> late;
  for (uint64_t id = run1_first; id <= run1_last; ++id) late.push_back(static_cast<double>(id));
  late.push_back(static_cast<double>(run1_first));
  LateHost second_host(late);
  Session run2(offline_config("ids_run2", 100), &second_host);
  const RunOutcome& o2 = second_host.run(run2);
  CHECK(second_host.firsts.at(0) > run1_last);
  CHECK_EQ(second_host.late_sent, uint64_t{101});
  CHECK_EQ(o2.completion_errors.stale_ids, uint64_t{101});
  CHECK_EQ(o2.completion_errors.duplicate_ids, uint64_t{0});
  CHECK_EQ(o2.completion_errors.invalid_ids, uint64_t{0});
  CHECK_EQ(o2.completed_sample_count, o2.issued_sample_count);
  CHECK(o2.summary.result_valid);
  // One detail-log line each, as every rejected id.
  const std::string detail = read_file(o2.detail_log_path);
  CHECK_EQ(count_of(detail, "late completion for an id of an earlier series or run"), size_t{101});
}

TEST(session_a_late_completion_of_an_earlier_series_of_the_run_is_stale) {
  // SubmissionRun: an accuracy series, then the performance series.
  SessionConfig c = offline_config("ids_series", 100);
  c.settings.mode = Mode::SubmissionRun;
  LateHost host;
  Session session(c, &host);
  const RunOutcome& o = host.run(session);
  CHECK(host.firsts.size() >= 2);
  CHECK(std::is_sorted(host.firsts.begin(), host.firsts.end()));
  CHECK_EQ(host.late_sent, uint64_t{host.firsts.size() - 1});
  CHECK_EQ(o.completion_errors.stale_ids, host.late_sent);
  CHECK_EQ(o.completion_errors.duplicate_ids, uint64_t{0});
  CHECK_EQ(o.completed_sample_count, o.issued_sample_count);
}

namespace {

// Waits for the Offline query to be published, then lets the test's threads go.
class StartGateHost : public FakeHost {
 public:
  void wake() override {
    session_->begin_drain();
    if (session_->published_queries() > 0) published.store(true, std::memory_order_release);
  }
  std::atomic<bool> published{false};
};

}  // namespace

TEST(completions_from_8_threads_at_once_while_the_series_ends_are_each_counted_once) {
  constexpr uint64_t kThreads = 8, kPerThread = 2048, kSamples = kThreads * kPerThread, kBatch = 16;
  reserve_sample_ids(1000);  // ids below this run's first exist even when this test runs alone
  StartGateHost host;
  Session session(offline_config("ids_8_threads", kSamples), &host);
  host.attach(&session);
  session.start();
  while (!host.published.load(std::memory_order_acquire)) std::this_thread::yield();
  const uint64_t first = session.first_id();
  const uint64_t spq = session.trace().samples_per_query;
  CHECK_EQ(spq, kSamples);

  // Thread t owns samples t, t + 8, ...; in the first half of its samples it
  // also completes the next thread's (contested: one of the two wins), a
  // stale id, and bad ids. Its last half holds only its own samples, so the
  // series cannot end before each thread's last rejected id was counted.
  std::atomic<bool> go{false};
  std::atomic<bool> finished{false};
  std::atomic<uint64_t> attempted_valid{0}, attempted_stale{0}, attempted_invalid{0}, after_end{0};
  std::vector<std::thread> threads;
  for (uint64_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      std::vector<double> ids;
      uint64_t valid = 0, stale = 0, invalid = 0;
      for (uint64_t i = 0; i < kPerThread; i += kBatch) {
        ids.clear();
        for (uint64_t j = i; j < i + kBatch; ++j) {
          const uint64_t k = j * kThreads + t;
          if (j < kPerThread / 2) {
            ids.push_back(static_cast<double>(first + j * kThreads + (t + 1) % kThreads));
            ids.push_back(static_cast<double>(first - 1 - (j % 500)));  // stale
            ids.push_back(j % 2 ? 0.5 : static_cast<double>(first + kSamples + j));  // invalid
            valid += 1;
            stale += 1;
            invalid += 1;
          }
          ids.push_back(static_cast<double>(first + k));
          valid += 1;
        }
        session.complete(ids.data(), ids.size());
      }
      attempted_valid.fetch_add(valid);
      attempted_stale.fetch_add(stale);
      attempted_invalid.fetch_add(invalid);
      // While the series ends and after: bad ids keep coming until the run
      // is over (only counted if before the counts are taken).
      while (!finished.load(std::memory_order_acquire)) {
        const double late[] = {-1.0, 1e300};
        session.complete(late, 2);
        after_end.fetch_add(2);
        std::this_thread::sleep_for(std::chrono::microseconds(20));  // 8 threads, maybe 2 CPUs: leave the session some
      }
    });
  }
  go.store(true, std::memory_order_release);
  host.wait_finished();
  finished.store(true, std::memory_order_release);
  for (auto& thread : threads) thread.join();
  session.join();

  const RunOutcome& o = session.outcome();
  const CompletionErrorCounts& e = o.completion_errors;
  CHECK_EQ(o.issued_sample_count, kSamples);
  CHECK_EQ(o.completed_sample_count, kSamples);
  CHECK_EQ(o.incomplete_sample_count, uint64_t{0});
  CHECK_EQ(attempted_valid.load(), kSamples + kSamples / 2);
  // Every valid attempt either completed a sample or was its duplicate.
  CHECK_EQ(o.completed_sample_count + e.duplicate_ids, attempted_valid.load());
  CHECK_EQ(e.stale_ids, attempted_stale.load());
  CHECK_EQ(e.unissued_ids, uint64_t{0});
  // Calls after the series ended may land before or after the counts are taken.
  CHECK(e.invalid_ids >= attempted_invalid.load());
  CHECK(e.invalid_ids <= attempted_invalid.load() + after_end.load());
  CHECK_EQ(o.summary.sample_count, kSamples);
}

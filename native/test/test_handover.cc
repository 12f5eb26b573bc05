// SingleStream/MultiStream hand-over: the completing call issues the next
// query itself (Session::complete with hand_over). A C++ host with its own
// "JS thread" drains the way lib/dispatch/drain.ts + lib/dispatch/handover.ts do; every run is
// compared with the same settings without hand-over (the issue thread issues).
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "fake_host.h"
#include "session.h"
#include "test_util.h"

using namespace loadgen;
using loadgen_test::FakeHost;

namespace {

// Inline: the SUT completes inside issueQuery (the drain loop takes the
// handed-over query when it returns). Deferred: the SUT completes after the
// drain, on the same thread (a microtask drains the handed-over query).
// Off: completions never hand over (the issue thread issues every query).
enum class Sut { Inline, Deferred, Off };

class HandOverHost : public FakeHost {
 public:
  // split: complete a MultiStream query's samples in two calls (the first
  // leaves its last sample outstanding, so only the second can hand over).
  explicit HandOverHost(Sut sut, bool split = false) : sut_(sut), split_(split) {}
  ~HandOverHost() override {
    post(Event::Stop);
    if (js_.joinable()) js_.join();
  }
  void attach(Session* session) override {
    FakeHost::attach(session);
    js_ = std::thread([this] { loop(); });
  }
  // Everything the session asks goes through the "JS thread"'s event queue.
  void series_started() override { post(Event::Series); }
  void wake() override { post(Event::Drain); }
  void flush_queries() override { post(Event::Flush, session_->published_queries()); }
  void finished() override { post(Event::Finished); }

  uint64_t handed = 0;        // queries completion calls issued
  bool flushed_after_all = true;  // every published query reached the SUT before each flush
  bool dispatched_in_order = true;

 private:
  enum class Event { Drain, Series, Flush, Finished, Stop };
  void post(Event e, uint64_t value = 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back({e, value});
    cv_.notify_all();
  }
  void loop() {
    for (;;) {
      Event e;
      uint64_t value;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return !events_.empty(); });
        e = events_.front().first;
        value = events_.front().second;
        events_.pop_front();
      }
      switch (e) {
        case Event::Drain:
          session_->begin_drain();
          drain(session_->published_queries());
          break;
        case Event::Series:
          cursor_ = 0;
          break;
        case Event::Flush:
          FakeHost::flush_queries();
          // What the series published when its issuing ended (the next series may be current now).
          if (cursor_ != value) flushed_after_all = false;
          break;
        case Event::Finished:
          FakeHost::finished();
          break;
        case Event::Stop:
          return;
      }
      // Deferred completions, each followed by the "microtask" drain of what it handed over.
      while (!pending_.empty()) {
        const uint64_t q = pending_.front();
        pending_.pop_front();
        const uint64_t p = complete_query(q);
        if (p != 0) drain(p);
      }
    }
  }
  void drain(uint64_t published) {
    // As lib/dispatch/drain.ts: a query handed over inside this drain was
    // stamped delivered by the completing call; only the others are marked.
    const uint64_t handed_from = published;
    while (cursor_ < published) {
      const uint64_t q = cursor_++;
      if (q < handed_from) session_->mark_dispatched(q);
      if (sut_ == Sut::Deferred) {
        pending_.push_back(q);
        continue;
      }
      const uint64_t p = complete_query(q);
      if (p > published) published = p;
    }
  }
  uint64_t complete_query(uint64_t q) {
    const std::vector<double> ids = query_ids(q);
    const bool hand_over = sut_ != Sut::Off;
    uint64_t p = 0;
    if (split_ && ids.size() > 1) {
      p = session_->complete(ids.data(), ids.size() - 1, hand_over);
      if (p != 0) dispatched_in_order = false;  // a query is not done before its last sample
      p = session_->complete(ids.data() + ids.size() - 1, 1, hand_over);
    } else {
      p = session_->complete(ids.data(), ids.size(), hand_over);
    }
    if (p != 0) {
      ++handed;
      if (p != q + 2) dispatched_in_order = false;  // the next query, exactly
    }
    return p;
  }

  Sut sut_;
  bool split_;
  std::thread js_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::pair<Event, uint64_t>> events_;
  std::deque<uint64_t> pending_;  // JS thread only
  uint64_t cursor_ = 0;           // JS thread only
};

SessionConfig config(Scenario scenario, const std::string& name) {
  SessionConfig c;
  c.settings.scenario = scenario;
  c.settings.single_stream_expected_latency_ns = 100;
  c.settings.multi_stream_expected_latency_ns = 100;
  c.settings.multi_stream_samples_per_query = 4;
  c.settings.min_duration_ms = 0;
  c.settings.min_query_count = 100;
  c.qsl_total_count = 64;
  c.qsl_performance_count = 64;
  c.sut_name = "handover-sut";
  c.qsl_name = "handover-qsl";
  const auto dir = std::filesystem::temp_directory_path() / ("loadgen_core_test_handover_" + name);
  std::filesystem::create_directories(dir);
  c.log.outdir = dir.string();
  return c;
}

struct Run {
  RunOutcome outcome;
  uint64_t handed = 0;
  uint64_t flushes = 0;
  bool flushed_after_all = false;
  bool dispatched_in_order = false;
};

Run run(const SessionConfig& c, Sut sut, bool split = false) {
  HandOverHost host(sut, split);
  Session session(c, &host);
  const RunOutcome& outcome = host.run(session);
  return Run{outcome, host.handed, static_cast<uint64_t>(host.flushes.load()), host.flushed_after_all,
             host.dispatched_in_order};
}

// The messages, less the clock check's (a run of a few ms can show a
// PerfClock/system_clock ratio off by a whole millisecond).
std::vector<std::string> texts(const RunOutcome& o) {
  std::vector<std::string> out;
  for (const auto& m : o.messages) {
    if (m.text.find("PerfClock and system_clock") == std::string::npos) out.push_back(m.key + ": " + m.text);
  }
  return out;
}

bool has_text(const RunOutcome& o, const std::string& text) {
  for (const auto& m : o.messages)
    if (m.text.find(text) != std::string::npos) return true;
  return false;
}

// The run ended as a stalled SUT (no completion within the stall limit).
bool stalled(const RunOutcome& o) {
  for (const auto& reason : o.extra_invalid_reasons)
    if (reason.find("The SUT stopped completing samples") != std::string::npos) return true;
  return false;
}

// Everything issued completed, nothing rejected, every query reached the SUT before the flush.
void check_clean(const Run& r) {
  CHECK_EQ(r.outcome.incomplete_sample_count, uint64_t{0});
  CHECK_EQ(r.outcome.completed_sample_count, r.outcome.issued_sample_count);
  CHECK_EQ(r.outcome.completion_errors.unissued_ids, uint64_t{0});
  CHECK_EQ(r.outcome.completion_errors.duplicate_ids, uint64_t{0});
  CHECK_EQ(r.outcome.completion_errors.invalid_ids, uint64_t{0});
  CHECK(r.flushed_after_all);
  CHECK(r.dispatched_in_order);
  CHECK(!r.outcome.aborted);
}

// The same settings with and without hand-over: same issued count, same messages.
// (expect_handed: short runs may see the issue thread win every race.)
void check_same(const SessionConfig& c, Sut sut, bool split = false, bool expect_handed = true) {
  const Run off = run(c, Sut::Off, split);
  const Run on = run(c, sut, split);
  check_clean(off);
  check_clean(on);
  CHECK_EQ(off.handed, uint64_t{0});
  if (expect_handed) CHECK(on.handed > 0);
  CHECK_EQ(on.outcome.issued_query_count, off.outcome.issued_query_count);
  CHECK_EQ(on.outcome.issued_sample_count, off.outcome.issued_sample_count);
  CHECK(texts(on.outcome) == texts(off.outcome));
  if (texts(on.outcome) != texts(off.outcome)) {
    for (const auto& t : texts(off.outcome)) std::cerr << "  without hand-over: " << t << "\n";
    for (const auto& t : texts(on.outcome)) std::cerr << "  with hand-over:    " << t << "\n";
  }
  CHECK_EQ(on.flushes, off.flushes);
  if (on.outcome.has_summary) {
    // Latency = completion - issue of the same query: never negative.
    CHECK(on.outcome.summary.sample_latency_min >= 0);
    CHECK_EQ(on.outcome.summary.raw.queries_issued, off.outcome.summary.raw.queries_issued);
  }
}

}  // namespace

TEST(handover_single_stream_ends_naturally_at_min_query_count) {
  SessionConfig c = config(Scenario::SingleStream, "natural");
  c.settings.min_query_count = 3000;
  const Run on = run(c, Sut::Inline);
  CHECK_EQ(on.outcome.issued_query_count, uint64_t{3000});
  CHECK(has_text(on.outcome, "Ending naturally: Minimum query count and test duration met."));
  // The issue thread issued only the first query (and those it won a race for).
  CHECK(on.handed > 2000);
  // Every query's delivery is stamped, the handed-over ones by the core.
  CHECK(on.outcome.overhead.has_delivery_lag);
  CHECK_EQ(on.outcome.overhead.delivery_lag.count, uint64_t{3000});
  check_same(c, Sut::Inline);
  check_same(c, Sut::Deferred);
}

TEST(handover_single_stream_max_query_count) {
  SessionConfig c = config(Scenario::SingleStream, "max_count");
  c.settings.single_stream_expected_latency_ns = 1000000;  // 100 s: 100,000 queries generated
  c.settings.min_duration_ms = 100000;
  c.settings.max_query_count = 777;
  const Run on = run(c, Sut::Inline);
  CHECK_EQ(on.outcome.issued_query_count, uint64_t{777});
  CHECK(has_text(on.outcome, "IssueQueryThread 0 Ending early: Max query count reached. query_count 777"));
  check_same(c, Sut::Inline);
  check_same(c, Sut::Deferred);
}

TEST(handover_single_stream_max_duration) {
  SessionConfig c = config(Scenario::SingleStream, "max_duration");
  c.settings.single_stream_expected_latency_ns = 100000;  // 100 s: 1,000,000 queries generated
  c.settings.min_duration_ms = 100000;
  // Also how long the first completion may take (the stall limit): longer in a slow sanitizer build.
  c.settings.max_duration_ms = 20 * loadgen_test::time_factor();
  for (Sut sut : {Sut::Inline, Sut::Deferred}) {
    // A thread preempted for longer than the 20-ms limit (a loaded machine)
    // ends the run as a stalled SUT instead: that is the machine, not the
    // rule under test, so such a run is tried again (at most 3 times).
    Run on = run(c, sut);
    for (int tries = 1; tries < 3 && stalled(on.outcome); ++tries) {
      on = run(c, sut);
    }
    check_clean(on);
    CHECK(on.handed > 0);
    CHECK(has_text(on.outcome, "IssueQueryThread 0 Ending early: Max test duration reached. duration_ns "));
    if (!has_text(on.outcome, "Max test duration reached")) {
      for (const auto& t : texts(on.outcome)) std::cerr << "  message: " << t << "\n";
      for (const auto& t : on.outcome.extra_invalid_reasons) std::cerr << "  invalid: " << t << "\n";
      std::cerr << "  issued " << on.outcome.issued_query_count << " generated " << on.outcome.generated_query_count << " handed " << on.handed << "\n";
    }
    // The query whose issue time passed max_duration was the last one issued.
    CHECK(on.outcome.summary.raw.final_query_issued_time_s > 0.020 * loadgen_test::time_factor());
  }
}

TEST(handover_single_stream_ran_out) {
  SessionConfig c = config(Scenario::SingleStream, "ran_out");
  // 50 ms at an expected 1 ms a query: 64 queries generated (>= the loadable
  // set), issued in well under 50 ms. Both scaled alike (the same queries) in
  // a slow sanitizer build.
  c.settings.single_stream_expected_latency_ns = 1000000 * loadgen_test::time_factor();
  c.settings.min_duration_ms = 50 * loadgen_test::time_factor();
  c.settings.min_query_count = 10;
  const Run on = run(c, Sut::Inline);
  CHECK_EQ(on.outcome.issued_query_count, on.outcome.generated_query_count);
  CHECK(has_text(on.outcome, "Ending early: Ran out of generated queries to issue"));
  check_same(c, Sut::Inline);
  check_same(c, Sut::Deferred);
}

TEST(handover_accuracy_mode_issues_everything) {
  SessionConfig c = config(Scenario::SingleStream, "accuracy");
  c.settings.mode = Mode::AccuracyOnly;
  c.settings.max_query_count = 5;  // ignored in accuracy series
  const Run on = run(c, Sut::Inline);
  CHECK_EQ(on.outcome.issued_query_count, on.outcome.generated_query_count);
  CHECK(on.outcome.issued_query_count >= 64);
  check_same(c, Sut::Inline, false, false);
  check_same(c, Sut::Deferred, false, false);
}

TEST(handover_multistream_query_done_with_its_last_sample) {
  SessionConfig c = config(Scenario::MultiStream, "multistream");
  c.settings.min_query_count = 2000;
  const Run on = run(c, Sut::Inline, true);
  CHECK_EQ(on.outcome.issued_query_count, uint64_t{2000});
  CHECK_EQ(on.outcome.issued_sample_count, uint64_t{8000});
  CHECK_EQ(on.outcome.summary.query_latency_count, uint64_t{2000});
  check_same(c, Sut::Inline, true);
  check_same(c, Sut::Deferred, true);
  c.settings.min_query_count = 100000;
  c.settings.max_query_count = 300;
  check_same(c, Sut::Inline, true);
}

TEST(handover_submission_run_accuracy_then_performance) {
  SessionConfig c = config(Scenario::SingleStream, "submission");
  c.settings.mode = Mode::SubmissionRun;
  c.settings.min_query_count = 500;
  check_same(c, Sut::Inline);
}

TEST(handover_races_with_the_issue_thread) {
  // Many short runs: the issue thread (spinning after each of its waits) and
  // the completing call race for the same query; exactly one issues it.
  SessionConfig c = config(Scenario::SingleStream, "race");
  c.settings.min_query_count = 200;
  for (int i = 0; i < 20; ++i) {
    const Run r = run(c, i % 2 ? Sut::Inline : Sut::Deferred);
    check_clean(r);
    CHECK_EQ(r.outcome.issued_query_count, uint64_t{200});
    CHECK_EQ(r.flushes, uint64_t{1});
  }
}

// Whole runs of the core with C++ hosts standing in for the JS side.
#include <cstdlib>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "check.h"
#include "test_util.h"
#include "fake_host.h"
#include "session.h"

using namespace loadgen;
using loadgen_test::count_of;
using loadgen_test::DelayedCompleter;
using loadgen_test::FakeHost;
using loadgen_test::read_file;
using loadgen_test::temp_outdir;

namespace {

enum class Behaviour { CompleteInline, CompleteOnThread, Silent, ThrowAtQuery };

// Completes queries the way a JS SUT would: inside the drain (inline), or
// later from another thread after a delay.
class TestHost : public FakeHost {
 public:
  TestHost(Behaviour behaviour, int64_t delay_ns = 0, uint64_t fail_at = 0)
      : behaviour_(behaviour), delay_ns_(delay_ns), fail_at_(fail_at) {}
  void attach(Session* session) override {
    FakeHost::attach(session);
    if (behaviour_ == Behaviour::CompleteOnThread) completer_.start(session);
  }
  void wake() override {
    session_->begin_drain();
    const uint64_t published = session_->published_queries();
    if (behaviour_ == Behaviour::Silent) return;
    for (; cursor_ < published; ++cursor_) {
      session_->mark_dispatched(cursor_);
      if (behaviour_ == Behaviour::ThrowAtQuery && cursor_ == fail_at_) {
        session_->abort("issueQuery threw: test failure");
        return;
      }
      if (behaviour_ == Behaviour::CompleteOnThread) {
        completer_.add(query_ids(cursor_), std::chrono::steady_clock::now() + std::chrono::nanoseconds(delay_ns_));
      } else {
        complete_query(cursor_);
      }
    }
  }

 protected:
  uint64_t cursor_ = 0;

 private:
  Behaviour behaviour_;
  int64_t delay_ns_;
  uint64_t fail_at_;
  DelayedCompleter completer_;
};

SessionConfig base_config(Scenario scenario, const std::string& name) {
  SessionConfig c;
  c.settings.scenario = scenario;
  c.settings.min_duration_ms = 100;
  c.settings.min_query_count = 100;
  c.qsl_total_count = 64;
  c.qsl_performance_count = 64;
  c.sut_name = "test-sut";
  c.qsl_name = "test-qsl";
  c.log.outdir = temp_outdir(name);
  return c;
}

const RunOutcome& run(Session& session, TestHost& host) { return host.run(session); }

}  // namespace

TEST(session_single_stream_inline_completion_is_valid) {
  SessionConfig c = base_config(Scenario::SingleStream, "ss");
  // Inline completion is far faster than 1 us a query: generate plenty.
  c.settings.single_stream_expected_latency_ns = 50;
  c.settings.min_duration_ms = 10;
  TestHost host(Behaviour::CompleteInline);
  Session session(c, &host);
  const RunOutcome& o = run(session, host);
  CHECK(o.has_summary);
  CHECK(o.summary.result_valid);
  CHECK_EQ(o.issued_sample_count, o.completed_sample_count);
  CHECK(o.issued_query_count >= 100);
  CHECK_EQ(host.loads.size(), size_t{1});
  CHECK_EQ(host.unloads.load(), 1);
  CHECK_EQ(host.flushes.load(), 1);
  CHECK(o.summary.raw.final_query_issued_time_s >= 0.01);
  CHECK(o.summary_text.find("Result is : VALID\n") != std::string::npos);
  CHECK_EQ(read_file(o.summary_path), o.summary_text);
}

TEST(session_server_latency_includes_sut_delay) {
  SessionConfig c = base_config(Scenario::Server, "server");
  c.settings.server_target_qps = 1000;
  c.settings.min_duration_ms = 200;
  TestHost host(Behaviour::CompleteOnThread, 2000000);
  Session session(c, &host);
  const RunOutcome& o = run(session, host);
  CHECK(o.has_summary);
  CHECK_EQ(o.incomplete_sample_count, uint64_t{0});
  CHECK(o.summary.sample_latency_min >= 2000000);
  CHECK(o.summary.sample_latency_max < 2000000 + 500000000);
  CHECK(o.summary.raw.final_query_scheduled_time_s >= 0.2);
  // Issued exactly the generated schedule (Server never stops on its own).
  CHECK_EQ(o.issued_query_count, o.generated_query_count);
}

TEST(session_multistream_query_completes_with_its_last_sample) {
  SessionConfig c = base_config(Scenario::MultiStream, "ms");
  c.settings.multi_stream_samples_per_query = 4;
  c.settings.multi_stream_expected_latency_ns = 1000000;
  c.settings.min_query_count = 20;
  TestHost host(Behaviour::CompleteOnThread, 1000000);
  Session session(c, &host);
  const RunOutcome& o = run(session, host);
  CHECK(o.has_summary);
  CHECK_EQ(o.issued_sample_count, 4 * o.issued_query_count);
  CHECK_EQ(o.summary.query_latency_count, o.issued_query_count);
  CHECK(o.summary.query_latency_min >= 1000000);
}

TEST(session_offline_null_native_completes_on_issue_thread) {
  SessionConfig c = base_config(Scenario::Offline, "offline");
  c.settings.min_duration_ms = 0;
  c.settings.min_query_count = 5000;
  c.complete_on_issue_thread = true;
  TestHost host(Behaviour::Silent);
  Session session(c, &host);
  const RunOutcome& o = run(session, host);
  CHECK(o.summary.result_valid);
  CHECK_EQ(o.issued_query_count, uint64_t{1});
  CHECK_EQ(o.completed_sample_count, uint64_t{5000});
  CHECK_EQ(host.series.load(), 0);  // nothing is handed to a host SUT
}

TEST(session_abort_ends_run_with_reason) {
  SessionConfig c = base_config(Scenario::Server, "abort");
  c.settings.server_target_qps = 2000;
  TestHost host(Behaviour::ThrowAtQuery, 0, 5);
  Session session(c, &host);
  const RunOutcome& o = run(session, host);
  CHECK(o.aborted);
  CHECK(o.abort_reason.find("test failure") != std::string::npos);
  CHECK(!o.summary.result_valid);
  CHECK(o.issued_query_count >= 6);
  CHECK(o.summary_text.find("The run was aborted: issueQuery threw: test failure") != std::string::npos);
}

TEST(session_silent_sut_stalls_single_stream) {
  SessionConfig c = base_config(Scenario::SingleStream, "silent");
  c.completion_timeout_ms = 100;
  TestHost host(Behaviour::Silent);
  Session session(c, &host);
  const auto t0 = std::chrono::steady_clock::now();
  const RunOutcome& o = run(session, host);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  CHECK_EQ(o.issued_query_count, uint64_t{1});
  CHECK_EQ(o.incomplete_sample_count, uint64_t{1});
  CHECK(!o.summary.result_valid);
  CHECK_EQ(o.extra_invalid_reasons.size(), size_t{1});
}

TEST(session_silent_sut_server_ends_after_max_duration) {
  SessionConfig c = base_config(Scenario::Server, "silent_server");
  c.settings.server_target_qps = 200;
  c.settings.min_duration_ms = 1000;
  c.settings.max_duration_ms = 100;
  TestHost host(Behaviour::Silent);
  Session session(c, &host);
  const auto t0 = std::chrono::steady_clock::now();
  const RunOutcome& o = run(session, host);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  CHECK(o.issued_query_count < o.generated_query_count);
  CHECK_EQ(o.completed_sample_count, uint64_t{0});
  CHECK(!o.summary.result_valid);
  CHECK(o.error_count >= 2);  // max duration reached + incomplete samples
}

// The issue thread waited for a Server query due long after max_duration
// (qps 0.2, max 1 s: the second query is due at 4.49 s with these seeds).
TEST(session_server_wait_ends_at_max_duration) {
  SessionConfig c = base_config(Scenario::Server, "max_duration_wait");
  c.settings.server_target_qps = 0.2;
  c.settings.max_duration_ms = 1000;
  TestHost host(Behaviour::CompleteInline);
  Session session(c, &host);
  const auto t0 = std::chrono::steady_clock::now();
  const RunOutcome& o = run(session, host);
  const auto elapsed = std::chrono::steady_clock::now() - t0;
  CHECK(elapsed < std::chrono::milliseconds(2000));
  CHECK(elapsed >= std::chrono::milliseconds(1000));
  CHECK_EQ(o.issued_query_count, uint64_t{1});
  CHECK_EQ(o.incomplete_sample_count, uint64_t{0});
  // The wait ends at max_duration, or later by however long a loaded machine kept the thread off a CPU.
  const std::string detail = read_file(o.detail_log_path);
  const std::string mark = "IssueQueryThread 0 Ending early: Max test duration reached. duration_ns ";
  const size_t at = detail.find(mark);
  CHECK(at != std::string::npos);
  if (at != std::string::npos) {
    const long long duration_ns = std::atoll(detail.c_str() + at + mark.size());
    CHECK(duration_ns >= 1000000000LL);
    CHECK(duration_ns < 2000000000LL);
  }
}

// Settings whose run could not end are refused before the session thread starts.
TEST(session_start_refuses_runs_that_cannot_end) {
  SessionConfig c = base_config(Scenario::Server, "never_ends");
  c.settings.server_target_qps = 1e-9;
  TestHost host(Behaviour::CompleteInline);
  Session session(c, &host);
  bool refused = false;
  try {
    session.start();
  } catch (const std::invalid_argument& e) {
    refused = std::string(e.what()).find("server_target_qps") != std::string::npos;
  }
  CHECK(refused);
}

// Completes through a hand-made id list: the bad ones must only be counted.
class BadIdHost : public FakeHost {
 public:
  void wake() override {
    session_->begin_drain();
    const uint64_t published = session_->published_queries();
    for (; cursor_ < published; ++cursor_) {
      const double id = static_cast<double>(session_->first_id() + cursor_);
      if (cursor_ == 0) {
        const double bad[] = {0.0, -1.0, 0.5, std::nan(""), 1e300, id + 1000.0, id + 1.0};
        session_->complete(bad, 7);
        const uint32_t bad32[] = {0u};
        session_->complete(bad32, 1);
      }
      session_->complete(&id, 1);
      if (cursor_ == 1) session_->complete(&id, 1);  // duplicate
    }
  }

 private:
  uint64_t cursor_ = 0;
};

TEST(session_bad_completion_ids_are_counted_not_written) {
  SessionConfig c = base_config(Scenario::Server, "badids");
  c.settings.server_target_qps = 2000;
  c.settings.min_query_count = 20;
  c.qsl_total_count = 8;
  c.qsl_performance_count = 8;
  BadIdHost host;
  Session session(c, &host);
  const RunOutcome& o = host.run(session);
  CHECK(o.has_summary);
  CHECK_EQ(o.completion_errors.invalid_ids, uint64_t{7});   // 0, -1, 0.5, NaN, 1e300, beyond the run, 0u
  CHECK_EQ(o.completion_errors.unissued_ids, uint64_t{1});  // the next sample, not issued yet
  CHECK_EQ(o.completion_errors.duplicate_ids, uint64_t{1});
  CHECK_EQ(o.completed_sample_count, o.issued_sample_count);
  CHECK_EQ(o.error_count, uint64_t{9});
}

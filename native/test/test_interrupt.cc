// Session::interrupt: a run stopped on request (a signal, an AbortSignal)
// ends like the reference's early-outs, with every log written and an
// INVALID verdict naming the caller's reason.
#include <atomic>
#include <chrono>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

#include "check.h"
#include "fake_host.h"
#include "json.h"
#include "session.h"
#include "test_util.h"

using namespace loadgen;
using loadgen_test::DelayedCompleter;
using loadgen_test::FakeHost;
using loadgen_test::read_file;
using loadgen_test::temp_outdir;

namespace {

using Clock = std::chrono::steady_clock;

// Completes each query `delay` after it was handed over, from a thread of
// its own (a SUT working in the background); 0: inline, in the drain.
class DelayHost : public FakeHost {
 public:
  explicit DelayHost(std::chrono::nanoseconds delay) : delay_(delay) {}
  // Queries handed to the SUT so far, every series.
  std::atomic<uint64_t> handed{0};
  void attach(Session* session) override {
    FakeHost::attach(session);
    if (delay_.count() > 0) completer_.start(session);
  }
  void series_started() override {
    FakeHost::series_started();
    cursor_ = 0;  // each series' queries count from 0
  }
  void wake() override {
    session_->begin_drain();
    const uint64_t published = session_->published_queries();
    for (; cursor_ < published; ++cursor_) {
      session_->mark_dispatched(cursor_);
      handed.fetch_add(1, std::memory_order_relaxed);
      if (delay_.count() == 0) {
        complete_query(cursor_);
      } else {
        completer_.add(query_ids(cursor_), Clock::now() + delay_);
      }
    }
  }

 private:
  std::chrono::nanoseconds delay_;
  uint64_t cursor_ = 0;  // the session thread's (wake, series_started)
  DelayedCompleter completer_;  // last: stopped before the members above go
};

SessionConfig long_config(Scenario scenario, const std::string& name) {
  SessionConfig c;
  c.settings.scenario = scenario;
  c.settings.min_duration_ms = 60000;  // far longer than any of these tests may take
  c.settings.min_query_count = 100;
  c.settings.server_target_qps = 1000;
  c.settings.single_stream_expected_latency_ns = 1000000;
  c.qsl_total_count = 64;
  c.qsl_performance_count = 64;
  c.sut_name = "test-sut";
  c.qsl_name = "test-qsl";
  c.log.outdir = temp_outdir(name);
  c.log.enable_trace = true;
  return c;
}

// Runs `session` with `host`, interrupting it `after` its start with
// `reason`, and not before `reached()` says the run got where the test
// interrupts it (a loaded machine may take longer than `after` to start
// issuing); returns the seconds from the interrupt to the run's end.
double run_interrupted(Session& session, FakeHost& host, std::chrono::milliseconds after, const std::string& reason,
                       const std::function<bool()>& reached = nullptr) {
  Clock::time_point interrupted_at;
  std::thread interrupter([&] {
    std::this_thread::sleep_for(after);
    const Clock::time_point give_up = Clock::now() + std::chrono::seconds(30 * loadgen_test::time_factor());
    while (reached && !reached() && Clock::now() < give_up) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    interrupted_at = Clock::now();
    session.interrupt(reason);
    session.interrupt("a later reason");  // the first one wins
  });
  host.run(session);
  const Clock::time_point end = Clock::now();
  interrupter.join();
  return std::chrono::duration<double>(end - interrupted_at).count();
}

// Every file of the run is complete: each detail-log line a JSON record, the
// trace and accuracy log JSON documents.
void check_logs_complete(const RunOutcome& o, const SessionConfig& c) {
  std::istringstream detail(read_file(o.detail_log_path));
  std::string line;
  size_t lines = 0;
  while (std::getline(detail, line)) {
    ++lines;
    const std::string prefix = ":::MLLOG ";
    CHECK(line.compare(0, prefix.size(), prefix) == 0);
    // A series of one Server query reports 0/0 per second as the reference prints it.
    for (const std::string nan : {"\"value\": -nan,", "\"value\": nan,"}) {
      const size_t at = line.find(nan);
      if (at != std::string::npos) line.replace(at, nan.size(), "\"value\": null,");
    }
    bool parsed = true;
    try {
      loadgen_test::parse_json(line.substr(prefix.size()));
    } catch (const std::exception&) {
      parsed = false;
    }
    CHECK(parsed);
  }
  CHECK(lines > 10);
  for (const std::string& path : {o.accuracy_log_path, c.log.outdir + "/" + c.log.prefix + "trace.json"}) {
    std::string error;
    try {
      loadgen_test::parse_json(read_file(path));
    } catch (const std::exception& e) {
      error = path + ": " + e.what();
    }
    CHECK_EQ(error, std::string());
  }
  CHECK_EQ(read_file(o.summary_path), o.summary_text);
}

}  // namespace

TEST(session_interrupt_server_ends_early_with_logs) {
  SessionConfig c = long_config(Scenario::Server, "interrupt_server");
  DelayHost host(std::chrono::milliseconds(1));
  Session session(c, &host);
  const double seconds = run_interrupted(session, host, std::chrono::milliseconds(300), "interrupted by SIGINT",
                                         [&] { return host.handed.load() > 0; });
  const RunOutcome& o = session.outcome();
  CHECK(seconds < 10);
  CHECK(o.interrupted);
  CHECK_EQ(o.interrupt_reason, std::string("interrupted by SIGINT"));
  CHECK(!o.aborted);
  CHECK(o.has_summary);
  CHECK(!o.summary.result_valid);
  CHECK(o.issued_query_count > 0);
  CHECK(o.issued_query_count < o.generated_query_count);
  // What was issued was waited for.
  CHECK_EQ(o.incomplete_sample_count, uint64_t{0});
  CHECK_EQ(o.completed_sample_count, o.issued_sample_count);
  CHECK(!o.extra_invalid_reasons.empty() && o.extra_invalid_reasons.front() == "interrupted by SIGINT");
  CHECK(o.summary_text.find("Result is : INVALID\n") != std::string::npos);
  CHECK(o.summary_text.find("Recommendations:\n * interrupted by SIGINT.\n") != std::string::npos);
  const std::string detail = read_file(o.detail_log_path);
  CHECK(detail.find("\"Ending early: interrupted by SIGINT. query_count " + std::to_string(o.issued_query_count) +
                    "\"") != std::string::npos);
  CHECK(detail.find("interrupted by SIGINT.\"") != std::string::npos);  // in result_invalid_reason, a sentence
  CHECK(detail.find("a later reason") == std::string::npos);
  check_logs_complete(o, c);
}

TEST(session_interrupt_single_stream_waits_for_the_query_in_flight) {
  SessionConfig c = long_config(Scenario::SingleStream, "interrupt_single_stream");
  // The interrupt comes while query 0 is with the SUT.
  DelayHost host(std::chrono::milliseconds(700));
  Session session(c, &host);
  const double seconds = run_interrupted(session, host, std::chrono::milliseconds(200), "interrupted by SIGTERM",
                                         [&] { return host.handed.load() > 0; });
  const RunOutcome& o = session.outcome();
  CHECK(seconds < 5);
  CHECK(o.interrupted);
  CHECK_EQ(o.issued_query_count, uint64_t{1});  // nothing issued after the interrupt
  CHECK_EQ(o.completed_sample_count, uint64_t{1});
  CHECK_EQ(o.incomplete_sample_count, uint64_t{0});
  CHECK(o.has_summary);
  CHECK(!o.summary.result_valid);
  CHECK(o.summary_text.find(" * interrupted by SIGTERM.\n") != std::string::npos);
  check_logs_complete(o, c);
}

TEST(session_interrupt_stops_the_server_wait_for_a_distant_query) {
  SessionConfig c = long_config(Scenario::Server, "interrupt_server_wait");
  c.settings.server_target_qps = 0.2;  // queries ~5 s apart
  c.settings.min_query_count = 10;
  c.settings.min_duration_ms = 1000;
  DelayHost host(std::chrono::nanoseconds(0));
  Session session(c, &host);
  const double seconds = run_interrupted(session, host, std::chrono::milliseconds(200), "interrupted: test");
  const RunOutcome& o = session.outcome();
  CHECK(seconds < 1.5);
  CHECK(o.interrupted);
  CHECK(o.issued_query_count < o.generated_query_count);
  CHECK(o.summary_text.find("Result is : INVALID\n") != std::string::npos);
  check_logs_complete(o, c);
}

TEST(session_interrupt_skips_the_performance_phase_of_a_submission_run) {
  SessionConfig c = long_config(Scenario::SingleStream, "interrupt_submission");
  c.settings.mode = Mode::SubmissionRun;
  // The accuracy phase issues all 64 samples, 20 ms each: interrupted in it.
  DelayHost host(std::chrono::milliseconds(20));
  Session session(c, &host);
  run_interrupted(session, host, std::chrono::milliseconds(200), "interrupted by SIGINT",
                  [&] { return host.handed.load() > 0; });
  const RunOutcome& o = session.outcome();
  CHECK(o.interrupted);
  CHECK_EQ(o.series_count, uint64_t{1});  // the performance series never started
  CHECK_EQ(host.loads.size(), size_t{1});
  CHECK(o.issued_query_count < 64);
  CHECK_EQ(o.incomplete_sample_count, uint64_t{0});
  CHECK(!o.has_summary);
  // No performance results, but the verdict and its reason all the same.
  CHECK(o.summary_text.find("Result is : INVALID\nRecommendations:\n * interrupted by SIGINT.\n") == 0);
  CHECK(read_file(o.detail_log_path).find("\"Ending early: interrupted by SIGINT. query_count ") != std::string::npos);
  check_logs_complete(o, c);
}

TEST(session_interrupt_ends_find_peak_after_the_current_trial) {
  SessionConfig c = long_config(Scenario::Server, "interrupt_find_peak");
  c.settings.mode = Mode::FindPeakPerformance;
  DelayHost host(std::chrono::nanoseconds(0));
  Session session(c, &host);
  const double seconds = run_interrupted(session, host, std::chrono::milliseconds(300), "interrupted by SIGINT",
                                         [&] { return host.handed.load() > 0; });
  const RunOutcome& o = session.outcome();
  CHECK(seconds < 10);
  CHECK(o.interrupted);
  CHECK_EQ(o.peak_trials.size(), size_t{1});
  CHECK_EQ(o.peak_qps, 0.0);
  CHECK(o.has_summary);  // the trial it cut short
  CHECK(!o.summary.result_valid);
  CHECK(o.summary_text.find(" * interrupted by SIGINT.\n") != std::string::npos);
  check_logs_complete(o, c);
}

TEST(session_interrupt_before_start_runs_no_series) {
  SessionConfig c = long_config(Scenario::Offline, "interrupt_before_start");
  DelayHost host(std::chrono::nanoseconds(0));
  Session session(c, &host);
  session.interrupt("first");
  session.interrupt("second");
  const RunOutcome& o = host.run(session);
  CHECK(o.interrupted);
  CHECK_EQ(o.interrupt_reason, std::string("first"));
  CHECK_EQ(o.series_count, uint64_t{0});
  CHECK_EQ(o.issued_query_count, uint64_t{0});
  // Stopped before its set was built: nothing is loaded, so nothing unloaded.
  CHECK_EQ(host.loads.size(), size_t{0});
  CHECK_EQ(host.unloads.load(), 0);
  CHECK(o.summary_text.find("Result is : INVALID\nRecommendations:\n * first.\n") == 0);
  bool logged = false;
  for (const auto& m : o.messages) logged = logged || (m.is_error && m.text == "Ending early: first");
  CHECK(logged);
  check_logs_complete(o, c);
}

TEST(session_interrupt_while_a_large_set_is_built_or_logged) {
  // 3*10^7 samples: shuffling them, and writing the 260 MB loaded_qsl_set
  // line, take seconds; the interrupt comes 50 ms after the start.
  SessionConfig c = long_config(Scenario::Offline, "interrupt_large_set");
  c.qsl_total_count = 30000000;
  c.qsl_performance_count = 30000000;
  c.settings.performance_issue_unique = true;  // the one query would hold the whole set
  DelayHost host(std::chrono::nanoseconds(0));
  Session session(c, &host);
  const double seconds = run_interrupted(session, host, std::chrono::milliseconds(50), "interrupted by SIGINT");
  const RunOutcome& o = session.outcome();
  CHECK(seconds < 5);
  CHECK(o.interrupted);
  CHECK(!o.aborted);
  // Ended while the set was built or logged: never loaded, nothing generated.
  CHECK_EQ(host.loads.size(), size_t{0});
  CHECK_EQ(host.unloads.load(), 0);
  CHECK_EQ(o.series_count, uint64_t{0});
  CHECK(o.summary_text.find("Result is : INVALID\nRecommendations:\n * interrupted by SIGINT.\n") == 0);
  const std::string detail = read_file(o.detail_log_path);
  CHECK(detail.size() < 100000000);  // not the whole list
  const size_t listed = detail.find("\"key\": \"loaded_qsl_set\"");
  if (listed != std::string::npos) {
    CHECK(detail.find("loaded_qsl_set lists the first ") != std::string::npos);
    CHECK(detail.find(" of the set's 30000000 samples: the run was stopped while it was written") !=
          std::string::npos);
  }
  check_logs_complete(o, c);
}

TEST(session_not_interrupted_reports_no_interrupt) {
  SessionConfig c = long_config(Scenario::Offline, "interrupt_none");
  c.settings.min_duration_ms = 0;
  DelayHost host(std::chrono::nanoseconds(0));
  Session session(c, &host);
  const RunOutcome& o = host.run(session);
  CHECK(!o.interrupted);
  CHECK(o.interrupt_reason.empty());
  CHECK(o.summary.result_valid);
  CHECK(o.summary_text.find("Ending early") == std::string::npos);
}

// Failed samples (Session::fail): a sample that failed completes like any
// other (ids checked, SingleStream/MultiStream go on), is counted by kind,
// leaves an error line in the detail log (counted in the summary's error
// count) and makes the run INVALID with the counts as its reason; it is left
// out of the latency and token statistics and is never a token error.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "clock.h"
#include "fake_host.h"
#include "json.h"
#include "session.h"
#include "test_util.h"

using namespace loadgen;
using loadgen_test::count_of;
using loadgen_test::FakeHost;
using loadgen_test::read_file;
using loadgen_test::temp_outdir;

namespace {

// Serves every sample of each published query inside the drain with
// `respond(session, id, k)` (k: the sample's index in the series).
class RespondingHost : public FakeHost {
 public:
  using Respond = std::function<void(Session&, double id, uint64_t k)>;
  explicit RespondingHost(Respond respond) : respond_(std::move(respond)) {}
  void series_started() override { cursor_ = 0; }
  void wake() override {
    session_->begin_drain();
    const uint64_t published = session_->published_queries();
    const uint64_t spq = session_->trace().samples_per_query;
    for (; cursor_ < published; ++cursor_) {
      for (uint64_t i = 0; i < spq; ++i) {
        const uint64_t k = cursor_ * spq + i;
        respond_(*session_, static_cast<double>(session_->first_id() + k), k);
      }
    }
  }

 private:
  Respond respond_;
  uint64_t cursor_ = 0;
};

SessionConfig failure_config(Scenario scenario, const std::string& name, uint64_t min_queries) {
  SessionConfig c;
  c.settings.scenario = scenario;
  c.settings.min_duration_ms = 0;
  c.settings.min_query_count = min_queries;
  c.settings.single_stream_expected_latency_ns = 1000;
  c.settings.multi_stream_expected_latency_ns = 1000;
  c.settings.server_target_qps = 20000;
  c.settings.offline_expected_qps = 1e6;
  c.qsl_total_count = 64;
  c.qsl_performance_count = 64;
  c.sut_name = "failing-sut";
  c.qsl_name = "failing-qsl";
  c.log.outdir = temp_outdir(name);
  return c;
}

const FailureKind kKinds[] = {FailureKind::HttpStatus, FailureKind::Connection, FailureKind::MalformedResponse,
                              FailureKind::Timeout, FailureKind::Cancelled};

void complete(Session& s, double id) { s.complete(&id, 1); }

}  // namespace

TEST(failures_kind_names_are_the_protocol_names) {
  CHECK_EQ(kFailureKindCount, size_t{6});
  CHECK_EQ(std::string(to_string(FailureKind::HttpStatus)), std::string("http_status"));
  CHECK_EQ(std::string(to_string(FailureKind::Cancelled)), std::string("cancelled"));
  CHECK_EQ(std::string(to_string(FailureKind::NoFirstToken)), std::string("no_first_token"));
  FailedSampleCounts counts;
  counts.total = 3;
  counts.by_kind[static_cast<size_t>(FailureKind::HttpStatus)] = 2;
  counts.by_kind[static_cast<size_t>(FailureKind::Timeout)] = 1;
  CHECK_EQ(failed_samples_reason(counts), std::string("3 samples failed (http_status 2, timeout 1)"));
  counts = FailedSampleCounts{};
  counts.total = 1;
  counts.by_kind[static_cast<size_t>(FailureKind::Connection)] = 1;
  CHECK_EQ(failed_samples_reason(counts), std::string("1 sample failed (connection 1)"));
}

TEST(failures_are_counted_logged_and_make_the_run_invalid) {
  SessionConfig c = failure_config(Scenario::SingleStream, "fail_ss", 100);
  // Every 10th sample fails, its kind cycling through the five.
  RespondingHost host([](Session& s, double id, uint64_t k) {
    if (k % 10 == 3) {
      const FailureKind kind = kKinds[(k / 10) % 5];
      s.fail(0, id, kind, "node http://127.0.0.1:1: sample " + std::to_string(k) + "\nforged line\x1b");
    } else {
      complete(s, id);
    }
  });
  Session session(c, &host);
  const RunOutcome& o = host.run(session);
  CHECK(o.has_summary);
  CHECK_EQ(o.issued_sample_count, uint64_t{100});
  CHECK_EQ(o.completed_sample_count, uint64_t{100});  // failed samples complete: nothing hangs
  CHECK_EQ(o.incomplete_sample_count, uint64_t{0});
  CHECK_EQ(o.failed_samples.total, uint64_t{10});
  for (const FailureKind kind : kKinds) CHECK_EQ(o.failed_samples.by_kind[static_cast<size_t>(kind)], uint64_t{2});
  CHECK_EQ(o.failed_samples.by_kind[static_cast<size_t>(FailureKind::NoFirstToken)], uint64_t{0});
  // Left out of the statistics: only the 90 that succeeded.
  CHECK_EQ(o.summary.sample_count, uint64_t{90});
  CHECK(!o.summary.result_valid);
  CHECK_EQ(o.extra_invalid_reasons.size(), size_t{1});
  const std::string reason =
      "10 samples failed (http_status 2, connection 2, malformed_response 2, timeout 2, cancelled 2)";
  CHECK_EQ(o.extra_invalid_reasons[0], reason);
  CHECK(o.summary_text.find("Result is : INVALID\n") != std::string::npos);
  CHECK(o.summary_text.find("Recommendations:\n * " + reason + ".\n") != std::string::npos);
  CHECK_EQ(o.error_count, uint64_t{10});
  CHECK(o.summary_text.find("10 ERRORS encountered. See detailed log.") != std::string::npos);
  const std::string detail = read_file(o.detail_log_path);
  CHECK_EQ(count_of(detail, "\"Sample failed ("), size_t{10});
  CHECK_EQ(count_of(detail, "\"Sample failed (timeout): node http://127.0.0.1:1: sample "), size_t{2});
  // The SUT's control characters cannot start a line of their own.
  CHECK_EQ(count_of(detail, "\\\\nforged line\\\\x1b"), size_t{10});
  CHECK_EQ(count_of(detail, "\nforged"), size_t{0});
  CHECK(detail.find("\"result_invalid_reason\"") != std::string::npos);
  CHECK(detail.find(reason) != std::string::npos);
}

// The time_ms of each detail-log line holding `needle`, in file order.
static std::vector<double> line_times(const std::string& detail, const std::string& needle) {
  std::vector<double> times;
  std::istringstream lines(detail);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(needle) == std::string::npos) continue;
    const size_t at = line.find("\"time_ms\": ");
    if (at != std::string::npos) times.push_back(std::stod(line.substr(at + 11)));
  }
  return times;
}

TEST(failures_are_logged_with_the_time_they_failed_not_the_runs_end) {
  SessionConfig c = failure_config(Scenario::SingleStream, "fail_times", 100);
  // 1 ms a sample: ~100 ms of run; samples 3, 13, ..., 93 fail.
  RespondingHost host([](Session& s, double id, uint64_t k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (k % 10 == 3) {
      s.fail(0, id, FailureKind::Timeout, "sample " + std::to_string(k));
    } else {
      complete(s, id);
    }
  });
  Session session(c, &host);
  const RunOutcome& o = host.run(session);
  CHECK_EQ(o.failed_samples.total, uint64_t{10});
  const std::string detail = read_file(o.detail_log_path);
  const std::vector<double> failed = line_times(detail, "\"Sample failed (timeout): sample ");
  CHECK_EQ(failed.size(), size_t{10});
  // In the order they failed, 90 samples (>= 90 ms) apart from the first to the last; the
  // results come after the last (written when the run ended, as the failure lines are).
  for (size_t i = 1; i < failed.size(); ++i) CHECK(failed[i] > failed[i - 1]);
  CHECK(failed.back() - failed.front() >= 85.0);
  const std::vector<double> results = line_times(detail, "\"result_validity\"");
  CHECK_EQ(results.size(), size_t{1});
  CHECK(results[0] >= failed.back());
  CHECK(detail.find("\"Sample failed (timeout): sample 3\"") < detail.find("\"Sample failed (timeout): sample 93\""));
}

TEST(failures_in_every_scenario_complete_and_do_not_hang) {
  for (const Scenario scenario : {Scenario::SingleStream, Scenario::MultiStream, Scenario::Server, Scenario::Offline}) {
    SessionConfig c = failure_config(scenario, "fail_scenario", 40);
    c.completion_timeout_ms = 20000;  // a hang would show as incomplete samples
    std::atomic<uint64_t> failed{0};
    RespondingHost host([&](Session& s, double id, uint64_t k) {
      if (k % 3 == 0) {
        failed.fetch_add(1);
        s.fail(0, id, FailureKind::Connection, "reset");
      } else {
        complete(s, id);
      }
    });
    Session session(c, &host);
    const RunOutcome& o = host.run(session);
    CHECK(o.has_summary);
    CHECK_EQ(o.incomplete_sample_count, uint64_t{0});
    CHECK_EQ(o.failed_samples.total, failed.load());
    CHECK_EQ(o.failed_samples.by_kind[static_cast<size_t>(FailureKind::Connection)], failed.load());
    CHECK(failed.load() > 0);
    CHECK(!o.summary.result_valid);
    if (scenario == Scenario::MultiStream) {
      // A query with a failed sample is left out of the query latencies too.
      CHECK(o.summary.query_latency_count < o.summary.query_count);
    } else {
      CHECK_EQ(o.summary.sample_count, o.issued_sample_count - failed.load());
    }
  }
}

TEST(failures_from_another_thread_while_single_stream_waits) {
  SessionConfig c = failure_config(Scenario::SingleStream, "fail_thread", 30);
  std::vector<std::thread> threads;
  RespondingHost host([&](Session& s, double id, uint64_t k) {
    // A dispatch worker's completion: another thread, a moment later.
    threads.emplace_back([&s, id, k] {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      if (k % 2 == 0) {
        s.fail(0, id, FailureKind::Timeout, "request timed out");
      } else {
        complete(s, id);
      }
    });
  });
  Session session(c, &host);
  const RunOutcome& o = host.run(session);
  for (auto& t : threads) t.join();
  CHECK_EQ(o.incomplete_sample_count, uint64_t{0});
  CHECK_EQ(o.failed_samples.by_kind[static_cast<size_t>(FailureKind::Timeout)], uint64_t{15});
}

TEST(failures_with_token_latencies_are_not_token_errors) {
  SessionConfig c = failure_config(Scenario::SingleStream, "fail_tokens", 40);
  c.settings.use_token_latencies = true;
  RespondingHost host([](Session& s, double id, uint64_t k) {
    if (k % 4 == 0) {
      // No first token, no token count: the request failed.
      s.fail(0, id, FailureKind::HttpStatus, "HTTP 500");
      return;
    }
    if (k % 4 == 1) {
      // A stream cut after its first token.
      s.first_token(id, 0);
      s.fail(0, id, FailureKind::MalformedResponse, "stream ended early");
      return;
    }
    s.first_token(id, 0);
    const double n = 5;
    s.complete_with_tokens(0, &id, &n, 1);
  });
  Session session(c, &host);
  const RunOutcome& o = host.run(session);
  CHECK(o.has_summary);
  const CompletionErrorCounts& e = o.completion_errors;
  CHECK_EQ(e.missing_first_tokens, uint64_t{0});
  CHECK_EQ(e.zero_tokens, uint64_t{0});
  CHECK_EQ(o.failed_samples.total, uint64_t{20});
  CHECK_EQ(o.error_count, uint64_t{20});  // the failure lines only
  CHECK_EQ(o.summary.sample_count, uint64_t{20});
  CHECK_EQ(o.summary.first_token_latency_count, uint64_t{20});
  CHECK_EQ(o.summary.token_count, int64_t{100});
  CHECK(o.summary.first_token_latency_min > 0);  // no missing-token markers
  CHECK(o.summary.time_per_output_token_min >= 0);
}

TEST(failures_of_bad_stale_and_duplicate_ids_are_counted_as_for_completions) {
  SessionConfig c = failure_config(Scenario::Offline, "fail_ids", 20);
  RespondingHost host([](Session& s, double id, uint64_t k) {
    if (k == 0) {
      s.fail(0, 0.5, FailureKind::Timeout, "not an id");
      s.fail(0, 1.0, FailureKind::Timeout, "stale");  // the process's first id: an earlier series'
      s.fail(0, id + 1e9, FailureKind::Timeout, "beyond the series");
    }
    if (k == 1) {
      complete(s, id);
      s.fail(0, id, FailureKind::Timeout, "already completed");
      return;
    }
    if (k == 2) {
      s.fail(0, id, FailureKind::Cancelled, "cancelled");
      s.fail(0, id, FailureKind::Cancelled, "twice");
      return;
    }
    complete(s, id);
  });
  Session session(c, &host);
  const RunOutcome& o = host.run(session);
  const CompletionErrorCounts& e = o.completion_errors;
  CHECK_EQ(e.invalid_ids, uint64_t{2});
  CHECK(e.stale_ids <= uint64_t{1});  // 1 when an earlier test of this binary ran first
  CHECK_EQ(e.duplicate_ids, uint64_t{2});
  CHECK_EQ(o.failed_samples.total, uint64_t{1});
  CHECK_EQ(o.failed_samples.by_kind[static_cast<size_t>(FailureKind::Cancelled)], uint64_t{1});
  CHECK_EQ(o.failed_samples.by_kind[static_cast<size_t>(FailureKind::Timeout)], uint64_t{0});
  CHECK_EQ(o.summary.sample_count, uint64_t{19});
}

TEST(failures_beyond_the_line_cap_are_counted_not_kept) {
  SessionConfig c = failure_config(Scenario::Offline, "fail_cap", kMaxFailureLinesPerKind + 500);
  c.qsl_total_count = 2000;
  c.qsl_performance_count = 2000;
  const std::string long_message(5000, 'x');
  RespondingHost host([&](Session& s, double id, uint64_t) { s.fail(0, id, FailureKind::Timeout, long_message); });
  Session session(c, &host);
  const RunOutcome& o = host.run(session);
  CHECK(o.has_summary);
  CHECK_EQ(o.failed_samples.total, kMaxFailureLinesPerKind + 500);
  CHECK_EQ(o.summary.sample_count, uint64_t{0});  // nothing succeeded
  CHECK(!o.summary.result_valid);
  CHECK_EQ(o.error_count, kMaxFailureLinesPerKind + 1);
  const std::string detail = read_file(o.detail_log_path);
  CHECK_EQ(count_of(detail, "\"Sample failed (timeout): "), static_cast<size_t>(kMaxFailureLinesPerKind));
  CHECK_EQ(count_of(detail, "\"500 more samples failed (timeout); their messages were not kept\""), size_t{1});
  // Each message is cut to the bound.
  CHECK_EQ(count_of(detail, std::string(kMaxFailureMessageBytes, 'x') + "\xE2\x80\xA6 (3976 more bytes)"),
           static_cast<size_t>(kMaxFailureLinesPerKind));
}

TEST(failures_stamps_outside_the_series_are_clamped) {
  SessionConfig c = failure_config(Scenario::Offline, "fail_stamp", 10);
  RespondingHost host([](Session& s, double id, uint64_t k) {
    // Before the series start, and an hour ahead: both become now.
    s.fail(k % 2 == 0 ? 1 : now_ns() + 3600000000000LL, id, FailureKind::Timeout, "late");
  });
  Session session(c, &host);
  const RunOutcome& o = host.run(session);
  CHECK_EQ(o.failed_samples.total, uint64_t{10});
  CHECK(o.issue_duration_ns >= 0);
  CHECK(o.issue_duration_ns < 60000000000LL);
}

// Every sample fails, in every scenario (a server answering 500 to all):
// every rate 0, nothing "satisfied" that was not, the reasons separate
// sentences, every detail-log line JSON and the summary free of impossible
// numbers. Before: 1.7e19 "completed samples per second", "-nan"/"inf" in
// the detail log, "Performance constraints satisfied : Yes", "Min queries
// satisfied : NO" beside every query issued, "...were issued.100 samples failed".
TEST(failures_of_every_sample_print_nothing_impossible) {
  for (const Scenario scenario : {Scenario::SingleStream, Scenario::MultiStream, Scenario::Server, Scenario::Offline}) {
    for (const bool tokens : {false, true}) {
      SessionConfig c = failure_config(scenario, "fail_all", 100);
      c.settings.use_token_latencies = tokens;
      RespondingHost host([](Session& s, double id, uint64_t) { s.fail(0, id, FailureKind::HttpStatus, "HTTP 500"); });
      Session session(c, &host);
      const RunOutcome& o = host.run(session);
      CHECK(o.has_summary);
      const PerformanceSummary& r = o.summary;
      CHECK_EQ(o.failed_samples.total, o.issued_sample_count);
      CHECK_EQ(r.sample_count, uint64_t{0});
      CHECK(!r.result_valid);
      for (double rate : {r.qps_with_loadgen_overhead, r.qps_without_loadgen_overhead, r.scheduled_samples_per_sec,
                          r.completed_samples_per_sec, r.samples_per_second, r.tokens_per_second,
                          r.completed_tokens_per_second, r.tps_with_loadgen_overhead, r.tps_without_loadgen_overhead,
                          r.token_throughput}) {
        CHECK_EQ(rate, 0.0);
      }
      CHECK(r.min_queries_met && r.min_samples_met);  // every query was issued
      CHECK_EQ(r.query_count, o.issued_query_count);
      if (scenario != Scenario::Offline) CHECK(!r.early_stopping_met);
      if (scenario == Scenario::Server) CHECK(!r.perf_constraints_met);
      const std::string& text = o.summary_text;
      CHECK(text.find("  Min queries satisfied : Yes\n") != std::string::npos);
      CHECK(text.find("satisfied : Yes\n  Min duration") == std::string::npos);  // perf constraints: NO
      CHECK(text.find("inf") == std::string::npos || text.find("(inferred)") != std::string::npos);
      CHECK(text.find("nan") == std::string::npos);
      CHECK(text.find(" : -") == std::string::npos);
      const std::string reason = std::to_string(o.issued_sample_count) + " samples failed (http_status " +
                                 std::to_string(o.issued_sample_count) + ")";
      CHECK(text.find(" * " + reason + ".\n") != std::string::npos);
      const std::string detail = read_file(o.detail_log_path);
      std::istringstream lines(detail);
      std::string line;
      size_t parsed = 0;
      while (std::getline(lines, line)) {
        CHECK(line.rfind(":::MLLOG ", 0) == 0);
        const loadgen_test::Json entry = loadgen_test::parse_json(line.substr(9));  // throws unless JSON
        const loadgen_test::Json& value = entry.at("value");
        const std::string key = entry.at("key").as_string();
        if (value.kind() == loadgen_test::Json::Kind::Number && key.rfind("result_", 0) == 0) {
          CHECK(value.as_double() >= 0);
        }
        if (key == "result_invalid_reason") {
          // Sentences: never "issued.100 samples failed".
          const std::string& v = value.as_string();
          CHECK(v.find(reason + ".") != std::string::npos);
          CHECK(v.find(".1") == std::string::npos && v.find(".2") == std::string::npos);
        }
        ++parsed;
      }
      CHECK(parsed > 50);
    }
  }
}

// Offline's duration is when its query's last sample completed, failed ones
// included: a run whose every sample failed after the min duration lasted
// it (before: "Min duration satisfied : NO" and "Increase expected QPS").
TEST(failures_count_in_the_offline_duration) {
  SessionConfig c = failure_config(Scenario::Offline, "fail_offline_duration", 20);
  c.settings.min_duration_ms = 30;
  RespondingHost host([](Session& s, double id, uint64_t k) {
    if (k == 0) std::this_thread::sleep_for(std::chrono::milliseconds(40));
    s.fail(0, id, FailureKind::HttpStatus, "HTTP 500");
  });
  Session session(c, &host);
  const RunOutcome& o = host.run(session);
  CHECK(o.has_summary);
  CHECK_EQ(o.summary.sample_count, uint64_t{0});
  CHECK(o.summary.min_duration_met);
  CHECK(o.summary_text.find("  Min duration satisfied : Yes\n") != std::string::npos);
  CHECK_EQ(o.summary.samples_per_second, 0.0);
  CHECK(!o.summary.result_valid);
}

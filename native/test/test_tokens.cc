// Token latencies (spec/30 §9): whole runs of the core with a C++ host that
// reports first tokens and token counts.
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>

#include "check.h"
#include "test_util.h"
#include "clock.h"
#include "fake_host.h"
#include "session.h"

using namespace loadgen;
using loadgen_test::count_of;
using loadgen_test::FakeHost;
using loadgen_test::read_file;
using loadgen_test::temp_outdir;

namespace {

// Serves each issued sample with `respond(session, id, k)` (k = sample index
// in the series), inline in the drain or on a worker thread.
class TokenHost : public FakeHost {
 public:
  using Respond = std::function<void(Session&, double id, uint64_t k)>;
  TokenHost(Respond respond, bool on_thread) : respond_(std::move(respond)), on_thread_(on_thread) {}
  ~TokenHost() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    if (worker_.joinable()) worker_.join();
  }
  void attach(Session* session) override {
    FakeHost::attach(session);
    if (on_thread_) worker_ = std::thread([this] { work(); });
  }
  void series_started() override { cursor_ = 0; }
  void wake() override {
    session_->begin_drain();
    const uint64_t published = session_->published_queries();
    for (; cursor_ < published; ++cursor_) {
      if (on_thread_) {
        std::lock_guard<std::mutex> lock(mutex_);
        pending_.push_back(cursor_);
        cv_.notify_all();
      } else {
        serve(cursor_);
      }
    }
  }

 private:
  void serve(uint64_t q) {
    const uint64_t spq = session_->trace().samples_per_query;
    for (uint64_t i = 0; i < spq; ++i) {
      const uint64_t k = q * spq + i;
      respond_(*session_, static_cast<double>(session_->first_id() + k), k);
    }
  }
  void work() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || !pending_.empty(); });
      if (stop_) return;
      const uint64_t q = pending_.front();
      pending_.pop_front();
      lock.unlock();
      serve(q);
      lock.lock();
    }
  }

  Respond respond_;
  bool on_thread_;
  uint64_t cursor_ = 0;
  std::thread worker_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<uint64_t> pending_;
  bool stop_ = false;
};

SessionConfig token_config(Scenario scenario, const std::string& name) {
  SessionConfig c;
  c.settings.scenario = scenario;
  c.settings.use_token_latencies = true;
  c.settings.min_duration_ms = 0;
  c.settings.min_query_count = 50;
  c.settings.single_stream_expected_latency_ns = 1000;
  c.qsl_total_count = 64;
  c.qsl_performance_count = 64;
  c.sut_name = "token-sut";
  c.qsl_name = "token-qsl";
  c.log.outdir = temp_outdir(name);
  return c;
}

void complete_one(Session& s, double id, double n_tokens, int64_t stamp = 0) {
  s.complete_with_tokens(stamp, &id, &n_tokens, 1);
}

// The same with the sample's response, which the call writes to the accuracy log.
void complete_one(Session& s, double id, double n_tokens, const uint8_t* data, size_t size) {
  loadgen_test::OneResponse response{data, size};
  const ResponseBytes bytes = response.bytes();
  s.complete_with_tokens(0, &id, &n_tokens, 1, false, &bytes);
}

}  // namespace

TEST(tokens_single_stream_exact_tpot_from_stamps) {
  SessionConfig c = token_config(Scenario::SingleStream, "ss_exact");
  TokenHost host(
      [](Session& s, double id, uint64_t) {
        std::this_thread::sleep_for(std::chrono::milliseconds(3));
        const int64_t now = now_ns();
        // First token 2 ms before the completion, 5 tokens: TPOT = 2 ms / 4.
        s.first_token(id, now - 2000000);
        complete_one(s, id, 5, now);
      },
      true);
  Session session(c, &host);
  const RunOutcome& o = host.run(session);
  CHECK(o.has_summary);
  CHECK_EQ(o.error_count, uint64_t{0});
  const PerformanceSummary& s = o.summary;
  CHECK_EQ(s.time_per_output_token_min, int64_t{500000});
  CHECK_EQ(s.time_per_output_token_max, int64_t{500000});
  CHECK_EQ(s.time_per_output_token_mean, int64_t{500000});
  CHECK(s.first_token_latency_min >= 1000000);
  CHECK(s.first_token_latency_max < s.sample_latency_max);
  CHECK_EQ(s.token_count, static_cast<int64_t>(5 * s.sample_count));
  CHECK_EQ(s.first_token_latency_count, s.sample_count);
  CHECK(o.summary_text.find("th first token percentile latency (ns) : ") != std::string::npos);
  CHECK(o.summary_text.find("TTFT Early Stopping Result:\n") != std::string::npos);
  CHECK(o.summary_text.find("TPOT Early Stopping Result:\n") != std::string::npos);
  CHECK(o.summary_text.find("Min Time per Output Token (ns)                : 500000\n") != std::string::npos);
  CHECK(o.summary_text.find("TPS w/ loadgen overhead         : ") != std::string::npos);
}

TEST(tokens_errors_are_counted_and_logged) {
  SessionConfig c = token_config(Scenario::SingleStream, "errors");
  c.settings.min_query_count = 70;
  TokenHost host(
      [](Session& s, double id, uint64_t k) {
        switch (k % 7) {
          case 0:  // no first token
            complete_one(s, id, 4);
            break;
          case 1:
            s.first_token(id, 0);
            complete_one(s, id, 0);
            break;
          case 2:
            s.first_token(id, 0);
            complete_one(s, id, -3);
            break;
          case 3:
            s.first_token(id, 0);
            complete_one(s, id, 1);
            break;
          case 4:  // first token after completion: also missing at completion
            complete_one(s, id, 4);
            s.first_token(id, 0);
            break;
          case 5:
            s.first_token(id, 0);
            s.first_token(id, 0);
            complete_one(s, id, 4);
            break;
          default:
            s.first_token(id, 0);
            complete_one(s, id, 4);
        }
      },
      false);
  Session session(c, &host);
  const RunOutcome& o = host.run(session);
  CHECK(o.has_summary);
  const CompletionErrorCounts& e = o.completion_errors;
  CHECK_EQ(o.issued_sample_count, uint64_t{70});
  // Completed with no first token (cases 0 and 4): failed as no_first_token,
  // not completed with the reference's INT64_MIN first-token latency.
  CHECK_EQ(e.missing_first_tokens, uint64_t{20});
  CHECK_EQ(o.failed_samples.total, uint64_t{20});
  CHECK_EQ(o.failed_samples.by_kind[static_cast<size_t>(FailureKind::NoFirstToken)], uint64_t{20});
  CHECK_EQ(e.zero_tokens, uint64_t{10});
  CHECK_EQ(e.negative_tokens, uint64_t{10});
  CHECK_EQ(e.one_token, uint64_t{10});
  CHECK_EQ(e.first_token_after_completion, uint64_t{10});
  CHECK_EQ(e.duplicate_first_tokens, uint64_t{10});
  CHECK_EQ(e.duplicate_ids, uint64_t{0});
  // 20 failure lines and the reference's 50 token errors.
  CHECK_EQ(o.error_count, uint64_t{70});
  CHECK(!o.summary.result_valid);
  CHECK_EQ(o.extra_invalid_reasons.size(), size_t{1});
  if (!o.extra_invalid_reasons.empty()) {
    CHECK_EQ(o.extra_invalid_reasons[0], std::string("20 samples failed (no_first_token 20)"));
  }
  // The 50 that succeeded; coerced counts add nothing: 20 samples report 4 tokens.
  CHECK_EQ(o.summary.sample_count, uint64_t{50});
  CHECK_EQ(o.summary.first_token_latency_count, uint64_t{50});
  CHECK_EQ(o.summary.token_count, int64_t{20 * 4});
  // Fewer than 2 tokens: no TPOT (the reference divides by -1); no TPOT or
  // TTFT is negative, none is the INT64_MIN marker.
  CHECK(o.summary.time_per_output_token_min >= 0);
  CHECK(o.summary.first_token_latency_min >= 0);
  CHECK(o.summary_text.find("-9223372036854775808") == std::string::npos);
  CHECK(o.summary_text.find(" : -") == std::string::npos);
  const std::string detail = read_file(o.detail_log_path);
  CHECK_EQ(count_of(detail, "Attempted to record a sample latency before it's first token latency"), size_t{0});
  CHECK_EQ(count_of(detail, "\"Sample failed (no_first_token): completed with no first token recorded"), size_t{20});
  CHECK_EQ(count_of(detail, "n_tokens argument missing or attempted to record 0 as number of tokens"), size_t{10});
  CHECK_EQ(count_of(detail, "Attempted to record a negative number of tokens"), size_t{10});
  CHECK_EQ(count_of(detail, "Number of tokens need to be greater than 1"), size_t{10});
  CHECK_EQ(count_of(detail, "Attempted to record token latency after sample was completed"), size_t{10});
  CHECK_EQ(count_of(detail, "Attempted to complete a sample twice."), size_t{10});
  CHECK(detail.find("-9223372036854775808") == std::string::npos);
  CHECK(o.summary_text.find("70 ERRORS encountered. See detailed log.") != std::string::npos);
  CHECK(o.summary_text.find(" * 20 samples failed (no_first_token 20).\n") != std::string::npos);
}

// Every way of completing a sample (with or without token counts, batched,
// stamped or not) decides the same: no first token, a failed sample. Every
// scenario that needs one; one sample in five, as the issue's server did.
TEST(tokens_no_first_token_fails_from_every_completion_call) {
  for (const Scenario scenario : {Scenario::SingleStream, Scenario::MultiStream, Scenario::Server}) {
    SessionConfig c = token_config(scenario, "no_first_token");
    c.settings.multi_stream_expected_latency_ns = 1000;
    c.settings.multi_stream_samples_per_query = 4;
    c.settings.server_target_qps = 20000;
    c.settings.min_query_count = 100;
    std::atomic<uint64_t> missing{0};
    TokenHost host(
        [&](Session& s, double id, uint64_t k) {
          const bool has_first = k % 5 != 0;
          if (has_first) s.first_token(id, 0);
          else missing.fetch_add(1);
          const uint32_t id32 = static_cast<uint32_t>(id);
          const double tokens = 6;
          switch (k % 4) {
            case 0: complete_one(s, id, 6); break;
            case 1: s.complete(&id, 1); break;                        // no counts: 0 tokens
            case 2: s.complete_with_tokens(now_ns(), &id32, &tokens, 1); break;
            default: s.complete_at(now_ns(), &id, 1);
          }
        },
        true);
    Session session(c, &host);
    const RunOutcome& o = host.run(session);
    CHECK(o.has_summary);
    CHECK(missing.load() > 0);
    CHECK_EQ(o.failed_samples.by_kind[static_cast<size_t>(FailureKind::NoFirstToken)], missing.load());
    CHECK_EQ(o.completion_errors.missing_first_tokens, missing.load());
    CHECK(!o.summary.result_valid);
    CHECK_EQ(o.summary.first_token_latency_count, o.issued_sample_count - missing.load());
    CHECK(o.summary.first_token_latency_min >= 0);
    CHECK(o.summary.time_per_output_token_min >= 0);
    CHECK(o.summary_text.find("-9223372036854775808") == std::string::npos);
    const std::string detail = read_file(o.detail_log_path);
    CHECK(detail.find("-9223372036854775808") == std::string::npos);
    CHECK_EQ(count_of(detail, "Sample failed (no_first_token)"), static_cast<size_t>(missing.load()));
  }
}

// The null-native SUT reports no first token: under token latencies every
// sample it completes fails as no_first_token (and writes no accuracy record).
TEST(tokens_null_native_sut_fails_without_first_tokens) {
  SessionConfig c = token_config(Scenario::SingleStream, "null_native");
  c.complete_on_issue_thread = true;
  c.settings.accuracy_log_probability = 1.0;  // every sample would be logged, were it not failed
  FakeHost host;
  Session session(c, &host);
  const RunOutcome& o = host.run(session);
  CHECK(o.has_summary);
  CHECK(o.issued_sample_count > 0);
  CHECK_EQ(o.failed_samples.by_kind[static_cast<size_t>(FailureKind::NoFirstToken)], o.issued_sample_count);
  CHECK_EQ(o.summary.sample_count, uint64_t{0});
  CHECK_EQ(o.summary.first_token_latency_min, int64_t{0});
  CHECK(!o.summary.result_valid);
  CHECK_EQ(o.accuracy_log_records, uint64_t{0});
}

// A SUT that passes an old clockNs() reading (taken before the query was
// issued) as its first-token or completion stamp: the stamp counts as now,
// so no TTFT or latency is below the query's issue; a completion stamped
// before its first token likewise, so no TPOT is negative.
TEST(tokens_stamps_before_issue_or_first_token_count_as_now) {
  SessionConfig c = token_config(Scenario::SingleStream, "old_stamps");
  std::atomic<int64_t> first_stamp{0};
  TokenHost host(
      [&](Session& s, double id, uint64_t k) {
        const int64_t now = now_ns();
        if (k == 0) first_stamp.store(now);
        const int64_t old = first_stamp.load();  // within the series, before this query's issue
        if (k % 2 == 0) {
          s.first_token(id, old);
          complete_one(s, id, 5, old);
        } else {
          // The first token now, the completion stamped before it.
          std::this_thread::sleep_for(std::chrono::microseconds(200));
          s.first_token(id, 0);
          complete_one(s, id, 5, now);
        }
      },
      true);
  Session session(c, &host);
  const RunOutcome& o = host.run(session);
  CHECK(o.has_summary);
  CHECK_EQ(o.failed_samples.total, uint64_t{0});
  CHECK(o.summary.sample_latency_min >= 0);
  CHECK(o.summary.first_token_latency_min >= 0);
  CHECK(o.summary.time_per_output_token_min >= 0);
  CHECK(o.summary.first_token_latency_max <= o.summary.sample_latency_max);
  CHECK(o.summary_text.find(" : -") == std::string::npos);
}

TEST(tokens_offline_reports_token_count_only) {
  SessionConfig c = token_config(Scenario::Offline, "offline");
  c.settings.min_query_count = 200;
  TokenHost host([](Session& s, double id, uint64_t k) { complete_one(s, id, static_cast<double>(2 + k % 3)); },
                 false);
  Session session(c, &host);
  const RunOutcome& o = host.run(session);
  CHECK(o.has_summary);
  CHECK_EQ(o.error_count, uint64_t{0});  // Offline needs no first token
  CHECK_EQ(o.summary.sample_count, uint64_t{200});
  int64_t expected = 0;
  for (uint64_t k = 0; k < 200; ++k) expected += static_cast<int64_t>(2 + k % 3);
  CHECK_EQ(o.summary.token_count, expected);
  CHECK(o.summary.raw.first_token_latencies_ns.empty());
  CHECK(o.summary.tokens_per_second > 0);
  CHECK(o.summary_text.find("Tokens per second: ") != std::string::npos);
  CHECK(o.summary_text.find("First Token") == std::string::npos);
}

TEST(tokens_accuracy_log_carries_token_fields) {
  for (const Scenario scenario : {Scenario::SingleStream, Scenario::Offline}) {
    const bool offline = scenario == Scenario::Offline;
    SessionConfig c = token_config(scenario, offline ? "acc_offline" : "acc_ss");
    c.settings.mode = Mode::AccuracyOnly;
    c.qsl_total_count = 4;
    c.qsl_performance_count = 4;
    TokenHost host(
        [](Session& s, double id, uint64_t) {
          const uint8_t first[2] = {0xAB, 0x01};
          const uint8_t response[1] = {0x7F};
          s.first_token(id, 0, first, sizeof(first));
          complete_one(s, id, 7, response, sizeof(response));
        },
        false);
    Session session(c, &host);
    const RunOutcome& o = host.run(session);
    CHECK_EQ(o.accuracy_log_records, uint64_t{4});
    const std::string log = read_file(o.accuracy_log_path);
    if (offline) {
      CHECK_EQ(count_of(log, "\"data\" : \"7F\", \"token_count\" : 7 }"), size_t{4});
      CHECK(log.find("token_data") == std::string::npos);
    } else {
      CHECK_EQ(count_of(log, "\"data\" : \"7F\", \"token_data\" : \"AB01\", \"token_count\" : 7 }"), size_t{4});
    }
  }
}

// A sample completed with no first token failed: its response is not an
// accuracy record (the reference reads token data it never cached there).
TEST(tokens_no_first_token_writes_no_accuracy_record) {
  SessionConfig c = token_config(Scenario::SingleStream, "acc_no_first");
  c.settings.mode = Mode::AccuracyOnly;
  c.qsl_total_count = 8;
  c.qsl_performance_count = 8;
  TokenHost host(
      [](Session& s, double id, uint64_t k) {
        const uint8_t response[1] = {0x7F};
        if (k % 2 == 0) s.first_token(id, 0, response, sizeof(response));
        complete_one(s, id, 7, response, sizeof(response));
      },
      false);
  Session session(c, &host);
  const RunOutcome& o = host.run(session);
  CHECK_EQ(o.failed_samples.by_kind[static_cast<size_t>(FailureKind::NoFirstToken)], uint64_t{4});
  CHECK_EQ(o.accuracy_log_records, uint64_t{4});
  CHECK_EQ(count_of(read_file(o.accuracy_log_path), "\"token_data\" : \"7F\""), size_t{4});
}

TEST(tokens_format_record_fields) {
  AccuracyRecord r;
  r.seq_id = 3;
  r.qsl_idx = 9;
  r.data = {0x00, 0xFF};
  CHECK_EQ(AccuracyLog::format_record(r), std::string("{ \"seq_id\" : 3, \"qsl_idx\" : 9, \"data\" : \"00FF\" }"));
  r.with_token_count = true;
  r.token_count = -2;
  CHECK_EQ(AccuracyLog::format_record(r),
           std::string("{ \"seq_id\" : 3, \"qsl_idx\" : 9, \"data\" : \"00FF\", \"token_count\" : -2 }"));
  r.with_token_data = true;
  CHECK_EQ(AccuracyLog::format_record(r), std::string("{ \"seq_id\" : 3, \"qsl_idx\" : 9, \"data\" : \"00FF\", "
                                                      "\"token_data\" : \"\", \"token_count\" : -2 }"));
}

TEST(tokens_off_ignores_first_tokens_and_counts) {
  SessionConfig c = token_config(Scenario::SingleStream, "off");
  c.settings.use_token_latencies = false;
  TokenHost host(
      [](Session& s, double id, uint64_t) {
        s.first_token(id, 0);
        complete_one(s, id, 1);  // would be an error in token mode
      },
      false);
  Session session(c, &host);
  const RunOutcome& o = host.run(session);
  CHECK(o.has_summary);
  CHECK_EQ(o.error_count, uint64_t{0});
  CHECK_EQ(o.summary.token_count, int64_t{0});
  CHECK(o.summary_text.find("First Token") == std::string::npos);
}

TEST(tokens_infer_scales_sample_count) {
  SessionConfig c = token_config(Scenario::Offline, "infer");
  c.settings.use_token_latencies = false;
  c.settings.infer_token_latencies = true;
  c.settings.token_latency_scaling_factor = 10;
  c.settings.min_query_count = 100;
  TokenHost host([](Session& s, double id, uint64_t) { s.complete(&id, 1); }, false);
  Session session(c, &host);
  const RunOutcome& o = host.run(session);
  CHECK(o.has_summary);
  CHECK_EQ(o.error_count, uint64_t{0});
  CHECK(o.summary.inferred_tokens_per_second > 0);
  CHECK(std::abs(o.summary.inferred_tokens_per_second / o.summary.samples_per_second - 10.0) < 1e-9);
  CHECK(o.summary_text.find("Tokens per second (inferred): ") != std::string::npos);
}

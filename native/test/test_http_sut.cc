// The native HTTP client as a SUT inside the core (http_sut.h): whole runs
// against the loopback test server, the issue thread sending, the client's
// reactor completing; failures counted by kind; accuracy-logged bodies
// handed to the host; the secret redacted; the spin window of its issue thread.
#if defined(__linux__)

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "check.h"
#include "fake_host.h"
#include "http_sut.h"
#include "http_test_server.h"
#include "scheduler.h"
#include "session.h"
#include "test_util.h"

using namespace loadgen;
using loadgen_test::FakeHost;
using loadgen_test::HttpTestServer;
using loadgen_test::temp_outdir;

namespace {

// The host of a native SUT: never woken for queries; reads what the SUT
// hands it (accuracy-logged bodies) and completes those itself.
class NativeSutHost : public FakeHost {
 public:
  std::shared_ptr<HttpSut> sut;
  std::atomic<uint64_t> host_reads{0};
  // Streamed responses: bytes, ends and failures seen (the host completes each).
  std::atomic<uint64_t> stream_bytes{0};
  std::atomic<uint64_t> stream_ends{0};
  std::atomic<uint64_t> stream_failures{0};
  std::atomic<uint64_t> stream_out_of_order{0};  // bytes stamped after their end, or an end before bytes
  std::string last_failure;  // host thread only

  void attach(Session* session) override {
    FakeHost::attach(session);
    sut->attach(session);
    if (sut->streams()) {
      sut->set_host_wake([this] { take_stream_events(); });
      return;
    }
    sut->set_host_wake([this] {
      std::vector<HttpOutcome> responses;
      sut->take_host_responses(&responses);
      for (HttpOutcome& r : responses) {
        const double id = static_cast<double>(r.tag);
        loadgen_test::OneResponse body{r.body.data(), r.body.size()};
        const ResponseBytes responses = body.bytes();
        session_->complete_at(r.done_ns, &id, 1, false, &responses);
        host_reads.fetch_add(1);
      }
    });
  }

  void take_stream_events() {
    // A failure before a request was sent wakes from the issue thread: one taker at a time.
    std::lock_guard<std::mutex> lock(stream_mu_);
    std::vector<HttpStreamEvent> events;
    std::vector<uint8_t> bytes;
    sut->take_stream_events(&events, &bytes);
    for (const HttpStreamEvent& e : events) {
      const double id = static_cast<double>(e.tag);
      if (e.kind == HttpStreamEvent::kData) {
        stream_bytes.fetch_add(e.size);
        last_stamp_[e.tag] = e.stamp_ns;
      } else if (e.kind == HttpStreamEvent::kEnd) {
        if (last_stamp_[e.tag] == 0 || last_stamp_[e.tag] > e.stamp_ns) stream_out_of_order.fetch_add(1);
        session_->complete_at(e.stamp_ns, &id, 1);
        stream_ends.fetch_add(1);
      } else {
        last_failure.assign(reinterpret_cast<const char*>(bytes.data()) + e.offset, e.size);
        session_->fail(e.stamp_ns, id, e.failure, last_failure);
        stream_failures.fetch_add(1);
      }
    }
  }

 private:
  std::mutex stream_mu_;
  std::unordered_map<uint64_t, int64_t> last_stamp_;
};

std::shared_ptr<HttpSut> make_sut(const HttpTestServer& server, uint32_t connections, bool stream_bodies = false) {
  HttpClientConfig config;
  config.stream_bodies = stream_bodies;
  config.nodes.push_back({"127.0.0.1", server.port, "http://127.0.0.1:" + std::to_string(server.port)});
  config.connections_per_node = connections;
  config.request_timeout_ns = 5'000'000'000;
  return std::make_shared<HttpSut>(config);
}

void set_requests(HttpSut& sut, uint64_t count, const std::string& path_of_even, const std::string& path_of_odd) {
  const std::string rest = "\r\n";
  for (uint64_t i = 0; i < count; ++i) {
    const std::string line = "GET " + (i % 2 == 0 ? path_of_even : path_of_odd) + " HTTP/1.1\r\n";
    sut.client().set_request(static_cast<uint32_t>(i), reinterpret_cast<const uint8_t*>(line.data()), line.size(),
                             reinterpret_cast<const uint8_t*>(rest.data()), rest.size());
  }
}

SessionConfig config_for(Scenario scenario, const std::string& name, std::shared_ptr<HttpSut> sut) {
  SessionConfig c;
  c.settings.scenario = scenario;
  c.settings.min_duration_ms = 200;
  c.settings.min_query_count = 200;
  c.settings.server_target_qps = 2000;
  c.settings.server_target_latency_ns = 1'000'000'000;
  c.settings.offline_expected_qps = 1000;
  c.qsl_total_count = 64;
  c.qsl_performance_count = 64;
  c.sut_name = "native-http";
  c.qsl_name = "qsl";
  c.log.outdir = temp_outdir(name);
  c.native_sut = std::move(sut);
  return c;
}

// One whole run of an HttpSut against a fresh loopback server: even QSL
// indices request `even`, odd ones `odd`; `adjust` changes the config.
struct NativeRun {
  HttpTestServer server;
  std::shared_ptr<HttpSut> sut;
  NativeSutHost host;
  RunOutcome outcome;
  bool stream_bodies = false;

  void run(Scenario scenario, const std::string& name, uint32_t connections, const std::string& even,
           const std::string& odd, const std::function<void(SessionConfig&)>& adjust = {}) {
    CHECK(server.start());
    sut = make_sut(server, connections, stream_bodies);
    set_requests(*sut, 64, even, odd);
    std::string error;
    CHECK(sut->client().start(&error));
    host.sut = sut;
    SessionConfig c = config_for(scenario, name, sut);
    if (adjust) adjust(c);
    Session session(c, &host);
    outcome = host.run(session);
    sut->detach();
  }
};

}  // namespace

TEST(http_sut_server_run_completes_every_sample_through_the_client) {
  NativeRun r;
  r.run(Scenario::Server, "http-sut-server", 8, "/ok/hello", "/ok/world");
  const RunOutcome& o = r.outcome;
  CHECK(o.issued_sample_count >= 200);
  CHECK_EQ(o.completed_sample_count, o.issued_sample_count);
  CHECK_EQ(o.failed_samples.total, uint64_t{0});
  CHECK_EQ(r.host.wakes.load(), 0);    // no query went through the host
  CHECK_EQ(r.host.flushes.load(), 0);
  CHECK_EQ(r.host.series.load(), 1);   // the host still hears of the series (its reads complete into it)
  CHECK_EQ(r.host.host_reads.load(), uint64_t{0});  // nothing accuracy-logged in a performance run
}

TEST(http_sut_failures_are_counted_by_kind) {
  NativeRun r;
  r.run(Scenario::Offline, "http-sut-failures", 4, "/ok/fine", "/status/503", [](SessionConfig& c) {
    c.settings.min_duration_ms = 0;
    c.settings.min_query_count = 100;
  });
  const RunOutcome& o = r.outcome;
  CHECK_EQ(o.completed_sample_count, o.issued_sample_count);
  CHECK(o.failed_samples.total > 0);
  CHECK_EQ(o.failed_samples.by_kind[static_cast<size_t>(FailureKind::HttpStatus)], o.failed_samples.total);
  CHECK(!o.summary.result_valid);
}

TEST(http_sut_accuracy_mode_hands_every_body_to_the_host) {
  NativeRun r;
  r.run(Scenario::Offline, "http-sut-accuracy", 4, "/ok/even", "/ok/odd",
        [](SessionConfig& c) { c.settings.mode = Mode::AccuracyOnly; });
  CHECK_EQ(r.outcome.completed_sample_count, uint64_t{64});
  CHECK_EQ(r.host.host_reads.load(), uint64_t{64});
}

TEST(http_sut_streamed_responses_are_the_hosts_to_complete) {
  NativeRun r;
  r.stream_bodies = true;
  r.run(Scenario::Offline, "http-sut-streams", 4, "/chunked/abcdefgh", "/status/503", [](SessionConfig& c) {
    c.settings.min_duration_ms = 0;
    c.settings.min_query_count = 100;
  });
  const RunOutcome& o = r.outcome;
  CHECK_EQ(o.completed_sample_count, o.issued_sample_count);
  // Every even sample's body reached the host as bytes, then its end; the SUT completed none itself.
  CHECK_EQ(r.host.stream_ends.load() + r.host.stream_failures.load(), o.issued_sample_count);
  CHECK_EQ(r.host.stream_bytes.load(), r.host.stream_ends.load() * 8);
  CHECK_EQ(r.host.stream_out_of_order.load(), uint64_t{0});
  CHECK(r.host.stream_failures.load() > 0);
  CHECK_EQ(o.failed_samples.by_kind[static_cast<size_t>(FailureKind::HttpStatus)], r.host.stream_failures.load());
  CHECK(r.host.last_failure.rfind("node http://127.0.0.1:", 0) == 0);
  CHECK(r.host.last_failure.find(": HTTP 503: service unavailable") != std::string::npos);
  CHECK_EQ(r.host.host_reads.load(), uint64_t{0});
  CHECK(!o.summary.result_valid);
}

TEST(http_sut_redacts_the_secret_also_cut_at_the_end) {
  HttpClientConfig config;
  config.nodes.push_back({"127.0.0.1", 1, "http://127.0.0.1:1"});
  HttpSut sut(config);
  sut.set_secret("sk-abcdef123456");
  CHECK_EQ(sut.redact("HTTP 401: bad key sk-abcdef123456 given"), std::string("HTTP 401: bad key <api key> given"));
  CHECK_EQ(sut.redact("echo sk-abcdef123456 and sk-abcdef123456"), std::string("echo <api key> and <api key>"));
  CHECK_EQ(sut.redact("HTTP 500: you sent Bearer sk-abcd..."), std::string("HTTP 500: you sent Bearer <api key>..."));
  CHECK_EQ(sut.redact("HTTP 500: nothing secret"), std::string("HTTP 500: nothing secret"));
}

TEST(http_sut_spin_window_is_a_tenth_of_the_mean_gap) {
  Series series;
  series.trace.scheduled_delta_ns = {0, 500'000'000};  // 2 queries over 0.5 s: far apart
  CHECK_EQ(native_sut_spin_window_ns(series), kServerSpinWindowNs);
  series.trace.scheduled_delta_ns.assign(1000, 0);
  series.trace.scheduled_delta_ns.back() = 50'000'000;  // 1000 queries in 50 ms: 50 us apart
  CHECK_EQ(native_sut_spin_window_ns(series), int64_t{10000});
  series.trace.scheduled_delta_ns.back() = 400'000'000;  // 400 us apart
  CHECK_EQ(native_sut_spin_window_ns(series), int64_t{40000});
}

TEST(http_sut_spin_window_follows_the_sleeps_lateness) {
  Series series;
  series.trace.scheduled_delta_ns.assign(1000, 0);
  series.trace.scheduled_delta_ns.back() = 100'000'000;  // 100 us apart (10k QPS): at most 25 us
  AdaptiveSpinWindow w(series, native_sut_spin_window_ns(series));
  CHECK_EQ(w.max_ns, int64_t{25000});
  CHECK_EQ(w.window(), int64_t{10000});
  // Sleeps ending 15 us late: the window grows to cover them (+ the margin).
  for (int i = 0; i < 200; ++i) w.observe(15000);
  CHECK(w.window() >= 15000 + AdaptiveSpinWindow::kMarginNs && w.window() <= 15000 + AdaptiveSpinWindow::kMarginNs + 9 * AdaptiveSpinWindow::kStepNs);
  // Mostly 5 us late, one in 20 very late: the p90 follows the common case, not the tail.
  for (int i = 0; i < 4000; ++i) w.observe(i % 20 == 0 ? 400000 : 5000);
  CHECK(w.window() <= 5000 + AdaptiveSpinWindow::kMarginNs + 9 * AdaptiveSpinWindow::kStepNs);
  CHECK(w.window() >= AdaptiveSpinWindow::kMinNs);
  // Always very late: capped at a quarter of the gap, so the thread still sleeps between queries.
  for (int i = 0; i < 1000; ++i) w.observe(400000);
  CHECK_EQ(w.window(), int64_t{25000});
  // Far apart queries: the usual 120 us at most.
  Series slow;
  slow.trace.scheduled_delta_ns = {0, 500'000'000};
  AdaptiveSpinWindow s(slow, native_sut_spin_window_ns(slow));
  for (int i = 0; i < 1000; ++i) s.observe(1'000'000);
  CHECK_EQ(s.window(), kServerSpinWindowNs);
}

#endif  // __linux__

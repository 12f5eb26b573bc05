// The native HTTP client as a SUT inside the core (http_sut.h): whole runs
// against the loopback test server, the issue thread sending, the client's
// reactor completing; failures counted by kind; accuracy-logged bodies
// handed to the host, with the response headers the protocol reads; the
// secrets redacted; the spin window of its issue thread.
#if defined(__linux__)

#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
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
  std::atomic<uint64_t> body_wakes{0};  // wakes that handed bodies over
  // Streamed responses: bytes, ends and failures seen (the host completes each).
  std::atomic<uint64_t> stream_bytes{0};
  std::atomic<uint64_t> stream_ends{0};
  std::atomic<uint64_t> stream_failures{0};
  std::atomic<uint64_t> stream_out_of_order{0};  // bytes stamped after their end, or an end before bytes
  // Response headers (HttpClientConfig::response_headers) handed over: whole responses
  // carrying entries, stream header events, and those that came after their bytes.
  std::atomic<uint64_t> responses_with_headers{0};
  std::atomic<uint64_t> stream_headers{0};
  std::atomic<uint64_t> headers_after_bytes{0};
  std::string last_failure;  // host thread only
  // How the host takes each series, as JS does: it learns a series `learn_delay_ms`
  // after it is handed over (series_started() posts it; await_series_started()
  // returns once learned, unless `refuse_series` says why not).
  int learn_delay_ms = 0;
  std::string refuse_series;
  std::atomic<uint64_t> responses_before_series{0};  // responses of a series the host had not learned yet

  void series_started() override {
    FakeHost::series_started();
    const uint64_t first = session_->first_id();
    learners_.emplace_back([this, first] { learn(first); });
  }
  bool await_series_started(std::string* error) override {
    FakeHost::series_started();
    if (!refuse_series.empty()) {
      *error = refuse_series;
      return false;
    }
    learn(session_->first_id());
    return true;
  }
  ~NativeSutHost() override {
    for (std::thread& t : learners_) t.join();
  }

  void attach(Session* session) override {
    FakeHost::attach(session);
    sut->attach(session);
    if (sut->streams()) {
      sut->set_host_wake([this] { take_stream_events(); });
      return;
    }
    sut->set_host_wake([this] {
      body_wakes.fetch_add(1);
      std::vector<HttpOutcome> responses;
      sut->take_host_responses(&responses);
      for (HttpOutcome& r : responses) {
        const double id = static_cast<double>(r.tag);
        check_series_known(r.tag);
        if (!r.headers.empty()) responses_with_headers.fetch_add(1);
        loadgen_test::OneResponse body{r.body.data(), r.body.size()};
        const ResponseBytes bytes = body.bytes();
        session_->complete_at(r.done_ns, &id, 1, false, &bytes);
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
      check_series_known(e.tag);
      if (e.kind == HttpStreamEvent::kHeaders) {
        if (last_stamp_[e.tag] != 0) headers_after_bytes.fetch_add(1);
        if (e.size > 0) stream_headers.fetch_add(1);
      } else if (e.kind == HttpStreamEvent::kData) {
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
  void learn(uint64_t first_id) {
    std::this_thread::sleep_for(std::chrono::milliseconds(learn_delay_ms));
    known_first_id_.store(first_id + 1);
  }
  void check_series_known(uint64_t id) {
    const uint64_t known = known_first_id_.load();
    if (known == 0 || id + 1 < known) responses_before_series.fetch_add(1);
  }

  std::mutex stream_mu_;
  std::unordered_map<uint64_t, int64_t> last_stamp_;
  std::atomic<uint64_t> known_first_id_{0};  // the learned series' first id + 1 (0: none yet)
  std::vector<std::thread> learners_;
};

std::shared_ptr<HttpSut> make_sut(const HttpTestServer& server, uint32_t connections, bool stream_bodies = false,
                                  const std::vector<std::string>& response_headers = {}, uint32_t client_threads = 1) {
  HttpClientConfig config;
  config.stream_bodies = stream_bodies;
  config.response_headers = response_headers;
  config.nodes.push_back({"127.0.0.1", server.port, "http://127.0.0.1:" + std::to_string(server.port)});
  config.connections_per_node = connections;
  config.request_timeout_ns = 5'000'000'000;
  return std::make_shared<HttpSut>(config, client_threads);
}

void set_requests(HttpSut& sut, uint64_t count, const std::string& path_of_even, const std::string& path_of_odd) {
  const std::string rest = "\r\n";
  for (uint64_t i = 0; i < count; ++i) {
    const std::string line = "GET " + (i % 2 == 0 ? path_of_even : path_of_odd) + " HTTP/1.1\r\n";
    sut.set_request(static_cast<uint32_t>(i), reinterpret_cast<const uint8_t*>(line.data()), line.size(),
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
  std::vector<std::string> response_headers;
  std::vector<std::u16string> secrets;
  uint32_t client_threads = 1;
  std::string outdir;

  void run(Scenario scenario, const std::string& name, uint32_t connections, const std::string& even,
           const std::string& odd, const std::function<void(SessionConfig&)>& adjust = {}) {
    CHECK(server.start());
    sut = make_sut(server, connections, stream_bodies, response_headers, client_threads);
    sut->set_secrets(secrets);
    set_requests(*sut, 64, even, odd);
    std::string error;
    CHECK(sut->start(&error));
    host.sut = sut;
    SessionConfig c = config_for(scenario, name, sut);
    if (adjust) adjust(c);
    outdir = c.log.outdir;
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
  CHECK_EQ(r.sut->reactor_counts().handed_writes, uint64_t{0});  // one client thread: the issue thread writes
}

TEST(http_sut_server_run_wakes_the_host_for_batches_of_bodies) {
  // Every body goes to the host: at 20k requests/s (a response every 50 us)
  // the wakes come at most one per HttpSut::host_wake_interval_for (ten mean
  // gaps: 500 us) during the issue thread's inline waits, the rest at the end
  // of a turn; every sample is still completed, with its native stamp.
  NativeRun r;
  r.run(Scenario::Server, "http-sut-wake-batches", 16, "/ok/a", "/ok/b", [&r](SessionConfig& c) {
    c.settings.server_target_qps = 20000;
    c.settings.min_query_count = 2000;
    r.sut->set_host_reads_every_body(true);
  });
  const RunOutcome& o = r.outcome;
  CHECK(o.issued_sample_count >= 2000);
  CHECK_EQ(o.completed_sample_count, o.issued_sample_count);
  CHECK_EQ(r.host.host_reads.load(), o.issued_sample_count);
  CHECK(r.host.body_wakes.load() > 0);
  // ~10 responses a wake at 500 us; at most ~2 with the 100-us interval.
  CHECK(4 * r.host.body_wakes.load() < r.host.host_reads.load());
  CHECK(r.sut->client().reactor_counts().inline_events > 0);
}

TEST(http_sut_wakes_the_host_sooner_when_the_next_query_waits_for_its_completions) {
  HttpTestServer server;
  CHECK(server.start());
  std::shared_ptr<HttpSut> sut = make_sut(server, 2, false, {}, 1);
  CHECK_EQ(sut->host_wake_interval_ns(), HttpSut::kHostWakeIntervalNs);  // no series yet
  Series series;
  series.trace.scheduled_delta_ns.assign(1000, 0);
  series.trace.scheduled_delta_ns.back() = 100'000'000;  // 1000 queries 100 us apart (10k QPS)
  const std::pair<Scenario, int64_t> expected[] = {
      {Scenario::Server, HttpSut::kMaxHostWakeIntervalNs},  // ten gaps: 1 ms
      {Scenario::SingleStream, HttpSut::kHostWakeIntervalNs},
      {Scenario::Offline, HttpSut::kHostWakeIntervalNs},
      {Scenario::MultiStream, HttpSut::kHostWakeIntervalNs},
  };
  for (const auto& [scenario, interval] : expected) {
    series.scenario = scenario;
    sut->series_started(series);
    CHECK_EQ(sut->host_wake_interval_ns(), interval);
  }
  // Server: ten mean gaps, within 100 us..1 ms.
  series.scenario = Scenario::Server;
  series.trace.scheduled_delta_ns.back() = 20'000'000;  // 20 us apart (50k QPS): 200 us
  CHECK_EQ(HttpSut::host_wake_interval_for(series), int64_t{200'000});
  series.trace.scheduled_delta_ns.back() = 5'000'000;  // 5 us apart: 100 us at least
  CHECK_EQ(HttpSut::host_wake_interval_for(series), HttpSut::kHostWakeIntervalNs);
  series.trace.scheduled_delta_ns.back() = 1'000'000'000;  // 1 ms apart: 1 ms at most
  CHECK_EQ(HttpSut::host_wake_interval_for(series), HttpSut::kMaxHostWakeIntervalNs);
  sut->series_started(series);
  sut->detach();  // the next run's series is not known yet
  CHECK_EQ(sut->host_wake_interval_ns(), HttpSut::kHostWakeIntervalNs);
}

// Several client threads: each client reads its own connections' responses
// on its own reactor thread, from the one request table; the issue thread
// spreads the requests over them; the counts and node statistics add up.
// A Server run of three client threads at `qps` over `connections`, every sample completed.
static const RunOutcome& run_three_client_threads(NativeRun& r, const std::string& name, uint32_t connections, double qps, uint64_t queries) {
  r.client_threads = 3;
  r.run(Scenario::Server, name, connections, "/ok/a", "/ok/b", [qps, queries](SessionConfig& c) {
    c.settings.server_target_qps = qps;
    c.settings.min_query_count = queries;
  });
  const RunOutcome& o = r.outcome;
  CHECK(o.issued_sample_count >= queries);
  CHECK_EQ(o.completed_sample_count, o.issued_sample_count);
  CHECK_EQ(o.failed_samples.total, uint64_t{0});
  return o;
}

TEST(http_sut_client_threads_share_the_requests_and_each_reads_its_own) {
  NativeRun r;
  const RunOutcome& o = run_three_client_threads(r, "http-sut-client-threads", 7, 5000, 1000);
  CHECK_EQ(r.sut->client_threads(), size_t{3});
  const std::vector<HttpReactorCounts> threads = r.sut->thread_counts();
  CHECK_EQ(threads.size(), size_t{3});
  uint64_t responses = 0;
  for (const HttpReactorCounts& t : threads) {
    CHECK(t.responses > o.issued_sample_count / 10);  // spread, not all on one
    CHECK_EQ(t.inline_events, uint64_t{0});           // several threads: no inline turns
    CHECK(t.reactor_cpu_ns > 0);
    // A reactor wrote at most its own connections' requests (those handed over while it was awake).
    CHECK(t.handed_writes <= t.responses);
    responses += t.responses;
  }
  CHECK_EQ(responses, o.issued_sample_count);
  CHECK_EQ(r.sut->reactor_counts().responses, o.issued_sample_count);
  CHECK_EQ(r.sut->outstanding(), uint64_t{0});
  std::vector<double> stats(kNodeStatsLength);
  r.sut->copy_node_stats(stats.data());
  CHECK_EQ(stats[0], static_cast<double>(o.issued_sample_count));  // requests
  CHECK_EQ(stats[1], static_cast<double>(o.issued_sample_count));  // completed
  CHECK(stats[kNodeStatsMaxOffset] > 0);
  CHECK(stats[kNodeStatsMaxOffset] < 5e9);  // the clients' largest latency (the timeout bounds it), not a sum
}

// Several client threads at 30k/s: the issue thread hands an awake reactor
// its requests to write (reactor_writes; how many depends on the machine's
// timing: test_http_client.cc checks the handover itself), writes a blocked
// one's itself, and every request is still answered once, each through the
// thread that owns its connection.
// The names of this process's threads (/proc/self/task/*/comm).
static std::vector<std::string> thread_names() {
  std::vector<std::string> names;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return names;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string name;
    if (std::getline(comm, name)) names.push_back(name);
  }
  closedir(dir);
  return names;
}

TEST(http_sut_client_threads_are_named_one_by_one) {
  // What top -H and perf show: loadgen-http-K for each client thread, once.
  NativeRun r;
  run_three_client_threads(r, "http-sut-thread-names", 6, 2000, 200);
  const std::vector<std::string> names = thread_names();
  for (const char* want : {"loadgen-http-1", "loadgen-http-2", "loadgen-http-3"})
    CHECK_EQ(std::count(names.begin(), names.end(), std::string(want)), std::ptrdiff_t{1});
  CHECK_EQ(std::count(names.begin(), names.end(), std::string("loadgen-http")), std::ptrdiff_t{0});
}

TEST(http_sut_client_threads_write_the_requests_handed_to_them) {
  NativeRun r;
  const RunOutcome& o = run_three_client_threads(r, "http-sut-client-threads-write", 12, 30000, 6000);
  uint64_t handed = 0;
  for (const HttpReactorCounts& t : r.sut->thread_counts()) {
    CHECK(t.handed_writes <= t.responses);
    handed += t.handed_writes;
  }
  CHECK_EQ(r.sut->reactor_counts().handed_writes, handed);
  CHECK_EQ(r.sut->outstanding(), uint64_t{0});
  std::vector<double> stats(kNodeStatsLength);
  r.sut->copy_node_stats(stats.data());
  CHECK_EQ(stats[0], static_cast<double>(o.issued_sample_count));  // each request once
  CHECK_EQ(stats[1], static_cast<double>(o.issued_sample_count));
}

TEST(http_sut_client_threads_hand_bodies_and_failures_over) {
  NativeRun r;
  r.client_threads = 2;
  r.run(Scenario::Offline, "http-sut-client-threads-bodies", 4, "/ok/fine", "/status/503", [&r](SessionConfig& c) {
    c.settings.min_duration_ms = 0;
    c.settings.min_query_count = 400;
    r.sut->set_host_reads_every_body(true);
  });
  const RunOutcome& o = r.outcome;
  CHECK_EQ(o.completed_sample_count, o.issued_sample_count);
  CHECK(o.failed_samples.total > 0);
  CHECK_EQ(o.failed_samples.by_kind[static_cast<size_t>(FailureKind::HttpStatus)], o.failed_samples.total);
  CHECK_EQ(r.host.host_reads.load() + o.failed_samples.total, o.issued_sample_count);
  for (const HttpReactorCounts& t : r.sut->thread_counts()) CHECK(t.responses > 0);
}

TEST(http_sut_client_threads_are_capped_by_the_connections) {
  HttpTestServer server;
  CHECK(server.start());
  CHECK_EQ(make_sut(server, 2, false, {}, 5)->client_threads(), size_t{2});
  CHECK_EQ(make_sut(server, 8, false, {}, 0)->client_threads(), size_t{1});
  CHECK_EQ(make_sut(server, 100, false, {}, 1000)->client_threads(), size_t{HttpSut::kMaxClientThreads});
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

namespace {

// Streamed responses, read by `client_threads` threads: every event of a
// response comes from the one thread that owns its connection, in order.
void check_streamed_responses(uint32_t client_threads) {
  NativeRun r;
  r.stream_bodies = true;
  r.client_threads = client_threads;
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

}  // namespace

TEST(http_sut_streamed_responses_are_the_hosts_to_complete) { check_streamed_responses(1); }

// JS learns a series on one threadsafe function and reads responses from
// another, in either order: the first query waits until the host has the
// series, however late it takes it (else a run's first responses were read
// with no series known: bodies not logged, tokens not counted).
TEST(http_sut_issues_once_the_host_has_the_series) {
  for (const bool stream : {false, true}) {
    NativeRun r;
    r.stream_bodies = stream;
    r.host.learn_delay_ms = 50;
    r.run(Scenario::Offline, "http-sut-series-known", 4, "/ok/even", "/ok/odd", [](SessionConfig& c) {
      c.settings.mode = Mode::AccuracyOnly;
    });
    CHECK_EQ(r.outcome.completed_sample_count, uint64_t{64});
    CHECK_EQ(r.host.series.load(), 1);
    CHECK_EQ(r.host.responses_before_series.load(), uint64_t{0});
  }
}

TEST(http_sut_run_aborts_when_the_host_cannot_take_the_series) {
  NativeRun r;
  r.host.refuse_series = "the JavaScript environment is shutting down";
  r.run(Scenario::Offline, "http-sut-series-refused", 4, "/ok/even", "/ok/odd");
  CHECK(r.outcome.aborted);
  CHECK_EQ(r.outcome.abort_reason, std::string("the JavaScript environment is shutting down"));
  CHECK_EQ(r.outcome.issued_sample_count, uint64_t{0});
}

TEST(http_sut_streamed_responses_of_two_client_threads) { check_streamed_responses(2); }

TEST(http_sut_redacts_any_run_of_a_secret) {
  HttpClientConfig config;
  config.nodes.push_back({"127.0.0.1", 1, "http://127.0.0.1:1"});
  HttpSut sut(config);
  CHECK_EQ(sut.redact("HTTP 401: bad key sk-abcdef123456"), std::string("HTTP 401: bad key sk-abcdef123456"));
  sut.set_secrets({u"sk-abcdef123456", u"hdr-0123456789"});
  CHECK_EQ(sut.redact("HTTP 401: bad key sk-abcdef123456 given"), std::string("HTTP 401: bad key <redacted> given"));
  CHECK_EQ(sut.redact("echo sk-abcdef123456 and hdr-0123456789"), std::string("echo <redacted> and <redacted>"));
  // Cut at the end of an excerpt, masked, or quoted from the middle: any 8 characters.
  CHECK_EQ(sut.redact("HTTP 500: you sent Bearer sk-abcdef..."), std::string("HTTP 500: you sent Bearer <redacted>..."));
  CHECK_EQ(sut.redact("HTTP 401: ****def123456"), std::string("HTTP 401: ****<redacted>"));
  CHECK_EQ(sut.redact("HTTP 401: sk-abcd"), std::string("HTTP 401: sk-abcd"));
  CHECK_EQ(sut.redact("HTTP 500: nothing secret"), std::string("HTTP 500: nothing secret"));
  // Replaced whole by the next set.
  sut.set_secrets({u"another-secret"});
  CHECK_EQ(sut.redact("sk-abcdef123456 another-secret"), std::string("sk-abcdef123456 <redacted>"));
  sut.set_secrets({});
  CHECK_EQ(sut.redact("another-secret"), std::string("another-secret"));
}

namespace {

const std::string kKey = "sk-proj-Zq7Wm3Xv9Lp2Rt5Yb8Nc4Hd6Jf1Kg0123456789";

// A 401 whose body quotes the key masked (its last 6 characters starred), as OpenAI's does.
std::string quoting_401() {
  const std::string body = "{\"error\":{\"message\":\"Incorrect API key provided: " + kKey.substr(0, kKey.size() - 6) + "******\"}}";
  return "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Whether `text` holds any 8 consecutive characters of the key.
bool holds_part_of_key(const std::string& text) {
  for (size_t i = 0; i + 8 <= kKey.size(); ++i)
    if (text.find(kKey.substr(i, 8)) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(http_sut_error_status_messages_hide_any_part_of_a_secret) {
  for (const bool streamed : {false, true}) {
    NativeRun r;
    r.stream_bodies = streamed;
    r.secrets = {utf16_of(kKey)};
    r.server.drips.push_back({quoting_401()});
    r.run(Scenario::Offline, streamed ? "http-sut-secret-streamed" : "http-sut-secret", 4, "/ok/fine", "/drip/0",
          [](SessionConfig& c) {
            c.settings.min_duration_ms = 0;
            c.settings.min_query_count = 100;
          });
    const RunOutcome& o = r.outcome;
    CHECK(o.failed_samples.by_kind[static_cast<size_t>(FailureKind::HttpStatus)] > 0);
    const std::string detail = read_text(r.outdir + "/mlperf_log_detail.txt");
    CHECK(detail.find("HTTP 401: {\\\"error\\\":{\\\"message\\\":\\\"Incorrect API key provided: <redacted>******") != std::string::npos);
    CHECK(!holds_part_of_key(detail));
    if (streamed) CHECK(!holds_part_of_key(r.host.last_failure));
  }
}

TEST(http_sut_hands_the_listed_response_headers_to_the_host) {
  const std::string answer = "HTTP/1.1 200 OK\r\nInference-Header-Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}A";
  for (const bool streamed : {false, true}) {
    NativeRun r;
    r.stream_bodies = streamed;
    r.response_headers = {"inference-header-content-length"};
    r.server.drips.push_back({answer});
    r.run(Scenario::Offline, streamed ? "http-sut-headers-streamed" : "http-sut-headers", 4, "/drip/0", "/ok/plain",
          [](SessionConfig& c) { c.settings.mode = Mode::AccuracyOnly; });
    const RunOutcome& o = r.outcome;
    CHECK_EQ(o.completed_sample_count, uint64_t{64});
    CHECK_EQ(o.failed_samples.total, uint64_t{0});
    // The even samples' responses carried the header; the odd ones' did not.
    CHECK_EQ(streamed ? r.host.stream_headers.load() : r.host.responses_with_headers.load(), uint64_t{32});
    CHECK_EQ(r.host.headers_after_bytes.load(), uint64_t{0});
  }
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
  using W = AdaptiveSpinWindow;
  // Its bound by the mean gap: a quarter of it, at most 120 us, or a 25th of it up to 2 ms at low rates.
  CHECK_EQ(W::max_window_ns(20'000), W::kMinNs);
  CHECK_EQ(W::max_window_ns(100'000), int64_t{25000});
  CHECK_EQ(W::max_window_ns(1'000'000), kServerSpinWindowNs);
  CHECK_EQ(W::max_window_ns(5'000'000), int64_t{200000});
  CHECK_EQ(W::max_window_ns(50'000'000), int64_t{2000000});
  CHECK_EQ(W::max_window_ns(500'000'000), int64_t{2000000});

  Series series;
  series.trace.scheduled_delta_ns.assign(1000, 0);
  series.trace.scheduled_delta_ns.back() = 100'000'000;  // 100 us apart (10k QPS): at most 25 us
  W w(series, native_sut_spin_window_ns(series));
  CHECK_EQ(w.max_ns, int64_t{25000});
  CHECK_EQ(w.up_steps, W::kP90UpSteps);
  CHECK_EQ(w.window(), int64_t{10000});
  // Sleeps ending 15 us late: the window grows to cover them (+ the margin).
  for (int i = 0; i < 200; ++i) w.observe(15000);
  CHECK(w.window() >= 15000 + W::kMarginNs && w.window() <= 15000 + W::kMarginNs + W::kP90UpSteps * W::kStepNs);
  // Mostly 5 us late, one in 20 very late: the p90 follows the common case, not the tail.
  for (int i = 0; i < 4000; ++i) w.observe(i % 20 == 0 ? 400000 : 5000);
  CHECK(w.window() <= 5000 + W::kMarginNs + W::kP90UpSteps * W::kStepNs);
  CHECK(w.window() >= W::kMinNs);
  // Always very late: capped at a quarter of the gap, so the thread still sleeps between queries.
  for (int i = 0; i < 1000; ++i) w.observe(400000);
  CHECK_EQ(w.window(), int64_t{25000});
  // 1k QPS: the usual 120 us at most, still the p90.
  Series thousand;
  thousand.trace.scheduled_delta_ns.assign(1000, 0);
  thousand.trace.scheduled_delta_ns.back() = 1'000'000'000;
  W k(thousand, native_sut_spin_window_ns(thousand));
  CHECK_EQ(k.max_ns, kServerSpinWindowNs);
  CHECK_EQ(k.up_steps, W::kP90UpSteps);
  for (int i = 0; i < 1000; ++i) k.observe(1'000'000);
  CHECK_EQ(k.window(), kServerSpinWindowNs);

  // 20 QPS (50 ms apart): up to 2 ms, from the usual 120 us.
  Series slow;
  slow.trace.scheduled_delta_ns.assign(1000, 0);
  slow.trace.scheduled_delta_ns.back() = 50'000'000'000;
  W s(slow, native_sut_spin_window_ns(slow));
  CHECK_EQ(s.max_ns, int64_t{2000000});
  CHECK_EQ(s.up_steps, W::kP99UpSteps);
  CHECK_EQ(s.window(), kServerSpinWindowNs);
  // Mostly 50 us late, one in 20 at 800 us: the p99 follows the tail (a p90 would not).
  for (int i = 0; i < 4000; ++i) s.observe(i % 20 == 0 ? 800000 : 50000);
  CHECK(s.window() >= 750000 && s.window() <= 800000 + W::kMarginNs + W::kP99UpSteps * W::kStepNs);
  // One in 400 at 800 us (a quarter of the 1 %): the window comes back to the common case.
  for (int i = 0; i < 8000; ++i) s.observe(i % 400 == 0 ? 800000 : 50000);
  CHECK(s.window() >= 50000 && s.window() <= 50000 + W::kMarginNs + W::kP99UpSteps * W::kStepNs);
  // Always very late: at most 2 ms.
  for (int i = 0; i < 1000; ++i) s.observe(3'000'000);
  CHECK_EQ(s.window(), int64_t{2000000});
}

#endif  // __linux__

// The native HTTP client (native/http_client.h) against
// benchmarks/stamp-server.c.
// Closed loop (rate 0): `connections` requests always outstanding, each
// outcome answered by the next send. Prints requests/s, the client's CPU
// per request (getrusage: the issue thread and the reactor) and the mean
// latency.
// Open loop (rate > 0 per second): one request every 1/rate s, bodies kept;
// the server's stamps (recv, send) split each latency into the client's
// share, (done - sent) - (send - recv), with its request half (recv - sent)
// and response half (done - send). Prints their p50/p99.
//
//   cc -O2 -o /tmp/stamp-server benchmarks/stamp-server.c
//   taskset -c 1 /tmp/stamp-server 1 &        # prints "PORT n"
//   node scripts/test-native.mjs no-such-test  # builds build/native-tests/libloadgen_core.a
//   c++ -O2 -std=c++17 -Inative -o /tmp/native-http-bench benchmarks/native-http-bench.cc build/native-tests/libloadgen_core.a -lpthread
//   /tmp/native-http-bench PORT [connections=32] [seconds=5] [cpu=0] [rate=0]
#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "clock.h"
#include "http_client.h"
#include "wait.h"

namespace {

struct Counter : loadgen::HttpSink {
  std::atomic<uint64_t> done{0};
  std::atomic<uint64_t> failed{0};
  std::atomic<int64_t> latency_sum_ns{0};
  loadgen::Signal signal;
  // Open loop: the client's share of each latency and its two halves.
  std::mutex mu;
  std::vector<int64_t> share_ns, request_ns, response_ns;
  void on_outcome(loadgen::HttpOutcome& o) override {
    if (!o.ok) {
      if (failed.fetch_add(1) == 0) std::fprintf(stderr, "failure: %s\n", o.message.c_str());
    } else {
      latency_sum_ns.fetch_add(o.done_ns - o.sent_ns, std::memory_order_relaxed);
      long long recv = 0, send = 0;
      const std::string body(o.body.begin(), o.body.end());
      if (!body.empty() && std::sscanf(body.c_str(), "%lld %lld", &recv, &send) == 2) {
        std::lock_guard<std::mutex> lock(mu);
        share_ns.push_back((o.done_ns - o.sent_ns) - (send - recv));
        request_ns.push_back(recv - o.sent_ns);
        response_ns.push_back(o.done_ns - send);
      }
    }
    done.fetch_add(1, std::memory_order_release);
    signal.notify();
  }
};

double percentile_us(std::vector<int64_t> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))]) / 1e3;
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: native-http-bench PORT [connections=32] [seconds=5] [cpu=0]\n");
    return 2;
  }
  const int port = std::atoi(argv[1]);
  const uint32_t connections = argc > 2 ? static_cast<uint32_t>(std::atoi(argv[2])) : 32;
  const double seconds = argc > 3 ? std::atof(argv[3]) : 5;
  const int cpu = argc > 4 ? std::atoi(argv[4]) : 0;
  const double rate = argc > 5 ? std::atof(argv[5]) : 0;
  const std::string warning = loadgen::prepare_issue_thread(cpu);
  if (!warning.empty()) std::fprintf(stderr, "%s\n", warning.c_str());

  loadgen::HttpClientConfig config;
  config.nodes.push_back({"127.0.0.1", static_cast<uint16_t>(port), "http://127.0.0.1:" + std::to_string(port)});
  config.connections_per_node = connections;
  config.reactor_cpu = cpu;
  Counter counter;
  loadgen::HttpClient client(config, &counter);
  const std::string line = "GET /stamp HTTP/1.1\r\n";
  const std::string rest = "Accept: */*\r\n\r\n";
  client.set_request(0, reinterpret_cast<const uint8_t*>(line.data()), line.size(),
                     reinterpret_cast<const uint8_t*>(rest.data()), rest.size());
  std::string error;
  if (!client.start(&error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  uint64_t sent = 0;
  auto run = [&](double duration_s) {
    const int64_t end = loadgen::now_ns() + static_cast<int64_t>(duration_s * 1e9);
    if (rate > 0) {
      const int64_t period = static_cast<int64_t>(1e9 / rate);
      for (int64_t due = loadgen::now_ns(); due < end; due += period) {
        loadgen::wait_until_ns(due, 50'000);
        client.send(sent++, 0, true);
      }
      return;
    }
    while (loadgen::now_ns() < end) {
      while (sent - counter.done.load(std::memory_order_acquire) < connections) client.send(sent++, 0, false);
      const uint64_t seen = counter.done.load(std::memory_order_acquire);
      counter.signal.wait([&] { return counter.done.load(std::memory_order_acquire) != seen; }, end, 0, 10'000'000);
    }
  };
  run(1.0);  // warm-up
  {
    std::lock_guard<std::mutex> lock(counter.mu);
    counter.share_ns.clear();
    counter.request_ns.clear();
    counter.response_ns.clear();
  }
  const uint64_t done0 = counter.done.load();
  const int64_t lat0 = counter.latency_sum_ns.load();
  const double cpu0 = cpu_seconds();
  const int64_t t0 = loadgen::now_ns();
  run(seconds);
  const int64_t t1 = loadgen::now_ns();
  const double cpu1 = cpu_seconds();
  // Every request answered before the client closes.
  const int64_t drain_end = loadgen::now_ns() + 5'000'000'000;
  while (counter.done.load() < sent && loadgen::now_ns() < drain_end) loadgen::wait_until_ns(loadgen::now_ns() + 1'000'000, 0);
  const uint64_t done = counter.done.load() - done0;
  const double elapsed = static_cast<double>(t1 - t0) / 1e9;
  std::printf("connections %u, %.1f s: %.0f requests/s, client CPU %.2f us/request, mean latency %.1f us, failed %llu\n",
              connections, elapsed, static_cast<double>(done) / elapsed, (cpu1 - cpu0) * 1e6 / static_cast<double>(done),
              static_cast<double>(counter.latency_sum_ns.load() - lat0) / 1e3 / static_cast<double>(done),
              static_cast<unsigned long long>(counter.failed.load()));
  if (rate > 0) {
    std::lock_guard<std::mutex> lock(counter.mu);
    std::printf("open loop %.0f/s: client share p50 %.1f us p99 %.1f us; request half p50 %.1f us; response half p50 %.1f us (%zu samples)\n",
                rate, percentile_us(counter.share_ns, 0.5), percentile_us(counter.share_ns, 0.99),
                percentile_us(counter.request_ns, 0.5), percentile_us(counter.response_ns, 0.5), counter.share_ns.size());
  }
  client.stop();
  return counter.failed.load() == 0 ? 0 : 1;
}

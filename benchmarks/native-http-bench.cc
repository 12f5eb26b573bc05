// Closed-loop throughput of the native HTTP client (native/http_client.h)
// against benchmarks/stamp-server.c: `connections` requests always
// outstanding, each outcome answered by the next send. Prints requests/s,
// the client's CPU per request (getrusage: the issue thread and the
// reactor) and the mean latency.
//
//   cc -O2 -o /tmp/stamp-server benchmarks/stamp-server.c
//   taskset -c 1 /tmp/stamp-server 1 &        # prints "PORT n"
//   node scripts/test-native.mjs no-such-test  # builds build/native-tests/libloadgen_core.a
//   c++ -O2 -std=c++17 -Inative -o /tmp/native-http-bench benchmarks/native-http-bench.cc \
//       build/native-tests/libloadgen_core.a -lpthread
//   /tmp/native-http-bench PORT [connections=32] [seconds=5] [cpu=0]
#include <sched.h>
#include <sys/resource.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "clock.h"
#include "http_client.h"
#include "wait.h"

namespace {

struct Counter : loadgen::HttpSink {
  std::atomic<uint64_t> done{0};
  std::atomic<uint64_t> failed{0};
  std::atomic<int64_t> latency_sum_ns{0};
  loadgen::Signal signal;
  void on_outcome(loadgen::HttpOutcome& o) override {
    if (!o.ok) {
      if (failed.fetch_add(1) == 0) std::fprintf(stderr, "failure: %s\n", o.message.c_str());
    } else {
      latency_sum_ns.fetch_add(o.done_ns - o.sent_ns, std::memory_order_relaxed);
    }
    done.fetch_add(1, std::memory_order_release);
    signal.notify();
  }
};

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
    while (loadgen::now_ns() < end) {
      while (sent - counter.done.load(std::memory_order_acquire) < connections) client.send(sent++, 0, false);
      const uint64_t seen = counter.done.load(std::memory_order_acquire);
      counter.signal.wait([&] { return counter.done.load(std::memory_order_acquire) != seen; }, end, 0, 10'000'000);
    }
  };
  run(1.0);  // warm-up
  const uint64_t done0 = counter.done.load();
  const int64_t lat0 = counter.latency_sum_ns.load();
  const double cpu0 = cpu_seconds();
  const int64_t t0 = loadgen::now_ns();
  run(seconds);
  const int64_t t1 = loadgen::now_ns();
  const double cpu1 = cpu_seconds();
  const uint64_t done = counter.done.load() - done0;
  const double elapsed = static_cast<double>(t1 - t0) / 1e9;
  std::printf("connections %u, %.1f s: %.0f requests/s, client CPU %.2f us/request, mean latency %.1f us, failed %llu\n",
              connections, elapsed, static_cast<double>(done) / elapsed, (cpu1 - cpu0) * 1e6 / static_cast<double>(done),
              static_cast<double>(counter.latency_sum_ns.load() - lat0) / 1e3 / static_cast<double>(done),
              static_cast<unsigned long long>(counter.failed.load()));
  client.stop();
  return counter.failed.load() == 0 ? 0 : 1;
}

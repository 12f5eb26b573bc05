// The native HTTP client as a SUT inside the core (native_sut.h): the issue
// thread sends each sample's request itself (HttpClient::send), the client's
// reactor completes it through the session with the stamp of its last byte
// (in a Server series the reactor's turns run on the issue thread while it
// waits for the next due time: begin_inline_issuing). With several client
// threads there are as many clients, each with its own reactor thread, its
// share of the connections and one request table between them: the issue
// thread writes each request on a connection of the client with the fewest
// requests outstanding, and that client's thread reads the response. Responses whose
// bodies the host must read (accuracy-logged samples, or all when asked) go
// to the host's thread instead, stamped already: reading them there adds
// nothing to a latency. With streamed bodies (token streams) every response
// goes to the host event by event (bytes, end, failure), each with its
// native stamp, and the host completes it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "http_client.h"
#include "http_secrets.h"
#include "native_sut.h"

namespace loadgen {

class Session;

// One event of a streamed response for the host (stream_bodies): its
// headers (HttpClientConfig::response_headers: the captured entries), body
// bytes as read, the response's end, or its failure. `offset`/`size` locate
// the bytes (the entries, the failure's message) in the batch's byte buffer.
struct HttpStreamEvent {
  enum Kind : uint8_t { kData = 0, kEnd = 1, kFailed = 2, kHeaders = 3 };
  uint64_t tag = 0;
  uint32_t index = 0;
  uint32_t node = 0;
  int64_t stamp_ns = 0;  // the read that brought the bytes / the end / the failure
  int64_t sent_ns = 0;   // end and failure: when the request's first byte was written (0: never sent)
  size_t offset = 0;
  size_t size = 0;
  Kind kind = kData;
  FailureKind failure = FailureKind::Connection;  // kFailed
};

class HttpSut final : public NativeSut, public HttpSink {
 public:
  // `client_threads` clients (1 .. kMaxClientThreads, and at most
  // connections_per_node: each has one connection per node at least),
  // connections_per_node split between them. With more than one, the
  // reactors' turns always run on their own threads (no inline issuing).
  static constexpr uint32_t kMaxClientThreads = 64;
  HttpSut(HttpClientConfig config, uint32_t client_threads);
  explicit HttpSut(HttpClientConfig config) : HttpSut(std::move(config), 1) {}
  ~HttpSut() override;

  // Client `k` (tests); the calls below act on all of them.
  HttpClient& client(size_t k = 0) { return *clients_[k]; }
  size_t client_threads() const { return clients_.size(); }

  // HttpClient's calls over every client (http_client.h): the request table
  // (one, shared), start (false with the first error; the clients started
  // are stopped), stop, cancel_all, the outstanding count (summed), the
  // per-node statistics (summed; max is the maximum) and the reactor counts
  // (summed, and per client).
  bool set_request(uint32_t index, const uint8_t* line, size_t line_size, const uint8_t* rest, size_t rest_size) {
    return clients_[0]->set_request(index, line, line_size, rest, rest_size);
  }
  bool set_requests(const uint32_t* indices, size_t count, const uint8_t* data, const uint32_t* layout) {
    return clients_[0]->set_requests(indices, count, data, layout);
  }
  void clear_requests();
  bool start(std::string* error);
  void stop();
  void cancel_all(const std::string& message);
  uint64_t outstanding() const;
  void copy_node_stats(double* out) const;
  HttpReactorCounts reactor_counts() const;
  std::vector<HttpReactorCounts> thread_counts() const;

  // Host thread, before the run starts / after it ended (waits for a
  // completion under way on the reactor thread). Outcomes that arrive while
  // no session is attached are dropped: their ids belong to no series.
  void attach(Session* session);
  void detach() { attach(nullptr); }

  // The secrets (the API key, secret request headers' values) that no
  // failure message may carry, e.g. when a server echoes the request back:
  // any run of 8 or more of their characters is replaced (http_secrets.h).
  // Host thread; replaces the last set. Applied to the messages that quote
  // a server's bytes (an error status's excerpt), on the reactor thread.
  void set_secrets(const std::vector<std::u16string>& secrets);
  std::string redact(const std::string& text) const;

  // Between series: every request still outstanding fails as Cancelled
  // (HttpClient::cancel_outstanding) and completes no sample: the core
  // stopped waiting for them and counted them incomplete; the next series'
  // requests go out as usual.
  void abandon_outstanding(const std::string& message);

  // Every response body goes to the host (token counts or checks the host's
  // reader makes), not only the accuracy-logged ones.
  void set_host_reads_every_body(bool every) { host_reads_every_body_ = every; }
  // Failed requests go to the host too (a per-request log): it fails their
  // samples with the native stamp, as this SUT would. Whole responses only
  // (streams hand the host every outcome anyway).
  void set_host_reads_every_outcome(bool every) { host_reads_every_outcome_ = every; }
  // Called (from the reactor thread) when responses wait for the host and no
  // earlier call is still unanswered; the host then calls take_host_responses().
  void set_host_wake(std::function<void()> wake) { host_wake_ = std::move(wake); }
  // Host thread: the waiting responses (ok, body kept; failed, with
  // host_reads_every_outcome, the redacted message in `message`), oldest first.
  void take_host_responses(std::vector<HttpOutcome>* out);

  // The client streams bodies (HttpClientConfig::stream_bodies): every
  // response is the host's to read and complete (token streams), event by
  // event with the native stamps; this SUT completes nothing itself.
  bool streams() const { return streams_; }
  // Host thread: the waiting stream events, oldest first, and their bytes.
  // Swaps with the given (emptied) vectors: their capacity is reused.
  void take_stream_events(std::vector<HttpStreamEvent>* events, std::vector<uint8_t>* bytes);

  // NativeSut
  void series_started(Series& series) override;
  void issue(Series& series, uint64_t first, uint64_t last) override;
  bool begin_inline_issuing() override { return clients_.size() == 1 && clients_[0]->begin_inline(); }
  void end_inline_issuing() override { clients_[0]->end_inline(); }
  int64_t wait_until(int64_t target_ns, int64_t spin_window_ns, bool yield_while_spinning) override {
    return clients_[0]->wait_inline(target_ns, spin_window_ns, yield_while_spinning);
  }
  // HttpSink (reactor thread)
  void on_outcome(HttpOutcome& outcome) override;
  void on_body(const HttpBodyChunk& chunk) override;
  void on_headers(const HttpBodyChunk& chunk) override;
  void on_turn_end(int64_t next_wait_ns) override;

  // Within a reactor turn the host is woken at most once per interval; what
  // comes sooner waits for the turn's end or a later turn (on_turn_end): at
  // thousands of responses a second the JS thread reads them in batches, not
  // one wake (a threadsafe-function call and an eventfd write on the
  // reactor, a wake-up of the JS thread) per response. Every figure keeps
  // its native stamp; only the host's reading is later, by at most the
  // interval: 100 us, but in a Server series, where nothing waits for the
  // host's reading (queries go out on their schedule, not after completions
  // as in SingleStream and MultiStream), ten mean gaps between queries,
  // 100 us..1 ms. On one CPU at 10k requests/s the 100-us interval woke the
  // JS thread for every second response, and those wake-ups took the issue
  // thread's CPU; a flat 1 ms made p99 worse at 50k/s (2.4-2.7 vs 1.7-2.2 ms,
  // 3 pairs). Ten gaps against 100 us, interleaved, 4 pairs: 10k/s client
  // share p99 median 182 vs 437 us, CPU 44.8 vs 54.4 us a request; 50k/s p99
  // 1.81 vs 2.52 ms (benchmarks/RESULTS.md). Offline keeps 100 us: 1 ms
  // there changed nothing measurable (3 pairs at 112k-135k responses/s: its
  // responses come in floods that 100 us batches already).
  static constexpr int64_t kHostWakeIntervalNs = 100'000;
  static constexpr int64_t kMaxHostWakeIntervalNs = 1'000'000;
  static constexpr int64_t kHostWakeGaps = 10;
  // The interval for a series (series_started sets it).
  static int64_t host_wake_interval_for(const Series& series);
  // The interval in force (series_started sets it from the series' scenario).
  int64_t host_wake_interval_ns() const { return host_wake_interval_ns_.load(std::memory_order_relaxed); }

 private:
  // Whether sample `id`'s body goes to the host (as issue() decided).
  bool host_reads_body(uint64_t id) const;
  // The client the next request goes to (issue thread): the one with the
  // fewest requests outstanding, ties in turn.
  HttpClient& pick_client();
  // Queues a stream event (reactor thread) and wakes the host if it is not woken yet.
  void push_stream_event(HttpStreamEvent event, const uint8_t* bytes, size_t size);
  // After queuing for the host: wakes it unless a wake is out, or defers the
  // wake to the turn's end when the last one was under the interval ago.
  void request_host_wake();
  // Wakes the host unless a wake is out; `now` starts the next interval
  // (< 0: a wake outside a reactor turn, which starts none).
  void wake_host(int64_t now);
  // A chunk's bytes as a stream event of `kind`, when a run is attached.
  void push_chunk(const HttpBodyChunk& chunk, HttpStreamEvent::Kind kind);

  bool streams_ = false;
  std::vector<std::unique_ptr<HttpClient>> clients_;
  size_t next_client_ = 0;  // issue thread (pick_client)
  size_t node_count_ = 0;
  std::atomic<const Series*> series_{nullptr};  // the current series (series_started)
  std::atomic<int64_t> host_wake_interval_ns_{kHostWakeIntervalNs};  // see kHostWakeIntervalNs
  std::atomic<Session*> session_{nullptr};
  std::atomic<int> in_outcome_{0};  // on_outcome calls using session_ (detach waits for 0)
  std::atomic<bool> abandoning_{false};  // cancelled outcomes complete nothing (abandon_outstanding)
  bool host_reads_every_body_ = false;
  bool host_reads_every_outcome_ = false;
  // Replaced whole by set_secrets; read (copied under the lock) only for a failure's message.
  mutable std::mutex secrets_mutex_;
  std::shared_ptr<const SecretRedactor> secrets_;
  std::function<void()> host_wake_;
  std::mutex host_mutex_;
  std::vector<HttpOutcome> host_responses_;
  std::atomic<bool> host_wake_pending_{false};
  std::atomic<bool> host_wake_deferred_{false};
  std::atomic<int64_t> last_host_wake_ns_{0};
  std::vector<HttpStreamEvent> stream_events_;  // under host_mutex_
  std::vector<uint8_t> stream_bytes_;           // under host_mutex_
};

}  // namespace loadgen

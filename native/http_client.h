// A native HTTP/1.1 keep-alive client for network SUTs (KServe v2, mapped
// HTTP APIs, OpenAI token streams): the issue thread writes each request on
// an idle connection itself (no hop to another thread before the bytes
// leave), one reactor thread reads every response, stamps the moment its
// last byte was read (now_ns()) and hands the outcome to a sink; streamed
// responses also hand over each read's body bytes with that read's stamp. It is
// what lets a network SUT reach wrk-like rates and a client share of
// latency of tens of microseconds: undici on the JS thread costs ~75 us of
// CPU per request (benchmarks/RESULTS.md, issue 12).
//
// Plain POSIX sockets + epoll on Linux; elsewhere `available()` is false
// and the JS transport (undici) is used. http: only (no TLS, no HTTP/2).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "failure_kinds.h"

namespace loadgen {

// ---- Per-node statistics, in the layout of lib/net/node-stats.ts ----
// [requests, completed, failed by kind (kFailureKindCount), sum_ns, max_ns,
// measured, then kNodeStatsBuckets log buckets: bucket i holds latencies in
// [1.01^i, 1.01^(i+1)) ns]. test/native-tables.test.ts checks the TS side
// against tables.nodeStatsLength.
constexpr size_t kNodeStatsBuckets = 2900;
constexpr size_t kNodeStatsLength = 2 + kFailureKindCount + 3 + kNodeStatsBuckets;
// The slice's one entry that is a maximum (max_ns), not a count or a sum.
constexpr size_t kNodeStatsMaxOffset = 2 + kFailureKindCount + 1;

// ---- One HTTP/1.1 response, parsed as its bytes arrive ----
// Status line, headers (Content-Length, Transfer-Encoding: chunked,
// Connection), then the body: by length, chunked (trailers skipped) or
// delimited by the connection's close. 1xx interim responses are skipped.
// Limits: head <= kMaxHeadBytes, body <= the body limit; beyond either, or
// any syntax error: Error with a short reason (never the bytes themselves).
// The values of a few listed headers of a 2xx response are captured as the
// head is read (set_capture), into a fixed buffer: no allocation.
// As strict as llhttp (undici): CRLF line ends only, one Content-Length of
// digits (<= 2^53 - 1), never with Transfer-Encoding, whose only coding may
// be chunked; no folded lines, names of token characters, no control
// characters in values.
class HttpResponseParser {
 public:
  enum class State { Head, Body, Done, Error };
  static constexpr size_t kMaxHeadBytes = 64 * 1024;
  // Captured headers: at most this many names (set_capture), each value at
  // most kMaxCapturedValueBytes, all of one response's entries (3 bytes
  // each besides the value) at most kCaptureBytes; beyond: Error.
  static constexpr size_t kMaxCapturedNames = 8;
  static constexpr size_t kMaxCapturedValueBytes = 256;
  static constexpr size_t kCaptureBytes = 1024;

  // Ready for the next response; `body_out` (may be null) receives the body
  // bytes up to `body_keep_limit` (the rest is counted, not kept);
  // `max_body_bytes` larger bodies are an Error.
  void reset(std::vector<uint8_t>* body_out, size_t body_keep_limit, uint64_t max_body_bytes);
  // The header names (lowercase, at most kMaxCapturedNames; the vector
  // outlives the parser) whose values a 2xx response's head hands over
  // (captured()); null or empty: none. Kept across reset().
  void set_capture(const std::vector<std::string>* names) { capture_names_ = names; }
  // Consumes bytes; returns how many were used. Stops at the end of the
  // response (Done): any further bytes belong to nothing (no pipelining),
  // the caller treats them as a protocol error.
  size_t feed(const uint8_t* data, size_t size);
  // The peer closed the connection: a close-delimited body is Done; any
  // other unfinished response becomes Error.
  void end_of_stream();

  State state() const { return state_; }
  int status() const { return status_; }
  // False after `Connection: close` or HTTP/1.0 without keep-alive.
  bool keep_alive() const { return keep_alive_; }
  uint64_t body_bytes() const { return body_bytes_; }
  const char* error() const { return error_; }
  // The Error is a body beyond max_body_bytes.
  bool over_body_limit() const { return over_body_limit_; }
  // The head of the final (non-1xx) response was read whole.
  bool head_complete() const { return head_complete_; }
  // The captured headers of a 2xx response, in the order they came: per
  // occurrence one entry [the name's index in set_capture's list: 1 byte]
  // [the value's length: 2 bytes, little-endian][the value, trimmed]. A
  // name given twice has two entries. Valid until the next reset().
  const uint8_t* captured() const { return captured_.data(); }
  size_t captured_size() const { return captured_size_; }

 private:
  void start_response();
  void fail(const char* reason);
  void fail_over_body_limit();
  void head_line(const char* line, size_t size);
  void capture(const char* name, size_t name_size, const char* value, size_t value_size);
  void head_done();
  bool take_body(const uint8_t* data, size_t size);
  size_t feed_chunked(const uint8_t* data, size_t size);

  // The implementation's state (helper-owned; fields may change).
  State state_ = State::Head;
  int status_ = 0;
  bool keep_alive_ = true;
  uint64_t body_bytes_ = 0;
  const char* error_ = "";
  bool over_body_limit_ = false;
  std::string head_;  // the head line so far (reserved once, reused)
  size_t head_bytes_ = 0;  // of the head (or of the trailers), against kMaxHeadBytes
  uint32_t head_lines_ = 0;
  bool http10_ = false;
  bool connection_close_ = false;
  bool connection_keep_alive_ = false;
  bool has_length_ = false;
  bool has_transfer_encoding_ = false;
  bool chunked_ = false;  // the last transfer coding named is chunked
  uint32_t transfer_codings_ = 0;  // codings named in Transfer-Encoding headers
  int body_mode_ = 0;  // 0 none, 1 length, 2 chunked, 3 until close
  uint64_t remaining_ = 0;
  int chunk_state_ = 0;
  std::string chunk_line_;
  std::vector<uint8_t>* body_out_ = nullptr;
  size_t body_keep_limit_ = 0;
  uint64_t max_body_bytes_ = 0;
  bool head_complete_ = false;
  const std::vector<std::string>* capture_names_ = nullptr;
  size_t captured_size_ = 0;
  std::array<uint8_t, kCaptureBytes> captured_{};
};

// ---- The client ----

struct HttpNodeAddress {
  std::string host;   // name or IP literal (resolved once, in start())
  uint16_t port = 0;
  std::string label;  // the node's URL (origin) in messages, never credentials
};

struct HttpClientConfig {
  std::vector<HttpNodeAddress> nodes;
  // The most keep-alive connections per node: one opens in start(), more as
  // requests wait for one. A connect the server refuses (or a connection it
  // closes as it accepts it) while others are open lowers the node's
  // ceiling to those; the whole pools must fit RLIMIT_NOFILE (start()).
  uint32_t connections_per_node = 32;
  bool least_outstanding = true;  // else round-robin
  int64_t connect_timeout_ns = 10'000'000'000;
  int64_t request_timeout_ns = 60'000'000'000;  // 0: none
  // A node that has no connection and cannot get one is skipped this long.
  int64_t node_backoff_ns = 1'000'000'000;
  // A response body beyond this (whole, streamed or not kept) fails as
  // MalformedResponse as soon as its bytes pass it (its Content-Length
  // beyond it: at once), with no more of it kept.
  uint64_t max_body_bytes = uint64_t{64} << 20;
  int reactor_cpu = -1;  // pin the reactor thread (-1: not pinned)
  // Streamed responses (token streams): a 2xx body goes to HttpSink::on_body
  // as each read brings it (chunked framing removed), never kept whole; the
  // outcome then carries no body. Non-2xx bodies are still excerpted.
  bool stream_bodies = false;
  // Response headers the protocol reads (lowercase names, at most
  // HttpResponseParser::kMaxCapturedNames; start() checks): a 2xx
  // response's values reach the sink, with the outcome (HttpOutcome::headers)
  // or, streamed, before the first body bytes (HttpSink::on_headers).
  std::vector<std::string> response_headers;
  // How long the reactor thread polls (epoll_wait with timeout 0; no
  // sched_yield between polls) for responses after each request before it blocks: at
  // most this, and at most twice the recent median response time (learned
  // online); when that median is longer than half of this, it never polls.
  // A polling reactor is awake when a response lands, instead of being woken
  // from a halted CPU (~25-50 us on a VM). 0: always block.
  int64_t response_poll_ns = 200'000;
  // Server series (HttpSut): the issue thread reads the responses while it
  // waits for the next due time (begin_inline), the reactor thread parked:
  // one thread sends and reads, as a closed-loop client's does, with no
  // wake of a second thread per response. False: the reactor thread reads
  // them always.
  bool inline_reactor = true;
  // The reactor thread writes the requests while it is awake: send() takes
  // an idle connection and, unless the reactor is blocked in epoll_wait,
  // hands it over (a lock-held push and an atomic flag, no system call) for
  // the reactor's next turn; a blocked reactor's requests the issue thread
  // writes itself (waking it first would add its wake-up to the latency).
  // With several client threads (HttpSut) this spreads the writes over the
  // reactors when the rate keeps them busy: on loopback a write runs the
  // receiver's TCP path too (~8 us of the writer's CPU), and one issue thread
  // writing every request held 1, 2, 4 and 8 client threads alike at ~100k
  // requests/s on 16 cores (benchmarks/RESULTS.md, issue 26). Needs
  // inline_reactor false.
  bool reactor_writes = false;
  // The reactor thread's name (HttpSut: loadgen-http-K with several client threads).
  std::string thread_name = "loadgen-http";
};

// How the reactor thread waited (tests, benchmarks): counts since start().
struct HttpReactorCounts {
  uint64_t polled_events = 0;     // connection events (mostly responses) a poll found: the reactor was awake
  uint64_t inline_events = 0;     // connection events the issue thread handled in its inline waits
  uint64_t blocking_waits = 0;    // epoll_wait calls that could sleep while a request was outstanding
  uint64_t send_wakes = 0;        // the issue thread woke a blocked reactor after a send
  int64_t poll_budget_ns = 0;     // the current budget (see response_poll_ns)
  uint64_t opened_connections = 0;   // connects that succeeded (start()'s included)
  uint64_t refused_connections = 0;  // connects refused, reset or timed out, or closed as accepted
  uint64_t retried_requests = 0;     // requests sent a second time (see send())
  uint64_t responses = 0;            // outcomes handed to the sink (whichever thread ran the turn)
  int64_t reactor_cpu_ns = 0;        // CPU time of the reactor thread (not the issue thread's inline turns), within ~1 ms
  uint64_t handed_writes = 0;        // requests send() handed to the awake reactor to write (reactor_writes)
};

// How one request ended. Handed to the sink by the reactor: its thread, or
// the issue thread in its inline waits (begin_inline); or on the sending
// thread when a request fails before it is sent.
struct HttpOutcome {
  uint64_t tag = 0;       // what send() was given (the sample id)
  uint32_t index = 0;     // the request's index in the table (the QSL index)
  uint32_t node = 0;
  int64_t sent_ns = 0;    // now_ns() when its first byte was written (0: never sent)
  int64_t done_ns = 0;    // now_ns() when its last byte was read, or when it failed
  int status = 0;         // HTTP status (0: no response head)
  bool ok = false;        // a 2xx response, read whole
  FailureKind kind = FailureKind::Connection;  // when !ok
  // When !ok: e.g. "node http://h:p: HTTP 503: <first 200 body bytes, control
  // characters as spaces>", "node http://h:p: no complete response within
  // 100 ms", "node http://h:p: connect: Connection refused".
  std::string message;
  // The whole body, only when send() asked for it (keep_body) and ok; for a
  // non-2xx status, the message holds its excerpt instead.
  std::vector<uint8_t> body;
  // When ok and not streamed: the listed response headers it carried
  // (HttpResponseParser::captured()'s entries).
  std::vector<uint8_t> headers;
};

// The body bytes one read brought (stream_bodies), on the reactor thread.
// `data` is valid during the call only.
struct HttpBodyChunk {
  uint64_t tag = 0;
  uint32_t index = 0;
  uint32_t node = 0;
  int64_t read_ns = 0;  // now_ns() right after the read that brought them
  const uint8_t* data = nullptr;
  size_t size = 0;
};

class HttpSink {
 public:
  virtual ~HttpSink() = default;
  // Exactly once per send(). Must not call back into the client. With
  // stream_bodies it follows the request's last on_body, on the same thread.
  virtual void on_outcome(HttpOutcome& outcome) = 0;
  // stream_bodies: zero or more times per request before its outcome, in
  // the order of the bytes. Must not call back into the client.
  virtual void on_body(const HttpBodyChunk& chunk) { (void)chunk; }
  // stream_bodies with response_headers: once per 2xx response, when its
  // head was read, before its first on_body; `data` holds the captured
  // entries (HttpResponseParser::captured(); none: size 0). Must not call
  // back into the client.
  virtual void on_headers(const HttpBodyChunk& chunk) { (void)chunk; }
  // After each turn of the reactor (its thread's, or an inline wait's), on
  // the turn's thread: `next_wait_ns` is how long it may wait before its
  // next turn (< 0: unbounded). A sink that defers work it queued during the
  // turn (HttpClient::in_reactor_turn) does it here at the latest. Must not
  // call back into the client.
  virtual void on_turn_end(int64_t next_wait_ns) { (void)next_wait_ns; }
};

class HttpClient {
 public:
  // Whether this platform has the native client (Linux: epoll).
  static bool available();
  // Whether the calling thread is inside a reactor turn (a sink's callbacks
  // then run on a turn whose end calls HttpSink::on_turn_end).
  static bool in_reactor_turn();

  HttpClient(HttpClientConfig config, HttpSink* sink);
  ~HttpClient();  // stop()
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // ---- Before start(): the request bytes ----
  // Request `index` is written as `line` (e.g. "POST /v2/models/m/infer
  // HTTP/1.1\r\n"), then the node's "Host: host:port\r\n" line, then `rest`
  // (the other headers, the blank line and the body). Copied into one arena;
  // the table is a vector indexed by QSL index, so indices are dense QSL
  // indices <= kMaxRequestIndex; setting one again replaces it. False (and
  // nothing stored) for a larger index, an empty line or a part >= 4 GiB.
  static constexpr uint32_t kMaxRequestIndex = (uint32_t{1} << 26) - 1;
  bool set_request(uint32_t index, const uint8_t* line, size_t line_size, const uint8_t* rest, size_t rest_size);
  // A whole load: request indices[i] is data[layout[4i], +layout[4i+1])
  // (its line) and data[layout[4i+2], +layout[4i+3]) (the rest), ranges
  // checked by the caller. The table and arena grow once. False (nothing
  // stored) when an index exceeds kMaxRequestIndex or a line is empty.
  bool set_requests(const uint32_t* indices, size_t count, const uint8_t* data, const uint32_t* layout);
  void clear_requests();
  // Before start(): this client sends from `source`'s request table (one
  // table for the clients of several threads); set_requests and
  // clear_requests then go through `source`, while nothing is outstanding
  // on either.
  void share_requests(const HttpClient& source);

  // Checks the response header names and the pools against RLIMIT_NOFILE,
  // resolves the nodes, opens one keep-alive connection to each (bounded by
  // connect_timeout_ns) and starts the reactor thread. False with `error`
  // naming the node when one cannot be reached (or the limit when the pools
  // exceed it, or the header name that is not one).
  bool start(std::string* error);

  // One thread at a time (the issue thread); never blocks and never
  // allocates on the common path: writes request `index` on an idle
  // connection of the node the balance policy picks, or queues it until a
  // connection is free (asking the reactor for another one while the node
  // is below its ceiling). An index without a request, a cancelled client
  // or a node in backoff with no other node: the outcome is a failure at once.
  // `keep_body`: the outcome carries the body (accuracy-logged samples).
  // A request whose connection ended before any byte of its response (a
  // kept-alive connection the server closed as the request crossed it, a
  // connection it closed as it accepted it, a failed write) is sent once
  // more, POST or not: on a new connection, or on an established one when
  // the server takes no more; never twice, never after a byte of a
  // response. Its sent_ns is then that second write's.
  void send(uint64_t tag, uint32_t index, bool keep_body);

  // Every queued and in-flight request, and every later send(), fails as
  // Cancelled with `message`. Any thread.
  void cancel_all(const std::string& message);

  // Every request queued or in flight now fails as Cancelled with
  // `message`; later sends go out as usual. Any thread: between series
  // (requests of the last one that outlived it), not while sending.
  void cancel_outstanding(const std::string& message);

  // Requests sent but not yet handed to the sink (queued included).
  uint64_t outstanding() const;

  // Per-node statistics (kNodeStatsLength doubles per node, node after
  // node) into `out`. Any thread, any time.
  void copy_node_stats(double* out) const;

  HttpReactorCounts reactor_counts() const;

  // ---- Inline issuing (the issue thread, a Server series) ----
  // The reactor thread parks after its current turn, and wait_inline()
  // runs the turns on the calling thread, until end_inline(). False (the
  // reactor thread keeps them) when the client is not running or its
  // config says not to (inline_reactor).
  bool begin_inline();
  void end_inline();
  // Between begin_inline() and end_inline(): until `target_ns` (now_ns()
  // clock), reading responses, blocked in epoll until `spin_window_ns`
  // before it, then polling (yielding to other runnable threads between
  // polls until the last 20 us when `yield_while_spinning`), as
  // wait_until_ns waits. Returns the clock reading that ended it.
  int64_t wait_inline(int64_t target_ns, int64_t spin_window_ns, bool yield_while_spinning);

  // Stops the reactor, fails what is still outstanding as Cancelled
  // ("the client was closed"), closes every socket. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loadgen

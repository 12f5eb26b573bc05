// HttpClient::Impl (http_client.h), shared by the client's sources:
// http_client.cc (start, stop, the issue thread's send),
// http_client_pool.cc (connections: opening them as requests wait, handing
// requests to them, retries), http_client_reactor.cc (the reactor thread:
// events, responses, timers) and http_client_requests.cc (the request
// table). Linux only.
//
// Ownership of a connection follows its state (Conn::state):
//   Idle       in its node's idle list; whoever pops it under `mu` owns it.
//   Sending    the issue thread writes a request on it; the reactor ignores
//              its events until the state changes (level-triggered epoll
//              reports them again).
//   InFlight   the reactor owns it: reads the response, times it out.
//   Writing    the reactor finishes a partial write (EPOLLOUT), then reads.
//   Connecting / Closed   the reactor owns it (a Closed one waits in its
//              node's spare list to be opened again).
// The issue thread publishes a request's fields with a release store of
// InFlight after its write; the reactor reads them after an acquire load.
// Anything the issue thread cannot finish (partial or failed writes) goes to
// the reactor through `handoff` under `mu`, plus a wake of the eventfd; so
// does a node that needs another connection (`grow_requests`): only the
// reactor opens connections, the issue thread never waits for one.
// "The reactor" is a role: its turns run on the reactor thread, or, while
// the issue thread issues a Server series inline (begin_inline), on the
// issue thread as it waits for each due time; reactor_mu is held for every
// turn, so the reactor's members have one owner at a time.
#pragma once

#if defined(__linux__)

#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <array>
#include <atomic>
#include <climits>
#include <condition_variable>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "http_client.h"

namespace loadgen {

namespace http_internal {

// Offsets in a node's statistics slice (lib/net/node-stats.ts).
constexpr size_t kStatRequests = 0;
constexpr size_t kStatCompleted = 1;
constexpr size_t kStatFailed = 2;
constexpr size_t kStatSumNs = kStatFailed + kFailureKindCount;
constexpr size_t kStatMaxNs = kStatSumNs + 1;
constexpr size_t kStatMeasured = kStatMaxNs + 1;
constexpr size_t kStatBuckets = kStatMeasured + 1;
static_assert(kStatBuckets + kNodeStatsBuckets == kNodeStatsLength, "the layout of node-stats.ts");
static_assert(kStatMaxNs == kNodeStatsMaxOffset, "the layout of node-stats.ts");

// Bodies of non-2xx responses quoted in the failure message.
constexpr size_t kExcerptBytes = 200;

// A connection the server closes before answering anything, this soon after
// accepting it, was refused (a connection limit: accepted, then closed); one
// closed later went stale while idle (a keep-alive timeout).
constexpr int64_t kRefusedWithinNs = 1'000'000'000;

// A request refused by a connection limit (its connection closed unanswered,
// with other connections of the node open) is sent again without using up
// its one retry, this many times at most: a server that accepts slowly keeps
// refused connections connected in its backlog, and the request may cross
// one more before the client has learned the limit.
constexpr uint8_t kMaxLimitRefusals = 2;

// File descriptors left to the rest of the process (logs, Node's own, the
// probes' connections) when the pools are checked against RLIMIT_NOFILE.
constexpr uint64_t kReservedFiles = 100;

// A connection's kept body buffer larger than this is released when the
// connection is dropped (after a body over the limit, nothing more is kept).
constexpr size_t kKeptBodyCapacity = 64 * 1024;

inline void record_completed(double* slice, int64_t latency_ns) {
  const double ns = latency_ns > 1 ? static_cast<double>(latency_ns) : 1.0;
  slice[kStatCompleted] += 1;
  slice[kStatSumNs] += ns;
  if (ns > slice[kStatMaxNs]) slice[kStatMaxNs] = ns;
  slice[kStatMeasured] += 1;
  // The same arithmetic as node-stats.ts (log times the inverse step).
  static const double inv_log_step = 1.0 / std::log(1.01);
  const double b = std::floor(std::log(ns) * inv_log_step);
  const size_t bucket = b < static_cast<double>(kNodeStatsBuckets) ? static_cast<size_t>(b) : kNodeStatsBuckets - 1;
  slice[kStatBuckets + bucket] += 1;
}

inline void record_failed(double* slice, FailureKind kind) { slice[kStatFailed + static_cast<size_t>(kind)] += 1; }

inline std::string format_ms(int64_t ns) {
  if (ns % 1000000 == 0) return std::to_string(ns / 1000000);
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", static_cast<double>(ns) / 1e6);
  return text;
}

inline std::string excerpt(const std::vector<uint8_t>& body, uint64_t body_bytes) {
  const size_t n = std::min(body.size(), kExcerptBytes);
  std::string out(reinterpret_cast<const char*>(body.data()), n);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  if (body_bytes > n) out += "...";
  return out;
}

// A request's bytes in the table's arena: its line, then the rest.
struct Request {
  uint64_t offset = 0;
  uint32_t line_size = 0;  // 0: no request set at this index
  uint32_t rest_size = 0;
};

// The request table, indexed by QSL index, and one arena holding every
// request's bytes: two allocations per load instead of two per request.
// Shared by the clients of one SUT (HttpClient::share_requests): each
// thread's client reads the same bytes.
struct RequestTable {
  std::vector<Request> requests;
  std::vector<uint8_t> arena;
};

struct Pending {
  uint64_t tag;
  const Request* request;
  uint32_t index;
  bool keep_body;
  bool retried;  // already sent once, on a connection that ended before any byte of a response
  uint8_t refusals;  // times a connection limit refused it (kMaxLimitRefusals)
};

// A FIFO that allocates only when it grows past its largest size so far.
class PendingQueue {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  void push_back(const Pending& p) {
    grow_if_full();
    items_[(head_ + size_) & (items_.size() - 1)] = p;
    ++size_;
  }
  void push_front(const Pending& p) {
    grow_if_full();
    head_ = (head_ + items_.size() - 1) & (items_.size() - 1);
    items_[head_] = p;
    ++size_;
  }
  Pending pop_front() {
    const Pending p = items_[head_];
    head_ = (head_ + 1) & (items_.size() - 1);
    --size_;
    return p;
  }

 private:
  void grow_if_full() {
    if (size_ < items_.size()) return;
    std::vector<Pending> bigger(items_.empty() ? 64 : items_.size() * 2);
    for (size_t i = 0; i < size_; ++i) bigger[i] = items_[(head_ + i) & (items_.size() - 1)];
    items_.swap(bigger);
    head_ = 0;
  }
  std::vector<Pending> items_;
  size_t head_ = 0;
  size_t size_ = 0;
};

enum ConnState : uint8_t { kClosed, kConnecting, kIdle, kSending, kInFlight, kWriting };

struct Conn {
  uint32_t id = 0;
  uint32_t node = 0;
  int fd = -1;
  std::atomic<uint8_t> state{kClosed};
  // The request on it: written by whoever took the connection, read by the
  // reactor once it owns it.
  uint64_t tag = 0;
  const Request* request = nullptr;
  uint32_t index = 0;
  bool keep_body = false;
  int64_t sent_ns = 0;
  size_t written = 0;
  size_t total = 0;
  int write_errno = 0;  // the issue thread's failed write, for the reactor
  bool handed = false;  // handed over unwritten (reactor_writes): the reactor stamps sent_ns as it writes
  bool retried = false;
  uint8_t refusals = 0;
  bool got_bytes = false;
  bool headers_delivered = false;  // stream_bodies: on_headers ran for this response
  HttpResponseParser parser;
  std::vector<uint8_t> body;
  // Reactor only (and whoever owns it to write).
  bool served = false;       // has answered a response since it was opened
  int64_t opened_ns = 0;     // when its connect completed
  uint32_t generation = 0;  // of the fd; stale epoll events are dropped
  bool epoll_out = false;
  int64_t connect_deadline_ns = 0;
};

// A node's pool: connections open as requests wait for one, up to `ceiling`.
struct Node {
  HttpNodeAddress address;
  std::string host_line;
  sockaddr_storage addr{};
  socklen_t addr_len = 0;
  std::atomic<uint64_t> requests{0};
  // Under Impl::mu.
  std::vector<Conn*> idle;
  PendingQueue queue;
  // Retries that wait for a connection opened after theirs closed (see
  // retry_on_new_connection); taken by another one only when none is coming.
  PendingQueue fresh_queue;
  // Requests a connection limit refused: taken by a connection that has
  // answered (the limit let it in), by any other only while none has.
  PendingQueue refused_queue;
  uint32_t ceiling = 0;     // connections_per_node, lowered when the server takes no more
  uint32_t live = 0;        // connections not Closed (connecting ones included)
  uint32_t connecting = 0;
  uint32_t served_live = 0;  // live connections that have answered a response
  bool grow = false;        // in Impl::grow_requests
  // Requests on this node not yet handed to the sink; changed by both
  // threads, read under mu by the issue thread's balance policy.
  std::atomic<uint32_t> outstanding{0};
  int64_t backoff_until_ns = 0;
  std::string last_error;
  FailureKind last_error_kind = FailureKind::Connection;  // Timeout for a connect that timed out
  // Reactor only: Closed connections of this node, to be opened again.
  std::vector<Conn*> spare;
};

struct StatRecord {
  uint32_t node;
  int kind;  // -1: ok
  int64_t latency_ns;
};

inline std::string errno_text(int err) { return std::strerror(err); }

}  // namespace http_internal

struct HttpClient::Impl {
  using Conn = http_internal::Conn;
  using Node = http_internal::Node;
  using Pending = http_internal::Pending;
  using Request = http_internal::Request;
  using StatRecord = http_internal::StatRecord;
  using RequestTable = http_internal::RequestTable;

  HttpClientConfig config;
  HttpSink* sink;
  // The request table (http_internal::RequestTable), possibly shared with
  // other clients. Changed only while nothing is outstanding on any of them
  // (the binding checks), so the Request pointers of queued and in-flight
  // requests stay valid.
  std::shared_ptr<http_internal::RequestTable> table = std::make_shared<http_internal::RequestTable>();
  std::vector<std::unique_ptr<Node>> nodes;
  // Every connection object so far (the reactor adds them; ids index it).
  std::vector<std::unique_ptr<Conn>> conns;

  std::mutex mu;
  bool cancelled = false;  // under mu
  std::string cancel_message;
  std::string abandon_message;  // under mu (cancel_outstanding)
  uint32_t rotate = 0;
  std::vector<Conn*> handoff;
  std::vector<uint32_t> grow_requests;  // nodes (reserved for all: no allocation on send)
  std::atomic<bool> cancel_flag{false};
  std::atomic<bool> abandon_flag{false};
  std::atomic<bool> stopping{false};
  std::atomic<bool> stopped{false};
  bool started = false;

  int epfd = -1;
  int wakefd = -1;
  std::thread reactor;
  static constexpr int kMaxEvents = 256;
  // Whoever runs reactor turns holds reactor_mu for each: the reactor
  // thread, or the issue thread while it issues a Server series inline
  // (begin_inline .. end_inline: it reads the responses while it waits for
  // the next due time, and the reactor thread parks on park_cv). The
  // "reactor only" members below are those of the lock's holder.
  std::mutex reactor_mu;
  std::mutex park_mu;
  std::condition_variable park_cv;
  std::atomic<bool> inline_wanted{false};
  bool has_epoll_pwait2 = true;  // under reactor_mu: false once the kernel said ENOSYS
  std::atomic<uint64_t> outstanding{0};

  mutable std::mutex stats_mu;
  std::vector<double> stats;  // nodes x kNodeStatsLength; requests come from Node::requests

  // The reactor's waiting (run_reactor): it polls while a request sent less
  // than its poll budget ago is outstanding; a send that finds it blocked
  // wakes it through the eventfd, so its wake-up overlaps the server's time.
  std::atomic<bool> reactor_blocked{false};
  std::atomic<int64_t> last_send_ns{0};
  std::atomic<int64_t> poll_budget_ns{0};  // the reactor's; read by send() and reactor_counts()
  std::atomic<uint64_t> polled_events{0};
  std::atomic<uint64_t> inline_events{0};
  std::atomic<uint64_t> blocking_waits{0};
  std::atomic<uint64_t> send_wakes{0};
  std::atomic<uint64_t> opened_connections{0};
  std::atomic<uint64_t> refused_connections{0};
  std::atomic<uint64_t> retried_requests{0};
  std::atomic<uint64_t> responses{0};        // outcomes handed to the sink
  std::atomic<int64_t> reactor_cpu_ns{0};    // the reactor thread's CPU time, refreshed every kCpuReadNs
  std::atomic<uint64_t> handed_writes{0};    // reactor_writes: requests the reactor wrote for send()
  // reactor_writes: set after a push to `handoff`; the reactor takes the
  // handoffs when it finds it set after a wait (the Dekker pair with
  // reactor_blocked, both seq_cst: either the reactor sees it before it
  // blocks, or send() sees it blocked and wakes it).
  std::atomic<bool> handoff_flag{false};
  static constexpr int64_t kCpuReadNs = 1'000'000;
  int64_t last_cpu_read_ns = 0;              // reactor thread only

  // Reactor only.
  static constexpr size_t kRecentResponses = 32;
  std::array<int64_t, kRecentResponses> recent_response_ns{};
  size_t recent_responses = 0;
  std::vector<StatRecord> stat_batch;
  std::vector<uint8_t> read_buffer;
  HttpOutcome outcome;
  int64_t next_timer_ns = INT64_MAX;

  Impl(HttpClientConfig c, HttpSink* s) : config(std::move(c)), sink(s) {}

  // ---- Shared helpers ----

  void wake();

  // A failure before the request reached a connection, on the calling thread.
  void fail_now(uint64_t tag, uint32_t index, int node, FailureKind kind, std::string message);

  std::string node_text(uint32_t node) const { return "node " + nodes[node]->address.label + ": "; }

  // Picks a node for the next request (under mu); -1 when every node is in backoff.
  int pick_node(int64_t now);

  // Writes what it can of the connection's request from `written` on.
  // Returns the bytes written by this call, or -1 with errno.
  ssize_t write_some(Conn* c);

  // Sets a connection up for a request (the caller owns it).
  void load(Conn* c, const Pending& p);

  // ---- The issue thread ----

  // After a request went out whole: a reactor blocked in epoll_wait is woken
  // to poll for its response (the Dekker pair with run_reactor's
  // reactor_blocked store and last_send_ns load, both seq_cst: either this
  // sees it blocked, or it sees this send and polls).
  void note_send(int64_t sent);

  void send(uint64_t tag, uint32_t index, bool keep_body);
  // reactor_writes: after `handoff` got a connection to write, the reactor
  // is told (handoff_flag) and, if it blocked since send() looked, woken.
  void hand_to_reactor();

  // ---- The reactor ----

  void set_epoll_out(Conn* c, bool on);

  void note_timer(int64_t at) { next_timer_ns = std::min(next_timer_ns, at); }

  // Opens the connection's socket and starts a non-blocking connect.
  // Returns 0 or the errno of a connect that failed at once.
  int open_socket(Conn* c);

  void register_conn(Conn* c, bool want_out);

  void close_socket(Conn* c);

  // Opens as many connections as the node's waiting requests lack, up to
  // its ceiling (none once cancelled or stopping).
  void open_connections(uint32_t node);

  // A Closed connection object of the node (a new one when none is spare).
  Conn* spare_conn(uint32_t node);

  // Starts the connect of a connection counted as live and connecting.
  void start_connect(Conn* c);

  // A connect failed (refused, reset, timed out, or closed by the server at
  // once): with other connections live, the node's ceiling comes down to
  // them and its requests wait for them; with none, the node goes into
  // backoff and its waiting requests fail as Connection (Timeout when the
  // connect timed out).
  void connect_failed(Conn* c, int err);

  void connected(Conn* c, uint32_t events);

  // The next request for a free connection of `node` (under mu): one a
  // connection limit refused when `c` has answered (or none has), a retry
  // waiting for a new connection when `c` is one (or when none is coming),
  // else the queue's first. False when none waits that `c` may take.
  bool take_request(Node& node, const Conn* c, Pending* out);

  // The reactor owns an open, free connection: it sends the next waiting
  // request of its node on it, or puts it in the idle list.
  void make_available(Conn* c);

  // Idle connections take the node's waiting requests they may take (the
  // last idle first; a refused request skips those that have not answered).
  void hand_out_idle(uint32_t node);

  // Closes an open connection and forgets it (spare); `refused`: the server
  // closed it before answering anything, soon after accepting it, so the
  // node's ceiling comes down to what is left. Then opens what the waiting
  // requests need, and hands a refused request to an idle connection that
  // may take it now.
  void drop_conn(Conn* c, bool refused);

  // Whether a connection the server closed counts as refused (drop_conn):
  // it never answered, and was first used (`used_ns`: its request sent, or
  // now for an idle one) soon after it opened. However late the close comes
  // (a server that accepts slowly), a connection used at once and closed
  // unanswered was refused; one idle for long before may have timed out.
  bool closed_as_refused(const Conn* c, int64_t used_ns) const;

  // Writes the rest of the request (reactor-owned connection).
  void continue_write(Conn* c);

  void write_failed(Conn* c, int err);

  // The connection ended before any byte of a response (the server closed
  // a kept-alive connection as the request crossed it, or a connection it
  // just accepted; a write that failed): the request is sent once more, on
  // a new connection when this one had served responses (the next kept-alive
  // one may be as stale), on any other when it had not (the server takes no
  // more connections: it is refused, drop_conn). Refused with other
  // connections of the node open (a connection limit), it waits for one that
  // has answered, and that does not use up its one retry (kMaxLimitRefusals
  // times at most, and only before that retry: a request the server itself
  // closes connections on goes out four times at most, three once a
  // connection has answered). Its sent_ns restarts with that write; its latency in the
  // run still runs from its scheduled time. False (the caller fails the
  // request) after a byte of a response, on a second attempt, or once
  // cancelled.
  bool retry_on_new_connection(Conn* c);

  // The reactor takes over what the issue thread could not finish.
  void take_handoffs();

  // Nodes the issue thread queued requests for and that may open more connections.
  void take_grow_requests();

  void deliver(HttpOutcome& out);

  void add_stat(uint32_t node, int kind, int64_t latency_ns);

  void flush_stats();

  void deliver_failure(uint64_t tag, uint32_t index, uint32_t node, FailureKind kind, const std::string& message);

  // The connection's request failed: hands the failure to the sink and
  // drops the connection.
  void fail_conn(Conn* c, FailureKind kind, std::string message);

  // The response is complete (`done_ns`): the outcome, then the connection
  // is free again (or closed when the response said so).
  void finish(Conn* c, int64_t done_ns, size_t extra_bytes);

  // stream_bodies: the body bytes this read brought go to the sink now, with
  // the read's stamp (a 2xx response; an error status keeps its excerpt).
  void deliver_streamed(Conn* c, int64_t read_ns);

  void on_readable(Conn* c);

  // Data or a close on an idle connection (a server's keep-alive timeout):
  // nothing is expected there, so it is dropped before a request uses it.
  void on_idle_event(Conn* c);

  // Returns false when the event must wait (the issue thread owns the connection).
  bool on_event(Conn* c, uint32_t events);

  // Fails every queued and in-flight request as Cancelled (cancel_all, cancel_outstanding).
  void cancel_everything(const std::string& message);

  void check_timers();

  // Every kRecentResponses responses (request written -> last byte read),
  // the poll budget becomes twice their median, or 0 (block at once) when
  // that exceeds response_poll_ns: polling for a slow server burns a CPU
  // for a wake-up that is small beside its response time.
  void learn_response_time(int64_t ns);

  // Whether a request sent less than the poll budget ago is outstanding.
  bool should_poll() const;

  // Waits for events at most `timeout_ns` (< 0: no limit, 0: poll);
  // millisecond kernels round the timeout up (`round_up`) or down.
  int wait_events(epoll_event* events, int max_events, int64_t timeout_ns, bool round_up);

  // The events of one wait, then cancels, timers and stats. True when an
  // event must wait for the issue thread (a connection it is writing on).
  bool handle_events(const epoll_event* events, int n, bool polling, bool inline_turn);

  // Set on a thread while it runs a turn's events (HttpClient::in_reactor_turn).
  static thread_local bool in_turn;

  // One turn of the reactor thread: it polls or blocks (announced) until
  // the next timer, then handles what came.
  void reactor_thread_turn(epoll_event* events, int max_events);

  void run_reactor();

  // The reactor thread's CPU time into reactor_cpu_ns (its thread only).
  void read_reactor_cpu();

  // ---- Inline issuing (the issue thread runs the turns) ----

  // The reactor thread parks after its current turn; false when the client
  // is not running.
  bool begin_inline();
  // The reactor thread takes the turns again.
  void end_inline();
  // Until `target_ns`, running turns: blocked in epoll until `spin_window_ns`
  // before it, then polling (yielding between polls until the last
  // kHardSpinNs when asked). Returns the clock reading that ended it.
  int64_t wait_inline(int64_t target_ns, int64_t spin_window_ns, bool yield_while_spinning);

  // ---- Start and stop ----

  bool resolve(Node& node, std::vector<sockaddr_storage>* out, std::vector<socklen_t>* lens, std::string* error);

  // Connects `group` (connections of one node, sockets opened) within the
  // connect timeout; 0 or the first errno (ETIMEDOUT when time ran out).
  int await_connects(const std::vector<Conn*>& group);

  std::string connect_error(const Node& node, int err) const;

  bool start(std::string* error);

  bool fail_start();

  void cancel_all(const std::string& message);

  void cancel_outstanding(const std::string& message);

  void stop();

  HttpReactorCounts reactor_counts() const;

  void copy_node_stats(double* out) const;
};

}  // namespace loadgen

#endif  // __linux__

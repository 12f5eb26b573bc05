// HttpClient (http_client.h): keep-alive connections written by the issue
// thread and read by one epoll reactor thread.
//
// Ownership of a connection follows its state (Conn::state):
//   Idle       in its node's idle list; whoever pops it under `mu` owns it.
//   Sending    the issue thread writes a request on it; the reactor ignores
//              its events until the state changes (level-triggered epoll
//              reports them again).
//   InFlight   the reactor owns it: reads the response, times it out.
//   Writing    the reactor finishes a partial write (EPOLLOUT), then reads.
//   Connecting / Closed   the reactor owns it (reconnect, backoff timer).
// The issue thread publishes a request's fields with a release store of
// InFlight after its write; the reactor reads them after an acquire load.
// Anything the issue thread cannot finish (partial or failed writes) goes to
// the reactor through `handoff` under `mu`, plus a wake of the eventfd.
#include "http_client.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "clock.h"
#include "wait.h"

#if defined(__linux__)
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#endif

namespace loadgen {

#if defined(__linux__)

namespace {

// Offsets in a node's statistics slice (lib/net/node-stats.ts).
constexpr size_t kStatRequests = 0;
constexpr size_t kStatCompleted = 1;
constexpr size_t kStatFailed = 2;
constexpr size_t kStatSumNs = kStatFailed + kFailureKindCount;
constexpr size_t kStatMaxNs = kStatSumNs + 1;
constexpr size_t kStatMeasured = kStatMaxNs + 1;
constexpr size_t kStatBuckets = kStatMeasured + 1;
static_assert(kStatBuckets + kNodeStatsBuckets == kNodeStatsLength, "the layout of node-stats.ts");

// Bodies of non-2xx responses quoted in the failure message.
constexpr size_t kExcerptBytes = 200;

void record_completed(double* slice, int64_t latency_ns) {
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

void record_failed(double* slice, FailureKind kind) { slice[kStatFailed + static_cast<size_t>(kind)] += 1; }

std::string format_ms(int64_t ns) {
  if (ns % 1000000 == 0) return std::to_string(ns / 1000000);
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", static_cast<double>(ns) / 1e6);
  return text;
}

std::string excerpt(const std::vector<uint8_t>& body, uint64_t body_bytes) {
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

struct Pending {
  uint64_t tag;
  const Request* request;
  uint32_t index;
  bool keep_body;
  bool retried;  // already sent once on a kept-alive connection the server had closed
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
  bool retried = false;
  bool reused = false;  // has served a response (see retry_on_new_connection)
  bool got_bytes = false;
  HttpResponseParser parser;
  std::vector<uint8_t> body;
  // Reactor only.
  uint32_t generation = 0;  // of the fd; stale epoll events are dropped
  bool epoll_out = false;
  int64_t connect_deadline_ns = 0;
  int64_t retry_at_ns = 0;  // a reconnect after backoff (0: none)
};

struct Node {
  HttpNodeAddress address;
  std::string host_line;
  sockaddr_storage addr{};
  socklen_t addr_len = 0;
  std::atomic<uint64_t> requests{0};
  // Under Impl::mu.
  std::vector<Conn*> idle;
  PendingQueue queue;
  // Requests on this node not yet handed to the sink; changed by both
  // threads, read under mu by the issue thread's balance policy.
  std::atomic<uint32_t> outstanding{0};
  int64_t backoff_until_ns = 0;
  std::string last_error;
};

struct StatRecord {
  uint32_t node;
  int kind;  // -1: ok
  int64_t latency_ns;
};

std::string errno_text(int err) { return std::strerror(err); }

}  // namespace

struct HttpClient::Impl {
  HttpClientConfig config;
  HttpSink* sink;
  // The request table, indexed by QSL index, and one arena holding every
  // request's bytes: two allocations per load instead of two per request.
  // Changed only while nothing is outstanding (the binding checks), so the
  // Request pointers of queued and in-flight requests stay valid.
  std::vector<Request> requests;
  std::vector<uint8_t> arena;
  std::vector<std::unique_ptr<Node>> nodes;
  std::vector<std::unique_ptr<Conn>> conns;

  std::mutex mu;
  bool cancelled = false;  // under mu
  std::string cancel_message;
  uint32_t rotate = 0;
  std::vector<Conn*> handoff;
  std::atomic<bool> cancel_flag{false};
  std::atomic<bool> stopping{false};
  std::atomic<bool> stopped{false};
  bool started = false;

  int epfd = -1;
  int wakefd = -1;
  std::thread reactor;
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
  std::atomic<uint64_t> blocking_waits{0};
  std::atomic<uint64_t> send_wakes{0};

  // Reactor only.
  static constexpr size_t kRecentResponses = 32;
  std::array<int64_t, kRecentResponses> recent_response_ns{};
  size_t recent_responses = 0;
  std::vector<StatRecord> stat_batch;
  std::vector<uint8_t> read_buffer;
  HttpOutcome outcome;
  int64_t next_timer_ns = INT64_MAX;
  bool cancel_done = false;

  Impl(HttpClientConfig c, HttpSink* s) : config(std::move(c)), sink(s) {}

  // ---- Shared helpers ----

  void wake() {
    const uint64_t one = 1;
    ssize_t rc;
    do rc = ::write(wakefd, &one, sizeof(one));
    while (rc < 0 && errno == EINTR);
  }

  // A failure before the request reached a connection, on the calling thread.
  void fail_now(uint64_t tag, uint32_t index, int node, FailureKind kind, std::string message) {
    HttpOutcome out;
    out.tag = tag;
    out.index = index;
    out.node = node >= 0 ? static_cast<uint32_t>(node) : 0;
    out.done_ns = now_ns();
    out.kind = kind;
    out.message = std::move(message);
    if (node >= 0) {
      std::lock_guard<std::mutex> lock(stats_mu);
      record_failed(&stats[static_cast<size_t>(node) * kNodeStatsLength], kind);
    }
    sink->on_outcome(out);
    outstanding.fetch_sub(1, std::memory_order_acq_rel);
  }

  std::string node_text(uint32_t node) const { return "node " + nodes[node]->address.label + ": "; }

  // Picks a node for the next request (under mu); -1 when every node is in backoff.
  int pick_node(int64_t now) {
    const uint32_t n = static_cast<uint32_t>(nodes.size());
    int best = -1;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t k = (rotate + i) % n;
      const Node& node = *nodes[k];
      if (node.backoff_until_ns > now) continue;
      if (best < 0) {
        best = static_cast<int>(k);
        if (!config.least_outstanding) break;
      } else if (node.outstanding.load(std::memory_order_relaxed) <
                 nodes[static_cast<size_t>(best)]->outstanding.load(std::memory_order_relaxed)) {
        best = static_cast<int>(k);
      }
    }
    if (best >= 0) rotate = (static_cast<uint32_t>(best) + 1) % n;
    return best;
  }

  // Writes what it can of the connection's request from `written` on.
  // Returns the bytes written by this call, or -1 with errno.
  ssize_t write_some(Conn* c) {
    const Node& node = *nodes[c->node];
    const Request& r = *c->request;
    uint8_t* line = arena.data() + r.offset;
    iovec parts[3] = {{line, r.line_size},
                      {const_cast<char*>(node.host_line.data()), node.host_line.size()},
                      {line + r.line_size, r.rest_size}};
    size_t skip = c->written;
    int first = 0;
    while (first < 3 && skip >= parts[first].iov_len) skip -= parts[first++].iov_len;
    if (first == 3) return 0;
    parts[first].iov_base = static_cast<char*>(parts[first].iov_base) + skip;
    parts[first].iov_len -= skip;
    msghdr msg{};
    msg.msg_iov = parts + first;
    msg.msg_iovlen = static_cast<size_t>(3 - first);
    ssize_t n;
    do n = ::sendmsg(c->fd, &msg, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n > 0) c->written += static_cast<size_t>(n);
    return n;
  }

  // Sets a connection up for a request (the caller owns it).
  void load(Conn* c, const Pending& p) {
    c->tag = p.tag;
    c->request = p.request;
    c->index = p.index;
    c->keep_body = p.keep_body;
    c->retried = p.retried;
    c->written = 0;
    c->total = p.request->line_size + nodes[c->node]->host_line.size() + p.request->rest_size;
    c->write_errno = 0;
    c->got_bytes = false;
    // Without keep_body, enough of the body for a failure's excerpt. Streamed
    // bodies are kept per read only (deliver_streamed empties them).
    c->parser.reset(&c->body, p.keep_body || config.stream_bodies ? SIZE_MAX : kExcerptBytes + 1, config.max_body_bytes);
  }

  // ---- The issue thread ----

  // After a request went out whole: a reactor blocked in epoll_wait is woken
  // to poll for its response (the Dekker pair with run_reactor's
  // reactor_blocked store and last_send_ns load, both seq_cst: either this
  // sees it blocked, or it sees this send and polls).
  void note_send(int64_t sent) {
    if (poll_budget_ns.load(std::memory_order_relaxed) <= 0) return;
    last_send_ns.store(sent, std::memory_order_seq_cst);
    if (reactor_blocked.load(std::memory_order_seq_cst) && reactor_blocked.exchange(false, std::memory_order_seq_cst)) {
      send_wakes.fetch_add(1, std::memory_order_relaxed);
      wake();
    }
  }

  void send(uint64_t tag, uint32_t index, bool keep_body) {
    outstanding.fetch_add(1, std::memory_order_acq_rel);
    if (stopped.load(std::memory_order_acquire)) return fail_now(tag, index, -1, FailureKind::Cancelled, "the client was closed");
    if (!started) return fail_now(tag, index, -1, FailureKind::Connection, "the client was not started");
    if (index >= requests.size() || requests[index].line_size == 0)
      return fail_now(tag, index, -1, FailureKind::Connection, "no request was set for index " + std::to_string(index));
    const Pending pending{tag, &requests[index], index, keep_body, false};
    Conn* c = nullptr;
    int node;
    {
      std::unique_lock<std::mutex> lock(mu);
      if (cancelled) {
        std::string message = cancel_message;
        lock.unlock();
        return fail_now(tag, index, -1, FailureKind::Cancelled, std::move(message));
      }
      node = pick_node(now_ns());
      if (node < 0) {
        // Every node is in backoff: report the one that comes back first.
        size_t first = 0;
        for (size_t k = 1; k < nodes.size(); ++k)
          if (nodes[k]->backoff_until_ns < nodes[first]->backoff_until_ns) first = k;
        std::string message = node_text(static_cast<uint32_t>(first)) + nodes[first]->last_error;
        lock.unlock();
        nodes[first]->requests.fetch_add(1, std::memory_order_relaxed);
        return fail_now(tag, index, static_cast<int>(first), FailureKind::Connection, std::move(message));
      }
      Node& n = *nodes[static_cast<size_t>(node)];
      n.requests.fetch_add(1, std::memory_order_relaxed);
      n.outstanding.fetch_add(1, std::memory_order_relaxed);
      if (n.idle.empty()) {
        n.queue.push_back(pending);
        return;
      }
      c = n.idle.back();
      n.idle.pop_back();
      c->state.store(kSending, std::memory_order_relaxed);
    }
    load(c, pending);
    c->sent_ns = now_ns();
    const ssize_t n = write_some(c);
    if (n >= 0 && c->written == c->total) {
      const int64_t sent = c->sent_ns;  // the reactor owns the connection after the store
      c->state.store(kInFlight, std::memory_order_release);
      // A cancel_all that ran meanwhile may have missed this request.
      if (cancel_flag.load(std::memory_order_acquire)) {
        wake();
      } else {
        note_send(sent);
      }
      return;
    }
    c->write_errno = n < 0 && errno != EAGAIN && errno != EWOULDBLOCK ? errno : 0;
    {
      std::lock_guard<std::mutex> lock(mu);
      handoff.push_back(c);
    }
    wake();
  }

  // ---- The reactor ----

  void set_epoll_out(Conn* c, bool on) {
    if (c->epoll_out == on) return;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | (on ? uint32_t{EPOLLOUT} : 0u);
    ev.data.u64 = (uint64_t{c->generation} << 32) | c->id;
    epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->epoll_out = on;
  }

  void note_timer(int64_t at) { next_timer_ns = std::min(next_timer_ns, at); }

  // Opens the connection's socket and starts a non-blocking connect.
  // Returns 0 or the errno of a connect that failed at once.
  int open_socket(Conn* c) {
    const Node& node = *nodes[c->node];
    c->fd = ::socket(node.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) return errno;
    const int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    ++c->generation;
    c->reused = false;
    if (::connect(c->fd, reinterpret_cast<const sockaddr*>(&node.addr), node.addr_len) != 0 && errno != EINPROGRESS) {
      const int err = errno;
      ::close(c->fd);
      c->fd = -1;
      return err;
    }
    return 0;
  }

  void register_conn(Conn* c, bool want_out) {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | (want_out ? uint32_t{EPOLLOUT} : 0u);
    ev.data.u64 = (uint64_t{c->generation} << 32) | c->id;
    epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev);
    c->epoll_out = want_out;
  }

  void close_socket(Conn* c) {
    if (c->fd >= 0) {
      epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, nullptr);
      ::close(c->fd);
      c->fd = -1;
    }
    c->state.store(kClosed, std::memory_order_relaxed);
  }

  void reconnect(Conn* c) {
    if (cancel_flag.load(std::memory_order_acquire) || stopping.load(std::memory_order_acquire)) return;
    const int err = open_socket(c);
    if (err != 0) return connect_failed(c, err);
    c->state.store(kConnecting, std::memory_order_relaxed);
    register_conn(c, true);
    c->connect_deadline_ns = now_ns() + config.connect_timeout_ns;
    note_timer(c->connect_deadline_ns);
  }

  void connect_failed(Conn* c, int err) {
    close_socket(c);
    const int64_t now = now_ns();
    c->retry_at_ns = now + config.node_backoff_ns;
    note_timer(c->retry_at_ns);
    std::vector<Pending> orphans;
    std::string message;
    {
      std::lock_guard<std::mutex> lock(mu);
      Node& node = *nodes[c->node];
      node.backoff_until_ns = now + config.node_backoff_ns;
      node.last_error = err == ETIMEDOUT ? "connect: no connection within " + format_ms(config.connect_timeout_ns) + " ms"
                                         : "connect: " + errno_text(err);
      // With no connection left, what waits for this node cannot be sent.
      bool any_open = false;
      for (const auto& other : conns)
        if (other->node == c->node && other->state.load(std::memory_order_relaxed) != kClosed) any_open = true;
      if (!any_open) {
        while (!node.queue.empty()) orphans.push_back(node.queue.pop_front());
        node.outstanding.fetch_sub(static_cast<uint32_t>(orphans.size()), std::memory_order_relaxed);
        message = node_text(c->node) + node.last_error;
      }
    }
    for (const Pending& p : orphans) deliver_failure(p.tag, p.index, c->node, FailureKind::Connection, message);
  }

  void connected(Conn* c) {
    set_epoll_out(c, false);
    c->retry_at_ns = 0;
    {
      std::lock_guard<std::mutex> lock(mu);
      nodes[c->node]->backoff_until_ns = 0;
    }
    make_available(c);
  }

  // The reactor owns an open, free connection: it sends the next queued
  // request of its node on it, or puts it in the idle list.
  void make_available(Conn* c) {
    Pending next;
    {
      std::lock_guard<std::mutex> lock(mu);
      Node& node = *nodes[c->node];
      if (node.queue.empty()) {
        c->state.store(kIdle, std::memory_order_relaxed);
        node.idle.push_back(c);
        return;
      }
      next = node.queue.pop_front();
    }
    load(c, next);
    c->state.store(kInFlight, std::memory_order_relaxed);
    c->sent_ns = now_ns();
    last_send_ns.store(c->sent_ns, std::memory_order_relaxed);
    continue_write(c);
  }

  // Writes the rest of the request (reactor-owned connection).
  void continue_write(Conn* c) {
    const ssize_t n = write_some(c);
    if (n >= 0 && c->written == c->total) {
      set_epoll_out(c, false);
      c->state.store(kInFlight, std::memory_order_relaxed);
      return;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return write_failed(c, errno);
    c->state.store(kWriting, std::memory_order_relaxed);
    set_epoll_out(c, true);
  }

  void write_failed(Conn* c, int err) {
    if (retry_on_new_connection(c)) return;
    fail_conn(c, FailureKind::Connection, node_text(c->node) + "write: " + errno_text(err));
  }

  // A kept-alive connection the server closed while the request was on its
  // way (the close crossed the request: nothing of a response came back)
  // is the keep-alive race every HTTP client meets; the request is sent
  // once more on another connection (its sent_ns then restarts), but only
  // where that cannot make the server do a sample's work twice (RFC 9110
  // 9.2.2): no byte of it was written, or it is a GET/HEAD. A POST that
  // went out whole may have been read: it fails (each query goes to a node
  // once). Returns false when no resend applies (a fresh connection, a
  // second attempt, response bytes seen): the caller fails the request.
  bool retry_on_new_connection(Conn* c) {
    if (!c->reused || c->got_bytes || c->retried || cancel_flag.load(std::memory_order_acquire)) return false;
    const char* line = reinterpret_cast<const char*>(arena.data() + c->request->offset);
    const uint32_t line_size = c->request->line_size;
    const bool idempotent = (line_size >= 4 && std::memcmp(line, "GET ", 4) == 0) ||
                            (line_size >= 5 && std::memcmp(line, "HEAD ", 5) == 0);
    if (c->written != 0 && !idempotent) return false;
    const Pending again{c->tag, c->request, c->index, c->keep_body, true};
    Conn* other = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu);
      Node& node = *nodes[c->node];
      if (node.idle.empty()) {
        node.queue.push_front(again);
      } else {
        other = node.idle.back();
        node.idle.pop_back();
        other->state.store(kInFlight, std::memory_order_relaxed);
      }
    }
    close_socket(c);
    reconnect(c);
    if (other != nullptr) {
      load(other, again);
      other->sent_ns = now_ns();
      continue_write(other);
    }
    return true;
  }

  // The reactor takes over what the issue thread could not finish.
  void take_handoffs() {
    std::vector<Conn*> taken;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (handoff.empty()) return;
      taken.swap(handoff);
    }
    for (Conn* c : taken) {
      c->state.store(kWriting, std::memory_order_relaxed);
      if (c->write_errno != 0) {
        write_failed(c, c->write_errno);
      } else {
        continue_write(c);
      }
    }
    // Keep the vector's capacity for the next time.
    std::lock_guard<std::mutex> lock(mu);
    if (handoff.empty()) {
      taken.clear();
      handoff.swap(taken);
    }
  }

  void deliver(HttpOutcome& out) {
    sink->on_outcome(out);
    outstanding.fetch_sub(1, std::memory_order_acq_rel);
  }

  void add_stat(uint32_t node, int kind, int64_t latency_ns) {
    if (latency_ns > 0) learn_response_time(latency_ns);
    if (stat_batch.size() == stat_batch.capacity()) flush_stats();
    stat_batch.push_back(StatRecord{node, kind, latency_ns});
  }

  void flush_stats() {
    if (stat_batch.empty()) return;
    std::lock_guard<std::mutex> lock(stats_mu);
    for (const StatRecord& r : stat_batch) {
      double* slice = &stats[r.node * kNodeStatsLength];
      if (r.kind < 0) {
        record_completed(slice, r.latency_ns);
      } else {
        record_failed(slice, static_cast<FailureKind>(r.kind));
      }
    }
    stat_batch.clear();
  }

  void deliver_failure(uint64_t tag, uint32_t index, uint32_t node, FailureKind kind, const std::string& message) {
    HttpOutcome& out = outcome;
    out.tag = tag;
    out.index = index;
    out.node = node;
    out.sent_ns = 0;
    out.done_ns = now_ns();
    out.status = 0;
    out.ok = false;
    out.kind = kind;
    out.message = message;
    out.body.clear();
    add_stat(node, static_cast<int>(kind), 0);
    deliver(out);
  }

  // The connection's request failed: closes it (reconnecting unless
  // cancelled) and hands the failure to the sink.
  void fail_conn(Conn* c, FailureKind kind, std::string message) {
    HttpOutcome& out = outcome;
    out.tag = c->tag;
    out.index = c->index;
    out.node = c->node;
    out.sent_ns = c->written > 0 ? c->sent_ns : 0;
    out.done_ns = now_ns();
    out.status = c->parser.state() == HttpResponseParser::State::Head ? 0 : c->parser.status();
    out.ok = false;
    out.kind = kind;
    out.message = std::move(message);
    out.body.clear();
    add_stat(c->node, static_cast<int>(kind), 0);
    close_socket(c);
    nodes[c->node]->outstanding.fetch_sub(1, std::memory_order_relaxed);
    deliver(out);
    reconnect(c);
  }

  // The response is complete (`done_ns`): the outcome, then the connection
  // is free again (or closed when the response said so).
  void finish(Conn* c, int64_t done_ns, size_t extra_bytes) {
    HttpResponseParser& p = c->parser;
    HttpOutcome& out = outcome;
    out.tag = c->tag;
    out.index = c->index;
    out.node = c->node;
    out.sent_ns = c->sent_ns;
    out.done_ns = done_ns;
    out.status = p.status();
    out.message.clear();
    out.body.clear();
    const bool write_done = c->written == c->total;
    if (extra_bytes > 0) {
      out.ok = false;
      out.kind = FailureKind::MalformedResponse;
      out.message = node_text(c->node) + std::to_string(extra_bytes) + " bytes after the end of the response";
    } else if (p.status() >= 200 && p.status() < 300) {
      out.ok = true;
      if (c->keep_body) out.body.swap(c->body);
    } else {
      out.ok = false;
      out.kind = FailureKind::HttpStatus;
      out.message = node_text(c->node) + "HTTP " + std::to_string(p.status());
      if (p.body_bytes() > 0) out.message += ": " + excerpt(c->body, p.body_bytes());
    }
    add_stat(c->node, out.ok ? -1 : static_cast<int>(out.kind), done_ns - c->sent_ns);
    const bool reusable = extra_bytes == 0 && write_done && p.keep_alive();
    if (!reusable) close_socket(c);
    // Before the sink: a send it lets happen sees this node's new count.
    nodes[c->node]->outstanding.fetch_sub(1, std::memory_order_relaxed);
    deliver(out);
    if (reusable) {
      c->reused = true;
      make_available(c);
    } else {
      reconnect(c);
    }
  }

  // stream_bodies: the body bytes this read brought go to the sink now, with
  // the read's stamp (a 2xx response; an error status keeps its excerpt).
  void deliver_streamed(Conn* c, int64_t read_ns) {
    if (c->body.empty()) return;
    const int status = c->parser.status();
    if (status < 200 || status > 299) {
      if (c->body.size() > kExcerptBytes + 1) c->body.resize(kExcerptBytes + 1);
      return;
    }
    HttpBodyChunk chunk;
    chunk.tag = c->tag;
    chunk.index = c->index;
    chunk.node = c->node;
    chunk.read_ns = read_ns;
    chunk.data = c->body.data();
    chunk.size = c->body.size();
    sink->on_body(chunk);
    c->body.clear();
  }

  void on_readable(Conn* c) {
    for (;;) {
      ssize_t n;
      do n = ::read(c->fd, read_buffer.data(), read_buffer.size());
      while (n < 0 && errno == EINTR);
      const int64_t read_ns = now_ns();
      if (n > 0) {
        c->got_bytes = true;
        const size_t used = c->parser.feed(read_buffer.data(), static_cast<size_t>(n));
        if (config.stream_bodies) deliver_streamed(c, read_ns);
        const auto state = c->parser.state();
        if (state == HttpResponseParser::State::Done) return finish(c, read_ns, static_cast<size_t>(n) - used);
        if (state == HttpResponseParser::State::Error)
          return fail_conn(c, FailureKind::MalformedResponse,
                           node_text(c->node) + "malformed response: " + c->parser.error());
        if (static_cast<size_t>(n) < read_buffer.size()) return;
        continue;
      }
      if (n == 0) {
        c->parser.end_of_stream();
        if (c->parser.state() == HttpResponseParser::State::Done) return finish(c, read_ns, 0);
        if (retry_on_new_connection(c)) return;
        return fail_conn(c, FailureKind::Connection,
                         node_text(c->node) + (c->got_bytes ? "connection closed mid-response"
                                                            : "connection closed before a response"));
      }
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == ECONNRESET && retry_on_new_connection(c)) return;
      return fail_conn(c, FailureKind::Connection, node_text(c->node) + "read: " + errno_text(errno));
    }
  }

  // Data or a close on an idle connection: nothing is expected there, so it
  // is closed and opened again.
  void on_idle_event(Conn* c) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (c->state.load(std::memory_order_relaxed) != kIdle) return;  // the issue thread took it
      auto& idle = nodes[c->node]->idle;
      idle.erase(std::find(idle.begin(), idle.end(), c));
      c->state.store(kClosed, std::memory_order_relaxed);
    }
    close_socket(c);
    reconnect(c);
  }

  // Returns false when the event must wait (the issue thread owns the connection).
  bool on_event(Conn* c, uint32_t events) {
    switch (c->state.load(std::memory_order_acquire)) {
      case kSending:
        return false;
      case kConnecting: {
        int err = 0;
        socklen_t len = sizeof(err);
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
        if (err != 0) {
          connect_failed(c, err);
        } else if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) {
          connected(c);
        }
        return true;
      }
      case kIdle:
        on_idle_event(c);
        return true;
      case kWriting:
        if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) {
          const uint32_t generation = c->generation;
          continue_write(c);
          // A failed write closed (and maybe reopened) the connection.
          if (c->fd < 0 || c->generation != generation) return true;
        }
        if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) on_readable(c);
        return true;
      case kInFlight:
        on_readable(c);
        return true;
      default:
        return true;
    }
  }

  // Fails every queued and in-flight request as Cancelled (after cancel_all).
  void cancel_everything() {
    std::vector<std::pair<uint32_t, Pending>> queued;
    std::string message;
    {
      std::lock_guard<std::mutex> lock(mu);
      message = cancel_message;
      for (uint32_t k = 0; k < nodes.size(); ++k) {
        Node& node = *nodes[k];
        while (!node.queue.empty()) queued.emplace_back(k, node.queue.pop_front());
      }
      for (auto& q : queued) nodes[q.first]->outstanding.fetch_sub(1, std::memory_order_relaxed);
    }
    for (auto& q : queued) deliver_failure(q.second.tag, q.second.index, q.first, FailureKind::Cancelled, message);
    for (auto& c : conns) {
      const uint8_t s = c->state.load(std::memory_order_acquire);
      if (s == kInFlight || s == kWriting) fail_conn(c.get(), FailureKind::Cancelled, message);
    }
  }

  void check_timers() {
    const int64_t now = now_ns();
    next_timer_ns = INT64_MAX;
    const int64_t timeout = config.request_timeout_ns;
    for (auto& owned : conns) {
      Conn* c = owned.get();
      const uint8_t s = c->state.load(std::memory_order_acquire);
      if ((s == kInFlight || s == kWriting) && timeout > 0) {
        const int64_t deadline = c->sent_ns + timeout;
        if (now >= deadline) {
          fail_conn(c, FailureKind::Timeout,
                    node_text(c->node) + "no complete response within " + format_ms(timeout) + " ms");
        } else {
          note_timer(deadline);
        }
      } else if (s == kConnecting) {
        if (now >= c->connect_deadline_ns) {
          connect_failed(c, ETIMEDOUT);
        } else {
          note_timer(c->connect_deadline_ns);
        }
      } else if (s == kClosed && c->retry_at_ns > 0) {
        if (now >= c->retry_at_ns) {
          c->retry_at_ns = 0;
          reconnect(c);
        } else {
          note_timer(c->retry_at_ns);
        }
      }
    }
    // A request sent after this scan times out no earlier than this.
    if (timeout > 0) note_timer(now + timeout);
  }

  // Every kRecentResponses responses (request written -> last byte read),
  // the poll budget becomes twice their median, or 0 (block at once) when
  // that exceeds response_poll_ns: polling for a slow server burns a CPU
  // for a wake-up that is small beside its response time.
  void learn_response_time(int64_t ns) {
    recent_response_ns[recent_responses++ % kRecentResponses] = ns;
    if (recent_responses % kRecentResponses != 0) return;
    std::array<int64_t, kRecentResponses> sorted = recent_response_ns;
    std::nth_element(sorted.begin(), sorted.begin() + kRecentResponses / 2, sorted.end());
    const int64_t budget = 2 * sorted[kRecentResponses / 2];
    poll_budget_ns.store(budget <= config.response_poll_ns ? budget : 0, std::memory_order_relaxed);
  }

  // Whether a request sent less than the poll budget ago is outstanding.
  bool should_poll() const {
    const int64_t budget = poll_budget_ns.load(std::memory_order_relaxed);
    if (budget <= 0 || outstanding.load(std::memory_order_seq_cst) == 0) return false;
    return now_ns() < last_send_ns.load(std::memory_order_seq_cst) + budget;
  }

  void run_reactor() {
    if (config.reactor_cpu >= 0) prepare_issue_thread(config.reactor_cpu);
    constexpr int kMaxEvents = 256;
    epoll_event events[kMaxEvents];
    next_timer_ns = now_ns();
    while (!stopping.load(std::memory_order_acquire)) {
      int timeout_ms = -1;
      if (next_timer_ns != INT64_MAX) {
        const int64_t wait = next_timer_ns - now_ns();
        timeout_ms = wait <= 0 ? 0 : static_cast<int>(std::min<int64_t>((wait + 999999) / 1000000, INT_MAX));
      }
      // Poll (timeout 0) while a recent request is outstanding; else block,
      // announced first so that a send wakes it (note_send).
      bool polling = timeout_ms != 0 && should_poll();
      bool announced = false;
      if (timeout_ms != 0 && !polling && poll_budget_ns.load(std::memory_order_relaxed) > 0) {
        reactor_blocked.store(true, std::memory_order_seq_cst);
        announced = true;
        polling = should_poll();
        if (polling) {
          reactor_blocked.store(false, std::memory_order_relaxed);
          announced = false;
        }
      }
      if (polling) {
        timeout_ms = 0;
      } else if (timeout_ms != 0 && outstanding.load(std::memory_order_relaxed) > 0) {
        blocking_waits.fetch_add(1, std::memory_order_relaxed);
      }
      const int n = epoll_wait(epfd, events, kMaxEvents, timeout_ms);
      if (announced) reactor_blocked.store(false, std::memory_order_relaxed);
      if (stopping.load(std::memory_order_acquire)) break;
      bool waiting = false;
      for (int i = 0; i < n; ++i) {
        const uint64_t data = events[i].data.u64;
        if (data == UINT64_MAX) {
          uint64_t count;
          while (::read(wakefd, &count, sizeof(count)) < 0 && errno == EINTR) {
          }
          take_handoffs();
          continue;
        }
        Conn* c = conns[static_cast<uint32_t>(data)].get();
        if (static_cast<uint32_t>(data >> 32) != c->generation || c->fd < 0) continue;
        if (polling) polled_events.fetch_add(1, std::memory_order_relaxed);
        if (!on_event(c, events[i].events)) waiting = true;
      }
      if (cancel_flag.load(std::memory_order_acquire)) {
        take_handoffs();
        cancel_everything();
      }
      flush_stats();
      if (now_ns() >= next_timer_ns) check_timers();
      // The issue thread is mid-write on a connection with news: let it
      // finish. An empty poll does not yield: a yielded thread is queued
      // behind whatever else runs on its CPU (another process's whole time
      // slice, milliseconds), where a blocked one is woken ahead of it.
      if (waiting) yield_cpu();
    }
    flush_stats();
  }

  // ---- Start and stop ----

  bool resolve(Node& node, std::vector<sockaddr_storage>* out, std::vector<socklen_t>* lens, std::string* error) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const std::string port = std::to_string(node.address.port);
    // An IPv6 literal may come as in a URL, in brackets.
    std::string host = node.address.host;
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    const int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found);
    if (rc != 0) {
      *error = "node " + node.address.label + ": cannot resolve " + node.address.host + ": " + gai_strerror(rc);
      return false;
    }
    for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
      if (a->ai_addrlen > sizeof(sockaddr_storage)) continue;
      sockaddr_storage s{};
      std::memcpy(&s, a->ai_addr, a->ai_addrlen);
      out->push_back(s);
      lens->push_back(static_cast<socklen_t>(a->ai_addrlen));
    }
    freeaddrinfo(found);
    if (out->empty()) {
      *error = "node " + node.address.label + ": " + node.address.host + " has no address";
      return false;
    }
    return true;
  }

  // Connects `group` (connections of one node, sockets opened) within the
  // connect timeout; 0 or the first errno (ETIMEDOUT when time ran out).
  int await_connects(const std::vector<Conn*>& group) {
    const int64_t deadline = now_ns() + config.connect_timeout_ns;
    std::vector<pollfd> waiting;
    std::vector<Conn*> owners;
    for (Conn* c : group) {
      waiting.push_back(pollfd{c->fd, POLLOUT, 0});
      owners.push_back(c);
    }
    while (!waiting.empty()) {
      const int64_t left = deadline - now_ns();
      if (left <= 0) return ETIMEDOUT;
      const int rc = ::poll(waiting.data(), waiting.size(), static_cast<int>(std::min<int64_t>((left + 999999) / 1000000, INT_MAX)));
      if (rc < 0 && errno != EINTR) return errno;
      for (size_t i = waiting.size(); i-- > 0;) {
        if (waiting[i].revents == 0) continue;
        int err = 0;
        socklen_t len = sizeof(err);
        if (getsockopt(waiting[i].fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
        if (err != 0) return err;
        waiting.erase(waiting.begin() + static_cast<long>(i));
        owners.erase(owners.begin() + static_cast<long>(i));
      }
    }
    return 0;
  }

  std::string connect_error(const Node& node, int err) const {
    if (err == ETIMEDOUT)
      return "node " + node.address.label + ": connect: no connection within " + format_ms(config.connect_timeout_ns) + " ms";
    return "node " + node.address.label + ": connect: " + errno_text(err);
  }

  bool start(std::string* error) {
    if (started || stopped.load()) {
      *error = "the client was already started";
      return false;
    }
    if (config.nodes.empty()) {
      *error = "no nodes to connect to";
      return false;
    }
    if (config.connections_per_node == 0) {
      *error = "connections_per_node must be at least 1";
      return false;
    }
    stats.assign(config.nodes.size() * kNodeStatsLength, 0.0);
    read_buffer.resize(64 * 1024);
    stat_batch.reserve(1024);
    for (uint32_t k = 0; k < config.nodes.size(); ++k) {
      auto node = std::make_unique<Node>();
      node->address = config.nodes[k];
      const std::string& host = node->address.host;
      const bool v6 = host.find(':') != std::string::npos && host.front() != '[';
      node->host_line =
          "Host: " + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(node->address.port) + "\r\n";
      nodes.push_back(std::move(node));
    }
    for (uint32_t k = 0; k < nodes.size(); ++k) {
      for (uint32_t i = 0; i < config.connections_per_node; ++i) {
        auto c = std::make_unique<Conn>();
        c->id = static_cast<uint32_t>(conns.size());
        c->node = k;
        c->body.reserve(kExcerptBytes + 1);
        conns.push_back(std::move(c));
      }
    }
    epfd = epoll_create1(EPOLL_CLOEXEC);
    wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epfd < 0 || wakefd < 0) {
      *error = "cannot create the client's epoll instance: " + errno_text(errno);
      return false;
    }
    epoll_event wake_event{};
    wake_event.events = EPOLLIN;
    wake_event.data.u64 = UINT64_MAX;
    epoll_ctl(epfd, EPOLL_CTL_ADD, wakefd, &wake_event);
    for (uint32_t k = 0; k < nodes.size(); ++k) {
      Node& node = *nodes[k];
      std::vector<sockaddr_storage> addresses;
      std::vector<socklen_t> lens;
      if (!resolve(node, &addresses, &lens, error)) return fail_start();
      std::vector<Conn*> group;
      for (auto& c : conns)
        if (c->node == k) group.push_back(c.get());
      // The first address that accepts a connection serves them all.
      int err = 0;
      bool found = false;
      for (size_t a = 0; a < addresses.size() && !found; ++a) {
        node.addr = addresses[a];
        node.addr_len = lens[a];
        err = open_socket(group[0]);
        if (err == 0) err = await_connects({group[0]});
        if (err == 0) {
          found = true;
        } else {
          close_socket(group[0]);
        }
      }
      if (!found) {
        *error = connect_error(node, err);
        return fail_start();
      }
      std::vector<Conn*> rest(group.begin() + 1, group.end());
      for (Conn* c : rest) {
        err = open_socket(c);
        if (err != 0) break;
      }
      if (err == 0) err = await_connects(rest);
      if (err != 0) {
        *error = connect_error(node, err);
        return fail_start();
      }
      for (Conn* c : group) {
        register_conn(c, false);
        c->state.store(kIdle, std::memory_order_relaxed);
        node.idle.push_back(c);
      }
    }
    started = true;
    poll_budget_ns.store(std::max<int64_t>(config.response_poll_ns, 0), std::memory_order_relaxed);
    reactor = std::thread([this] { run_reactor(); });
    return true;
  }

  bool fail_start() {
    for (auto& c : conns) close_socket(c.get());
    return false;
  }

  void cancel_all(const std::string& message) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (cancelled) return;
      cancelled = true;
      cancel_message = message;
    }
    cancel_flag.store(true, std::memory_order_release);
    if (wakefd >= 0) wake();
  }

  void stop() {
    if (stopped.exchange(true)) return;
    if (reactor.joinable()) {
      stopping.store(true, std::memory_order_release);
      wake();
      reactor.join();
    }
    // Everything is this thread's now.
    // Handed-off connections are still Sending: the loop below fails them.
    const std::string message = "the client was closed";
    for (uint32_t k = 0; k < nodes.size(); ++k) {
      Node& node = *nodes[k];
      while (!node.queue.empty()) {
        const Pending p = node.queue.pop_front();
        deliver_failure(p.tag, p.index, k, FailureKind::Cancelled, message);
      }
      node.outstanding.store(0, std::memory_order_relaxed);
    }
    for (auto& c : conns) {
      const uint8_t s = c->state.load(std::memory_order_acquire);
      if (s == kInFlight || s == kWriting || s == kSending) {
        outcome.tag = c->tag;
        outcome.index = c->index;
        outcome.node = c->node;
        outcome.sent_ns = c->written > 0 ? c->sent_ns : 0;
        outcome.done_ns = now_ns();
        outcome.status = 0;
        outcome.ok = false;
        outcome.kind = FailureKind::Cancelled;
        outcome.message = message;
        outcome.body.clear();
        add_stat(c->node, static_cast<int>(FailureKind::Cancelled), 0);
        deliver(outcome);
      }
      close_socket(c.get());
    }
    flush_stats();
    if (epfd >= 0) ::close(epfd);
    if (wakefd >= 0) ::close(wakefd);
    epfd = wakefd = -1;
  }

  HttpReactorCounts reactor_counts() const {
    HttpReactorCounts counts;
    counts.polled_events = polled_events.load(std::memory_order_relaxed);
    counts.blocking_waits = blocking_waits.load(std::memory_order_relaxed);
    counts.send_wakes = send_wakes.load(std::memory_order_relaxed);
    counts.poll_budget_ns = poll_budget_ns.load(std::memory_order_relaxed);
    return counts;
  }

  void copy_node_stats(double* out) const {
    if (stats.empty()) {
      std::fill(out, out + config.nodes.size() * kNodeStatsLength, 0.0);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(stats_mu);
      std::copy(stats.begin(), stats.end(), out);
    }
    for (size_t k = 0; k < nodes.size(); ++k)
      out[k * kNodeStatsLength + kStatRequests] = static_cast<double>(nodes[k]->requests.load(std::memory_order_relaxed));
  }
};

bool HttpClient::available() { return true; }

#else  // not Linux: every request fails at once, naming why.

namespace {
constexpr const char* kUnavailable = "native HTTP client not available on this platform";
}  // namespace

struct HttpClient::Impl {
  HttpClientConfig config;
  HttpSink* sink;
  std::atomic<uint64_t> outstanding{0};

  Impl(HttpClientConfig c, HttpSink* s) : config(std::move(c)), sink(s) {}

  bool start(std::string* error) {
    *error = kUnavailable;
    return false;
  }
  void send(uint64_t tag, uint32_t index, bool) {
    HttpOutcome out;
    out.tag = tag;
    out.index = index;
    out.done_ns = now_ns();
    out.kind = FailureKind::Connection;
    out.message = kUnavailable;
    sink->on_outcome(out);
  }
  void cancel_all(const std::string&) {}
  void stop() {}
  void copy_node_stats(double* out) const { std::fill(out, out + config.nodes.size() * kNodeStatsLength, 0.0); }
  HttpReactorCounts reactor_counts() const { return {}; }
};

bool HttpClient::available() { return false; }

#endif

HttpClient::HttpClient(HttpClientConfig config, HttpSink* sink)
    : impl_(std::make_unique<Impl>(std::move(config), sink)) {}

HttpClient::~HttpClient() { stop(); }

bool HttpClient::set_request(uint32_t index, const uint8_t* line, size_t line_size, const uint8_t* rest,
                             size_t rest_size) {
#if defined(__linux__)
  // Also after start(), between series (the QSL loads then): nothing is
  // outstanding, and the issue thread's next send() is ordered after this by
  // the session. Entries are nodes of a map: queued requests' pointers stay valid.
  if (index > kMaxRequestIndex || line_size == 0 || line_size > UINT32_MAX || rest_size > UINT32_MAX) return false;
  std::vector<Request>& table = impl_->requests;
  std::vector<uint8_t>& arena = impl_->arena;
  if (index >= table.size()) table.resize(static_cast<size_t>(index) + 1);
  Request& r = table[index];
  r.offset = arena.size();
  r.line_size = static_cast<uint32_t>(line_size);
  r.rest_size = static_cast<uint32_t>(rest_size);
  arena.insert(arena.end(), line, line + line_size);
  arena.insert(arena.end(), rest, rest + rest_size);
  return true;
#else
  return false;
#endif
}

bool HttpClient::set_requests(const uint32_t* indices, size_t count, const uint8_t* data, const uint32_t* layout) {
#if defined(__linux__)
  // Sized once for the whole load; nothing is stored when one entry is out of range.
  uint32_t max_index = 0;
  uint64_t bytes = 0;
  for (size_t i = 0; i < count; ++i) {
    if (indices[i] > kMaxRequestIndex || layout[4 * i + 1] == 0) return false;
    max_index = std::max(max_index, indices[i]);
    bytes += uint64_t{layout[4 * i + 1]} + layout[4 * i + 3];
  }
  if (count == 0) return true;
  std::vector<Request>& table = impl_->requests;
  if (max_index >= table.size()) table.resize(static_cast<size_t>(max_index) + 1);
  impl_->arena.reserve(impl_->arena.size() + bytes);
  for (size_t i = 0; i < count; ++i) {
    const uint32_t* at = layout + 4 * i;
    set_request(indices[i], data + at[0], at[1], data + at[2], at[3]);
  }
  return true;
#else
  (void)indices, (void)count, (void)data, (void)layout;
  return false;
#endif
}

void HttpClient::clear_requests() {
#if defined(__linux__)
  if (impl_->outstanding.load(std::memory_order_acquire) != 0) return;
  // Released, not kept: the next load may be of another size.
  std::vector<Request>().swap(impl_->requests);
  std::vector<uint8_t>().swap(impl_->arena);
#endif
}

bool HttpClient::start(std::string* error) { return impl_->start(error); }

void HttpClient::send(uint64_t tag, uint32_t index, bool keep_body) { impl_->send(tag, index, keep_body); }

void HttpClient::cancel_all(const std::string& message) { impl_->cancel_all(message); }

uint64_t HttpClient::outstanding() const { return impl_->outstanding.load(std::memory_order_acquire); }

void HttpClient::copy_node_stats(double* out) const { impl_->copy_node_stats(out); }

HttpReactorCounts HttpClient::reactor_counts() const { return impl_->reactor_counts(); }

void HttpClient::stop() { impl_->stop(); }

}  // namespace loadgen

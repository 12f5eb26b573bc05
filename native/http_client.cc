// HttpClient (http_client.h): keep-alive connections written by the issue
// thread and read by one epoll reactor thread (http_client_impl.h): here
// start, stop and the issue thread's send.
#include "http_client.h"

#include "core_threads.h"
#include "http_client_impl.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "clock.h"
#include "wait.h"

#if defined(__linux__)
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#endif

namespace loadgen {

#if defined(__linux__)

using namespace http_internal;

void HttpClient::Impl::wake() {
  const uint64_t one = 1;
  ssize_t rc;
  do rc = ::write(wakefd, &one, sizeof(one));
  while (rc < 0 && errno == EINTR);
}

void HttpClient::Impl::fail_now(uint64_t tag, uint32_t index, int node, FailureKind kind, std::string message) {
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

int HttpClient::Impl::pick_node(int64_t now) {
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

ssize_t HttpClient::Impl::write_some(Conn* c) {
  const Node& node = *nodes[c->node];
  const Request& r = *c->request;
  uint8_t* line = table->arena.data() + r.offset;
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

void HttpClient::Impl::load(Conn* c, const Pending& p) {
  c->tag = p.tag;
  c->request = p.request;
  c->index = p.index;
  c->keep_body = p.keep_body;
  c->retried = p.retried;
  c->refusals = p.refusals;
  c->written = 0;
  c->total = p.request->line_size + nodes[c->node]->host_line.size() + p.request->rest_size;
  c->write_errno = 0;
  c->got_bytes = false;
  c->headers_delivered = false;
  // Without keep_body, enough of the body for a failure's excerpt. Streamed
  // bodies are kept per read only (deliver_streamed empties them).
  c->parser.reset(&c->body, p.keep_body || config.stream_bodies ? SIZE_MAX : kExcerptBytes + 1, config.max_body_bytes);
}

void HttpClient::Impl::note_send(int64_t sent) {
  if (poll_budget_ns.load(std::memory_order_relaxed) <= 0) return;
  last_send_ns.store(sent, std::memory_order_seq_cst);
  if (reactor_blocked.load(std::memory_order_seq_cst) && reactor_blocked.exchange(false, std::memory_order_seq_cst)) {
    send_wakes.fetch_add(1, std::memory_order_relaxed);
    wake();
  }
}

void HttpClient::Impl::hand_to_reactor() {
  handoff_flag.store(true, std::memory_order_seq_cst);
  if (reactor_blocked.load(std::memory_order_seq_cst) && reactor_blocked.exchange(false, std::memory_order_seq_cst)) {
    send_wakes.fetch_add(1, std::memory_order_relaxed);
    wake();
  }
}

void HttpClient::Impl::send(uint64_t tag, uint32_t index, bool keep_body) {
  outstanding.fetch_add(1, std::memory_order_acq_rel);
  if (stopped.load(std::memory_order_acquire)) return fail_now(tag, index, -1, FailureKind::Cancelled, "the client was closed");
  if (!started) return fail_now(tag, index, -1, FailureKind::Connection, "the client was not started");
  const std::vector<Request>& requests = table->requests;
  if (index >= requests.size() || requests[index].line_size == 0)
    return fail_now(tag, index, -1, FailureKind::Connection, "no request was set for index " + std::to_string(index));
  const Pending pending{tag, &requests[index], index, keep_body, false, 0};
  Conn* c = nullptr;
  int node;
  bool handed = false;
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
      const FailureKind kind = nodes[first]->last_error_kind;
      lock.unlock();
      nodes[first]->requests.fetch_add(1, std::memory_order_relaxed);
      return fail_now(tag, index, static_cast<int>(first), kind, std::move(message));
    }
    Node& n = *nodes[static_cast<size_t>(node)];
    n.requests.fetch_add(1, std::memory_order_relaxed);
    n.outstanding.fetch_add(1, std::memory_order_relaxed);
    if (n.idle.empty()) {
      n.queue.push_back(pending);
      // The reactor opens another connection while the pool is below its
      // ceiling and the waiting requests outnumber the connects under way.
      const bool grow = !n.grow && n.live < n.ceiling && n.connecting < n.queue.size() + n.fresh_queue.size();
      if (grow) {
        n.grow = true;
        grow_requests.push_back(static_cast<uint32_t>(node));
      }
      lock.unlock();
      if (grow) wake();
      return;
    }
    c = n.idle.back();
    n.idle.pop_back();
    c->state.store(kSending, std::memory_order_relaxed);
    // An awake reactor writes it (take_handoffs; handoff keeps its capacity, so no allocation once
    // warm). A blocked one would have to be woken first (tens of us on a VM, added to this request's
    // latency): then this thread writes it, as with one client thread, and note_send wakes the reactor.
    handed = config.reactor_writes && !reactor_blocked.load(std::memory_order_seq_cst);
    if (handed) {
      load(c, pending);
      c->handed = true;
      handoff.push_back(c);
    }
  }
  if (handed) return hand_to_reactor();
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

bool HttpClient::Impl::resolve(Node& node, std::vector<sockaddr_storage>* out, std::vector<socklen_t>* lens, std::string* error) {
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

int HttpClient::Impl::await_connects(const std::vector<Conn*>& group) {
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

std::string HttpClient::Impl::connect_error(const Node& node, int err) const {
  if (err == ETIMEDOUT)
    return "node " + node.address.label + ": connect: no connection within " + format_ms(config.connect_timeout_ns) + " ms";
  return "node " + node.address.label + ": connect: " + errno_text(err);
}

bool HttpClient::Impl::start(std::string* error) {
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
  if (config.response_headers.size() > HttpResponseParser::kMaxCapturedNames) {
    *error = "response_headers: " + std::to_string(config.response_headers.size()) + " names, at most " +
             std::to_string(HttpResponseParser::kMaxCapturedNames) + " allowed";
    return false;
  }
  for (const std::string& name : config.response_headers) {
    // Compared with the lowercase names a response's head gives (any case).
    const bool token = !name.empty() && name.size() <= 256 &&
                       std::all_of(name.begin(), name.end(), [](char c) {
                         return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
                       });
    if (!token) {
      *error = "response_headers: '" + name.substr(0, 64) + "' is not a lowercase header name";
      return false;
    }
  }
  // Every connection is a file descriptor: the pools must fit the process's limit.
  rlimit files{};
  const uint64_t sockets = uint64_t{config.connections_per_node} * config.nodes.size();
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY &&
      sockets + kReservedFiles > files.rlim_cur) {
    *error = "connections: " + std::to_string(config.connections_per_node) + " per node x " +
             std::to_string(config.nodes.size()) + " node(s) need up to " + std::to_string(sockets) +
             " sockets, beyond the open-file limit of " + std::to_string(files.rlim_cur) +
             " (ulimit -n) less " + std::to_string(kReservedFiles) + " kept for the rest of the process";
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
    node->ceiling = config.connections_per_node;
    nodes.push_back(std::move(node));
  }
  grow_requests.reserve(nodes.size());
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
  // One connection per node now (it proves the node reachable); the reactor
  // opens more as requests wait for one.
  for (uint32_t k = 0; k < nodes.size(); ++k) {
    Node& node = *nodes[k];
    std::vector<sockaddr_storage> addresses;
    std::vector<socklen_t> lens;
    if (!resolve(node, &addresses, &lens, error)) return fail_start();
    Conn* c = spare_conn(k);
    // The first address that accepts a connection serves all of them.
    int err = 0;
    bool found = false;
    for (size_t a = 0; a < addresses.size() && !found; ++a) {
      node.addr = addresses[a];
      node.addr_len = lens[a];
      err = open_socket(c);
      if (err == 0) err = await_connects({c});
      if (err == 0) {
        found = true;
      } else {
        close_socket(c);
      }
    }
    if (!found) {
      *error = connect_error(node, err);
      return fail_start();
    }
    register_conn(c, false);
    opened_connections.fetch_add(1, std::memory_order_relaxed);
    c->opened_ns = now_ns();
    c->state.store(kIdle, std::memory_order_relaxed);
    node.idle.push_back(c);
    node.live = 1;
  }
  started = true;
  poll_budget_ns.store(std::max<int64_t>(config.response_poll_ns, 0), std::memory_order_relaxed);
  // The first turn scans the timers, whichever thread runs it (the scan arms
  // the request timeouts of what is sent after it).
  next_timer_ns = now_ns();
  reactor = start_core_thread(config.thread_name, [this] { run_reactor(); });
  return true;
}

bool HttpClient::Impl::fail_start() {
  for (auto& c : conns) close_socket(c.get());
  return false;
}

void HttpClient::Impl::cancel_all(const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (cancelled) return;
    cancelled = true;
    cancel_message = message;
  }
  cancel_flag.store(true, std::memory_order_release);
  if (wakefd >= 0) wake();
}

void HttpClient::Impl::cancel_outstanding(const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mu);
    abandon_message = message;
  }
  abandon_flag.store(true, std::memory_order_release);
  if (wakefd >= 0) wake();
}

void HttpClient::Impl::stop() {
  if (stopped.exchange(true)) return;
  {
    // Under park_mu: a parked reactor thread sees it when notified.
    std::lock_guard<std::mutex> park(park_mu);
    stopping.store(true, std::memory_order_release);
  }
  if (reactor.joinable()) {
    park_cv.notify_all();
    wake();
    reactor.join();
  }
  // An inline wait mid-turn ends it first; later ones wait without the reactor.
  std::lock_guard<std::mutex> turn(reactor_mu);
  // Everything is this thread's now.
  // Handed-off connections are still Sending: the loop below fails them.
  const std::string message = "the client was closed";
  for (uint32_t k = 0; k < nodes.size(); ++k) {
    Node& node = *nodes[k];
    for (PendingQueue* queue : {&node.refused_queue, &node.fresh_queue, &node.queue}) {
      while (!queue->empty()) {
        const Pending p = queue->pop_front();
        deliver_failure(p.tag, p.index, k, FailureKind::Cancelled, message);
      }
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
      outcome.headers.clear();
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

HttpReactorCounts HttpClient::Impl::reactor_counts() const {
  HttpReactorCounts counts;
  counts.polled_events = polled_events.load(std::memory_order_relaxed);
  counts.inline_events = inline_events.load(std::memory_order_relaxed);
  counts.blocking_waits = blocking_waits.load(std::memory_order_relaxed);
  counts.send_wakes = send_wakes.load(std::memory_order_relaxed);
  counts.poll_budget_ns = poll_budget_ns.load(std::memory_order_relaxed);
  counts.opened_connections = opened_connections.load(std::memory_order_relaxed);
  counts.refused_connections = refused_connections.load(std::memory_order_relaxed);
  counts.retried_requests = retried_requests.load(std::memory_order_relaxed);
  counts.responses = responses.load(std::memory_order_relaxed);
  counts.handed_writes = handed_writes.load(std::memory_order_relaxed);
  counts.reactor_cpu_ns = reactor_cpu_ns.load(std::memory_order_relaxed);
  return counts;
}

void HttpClient::Impl::copy_node_stats(double* out) const {
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

bool HttpClient::available() { return true; }

bool HttpClient::in_reactor_turn() { return Impl::in_turn; }

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
  void cancel_outstanding(const std::string&) {}
  bool begin_inline() { return false; }
  void end_inline() {}
  int64_t wait_inline(int64_t target_ns, int64_t spin_window_ns, bool yield_while_spinning) {
    return wait_until_ns(target_ns, spin_window_ns, yield_while_spinning);
  }
  void stop() {}
  void copy_node_stats(double* out) const { std::fill(out, out + config.nodes.size() * kNodeStatsLength, 0.0); }
  HttpReactorCounts reactor_counts() const { return {}; }
};

bool HttpClient::available() { return false; }

bool HttpClient::in_reactor_turn() { return false; }

#endif

HttpClient::HttpClient(HttpClientConfig config, HttpSink* sink)
    : impl_(std::make_unique<Impl>(std::move(config), sink)) {}

HttpClient::~HttpClient() { stop(); }

bool HttpClient::start(std::string* error) { return impl_->start(error); }

void HttpClient::send(uint64_t tag, uint32_t index, bool keep_body) { impl_->send(tag, index, keep_body); }

void HttpClient::cancel_all(const std::string& message) { impl_->cancel_all(message); }

void HttpClient::cancel_outstanding(const std::string& message) { impl_->cancel_outstanding(message); }

uint64_t HttpClient::outstanding() const { return impl_->outstanding.load(std::memory_order_acquire); }

void HttpClient::copy_node_stats(double* out) const { impl_->copy_node_stats(out); }

HttpReactorCounts HttpClient::reactor_counts() const { return impl_->reactor_counts(); }

bool HttpClient::begin_inline() { return impl_->config.inline_reactor && impl_->begin_inline(); }

void HttpClient::end_inline() { impl_->end_inline(); }

int64_t HttpClient::wait_inline(int64_t target_ns, int64_t spin_window_ns, bool yield_while_spinning) {
  return impl_->wait_inline(target_ns, spin_window_ns, yield_while_spinning);
}

void HttpClient::stop() { impl_->stop(); }

}  // namespace loadgen

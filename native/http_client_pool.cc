// HttpClient's connections (http_client_impl.h): opened by the reactor as
// requests wait for one (up to the node's ceiling), handed the waiting
// requests, their partial writes finished, dropped when the server closes
// them, and the one retry of a request whose connection ended before any
// byte of its response.
#include "http_client_impl.h"

#if defined(__linux__)

#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "clock.h"

namespace loadgen {

using namespace http_internal;

void HttpClient::Impl::set_epoll_out(Conn* c, bool on) {
  if (c->epoll_out == on) return;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | (on ? uint32_t{EPOLLOUT} : 0u);
  ev.data.u64 = (uint64_t{c->generation} << 32) | c->id;
  epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
  c->epoll_out = on;
}

int HttpClient::Impl::open_socket(Conn* c) {
  const Node& node = *nodes[c->node];
  c->fd = ::socket(node.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c->fd < 0) return errno;
  const int one = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  ++c->generation;
  c->served = false;
  if (::connect(c->fd, reinterpret_cast<const sockaddr*>(&node.addr), node.addr_len) != 0 && errno != EINPROGRESS) {
    const int err = errno;
    ::close(c->fd);
    c->fd = -1;
    return err;
  }
  return 0;
}

void HttpClient::Impl::register_conn(Conn* c, bool want_out) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | (want_out ? uint32_t{EPOLLOUT} : 0u);
  ev.data.u64 = (uint64_t{c->generation} << 32) | c->id;
  epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev);
  c->epoll_out = want_out;
}

void HttpClient::Impl::close_socket(Conn* c) {
  if (c->fd >= 0) {
    epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, nullptr);
    ::close(c->fd);
    c->fd = -1;
  }
  c->state.store(kClosed, std::memory_order_relaxed);
}

HttpClient::Impl::Conn* HttpClient::Impl::spare_conn(uint32_t node) {
  std::vector<Conn*>& spare = nodes[node]->spare;
  if (!spare.empty()) {
    Conn* c = spare.back();
    spare.pop_back();
    return c;
  }
  auto owned = std::make_unique<Conn>();
  Conn* c = owned.get();
  c->id = static_cast<uint32_t>(conns.size());
  c->node = node;
  c->body.reserve(kExcerptBytes + 1);
  if (!config.response_headers.empty()) c->parser.set_capture(&config.response_headers);
  conns.push_back(std::move(owned));
  return c;
}

void HttpClient::Impl::open_connections(uint32_t k) {
  if (cancel_flag.load(std::memory_order_acquire) || stopping.load(std::memory_order_acquire)) return;
  uint32_t open = 0;
  {
    std::lock_guard<std::mutex> lock(mu);
    Node& node = *nodes[k];
    // One connect per waiting request not yet covered by a connect under way.
    // A refused request waits for a connection that has answered while
    // there is one: a new connection would not take it.
    const size_t waiting = node.queue.size() + node.fresh_queue.size() + (node.served_live == 0 ? node.refused_queue.size() : 0);
    if (waiting > node.connecting && node.live < node.ceiling) {
      open = static_cast<uint32_t>(std::min<size_t>(node.ceiling - node.live, waiting - node.connecting));
      node.live += open;
      node.connecting += open;
    }
  }
  for (uint32_t i = 0; i < open; ++i) start_connect(spare_conn(k));
}

void HttpClient::Impl::start_connect(Conn* c) {
  const int err = open_socket(c);
  if (err != 0) return connect_failed(c, err);
  c->state.store(kConnecting, std::memory_order_relaxed);
  register_conn(c, true);
  c->connect_deadline_ns = now_ns() + config.connect_timeout_ns;
  note_timer(c->connect_deadline_ns);
}

void HttpClient::Impl::connect_failed(Conn* c, int err) {
  close_socket(c);
  const uint32_t k = c->node;
  Node& node = *nodes[k];
  node.spare.push_back(c);
  refused_connections.fetch_add(1, std::memory_order_relaxed);
  std::vector<Pending> orphans;
  std::string message;
  {
    std::lock_guard<std::mutex> lock(mu);
    --node.live;
    --node.connecting;
    node.last_error = err == ETIMEDOUT ? "connect: no connection within " + format_ms(config.connect_timeout_ns) + " ms"
                                       : "connect: " + errno_text(err);
    node.last_error_kind = err == ETIMEDOUT ? FailureKind::Timeout : FailureKind::Connection;
    if (node.live > 0) {
      // The server takes no more than it has: the waiting requests go on those.
      node.ceiling = std::min(node.ceiling, node.live);
    } else {
      // No connection at all and none to be had: what waits cannot be sent.
      node.backoff_until_ns = now_ns() + config.node_backoff_ns;
      while (!node.refused_queue.empty()) orphans.push_back(node.refused_queue.pop_front());
      while (!node.fresh_queue.empty()) orphans.push_back(node.fresh_queue.pop_front());
      while (!node.queue.empty()) orphans.push_back(node.queue.pop_front());
      node.outstanding.fetch_sub(static_cast<uint32_t>(orphans.size()), std::memory_order_relaxed);
      message = node_text(k) + node.last_error;
    }
  }
  const FailureKind kind = err == ETIMEDOUT ? FailureKind::Timeout : FailureKind::Connection;
  for (const Pending& p : orphans) deliver_failure(p.tag, p.index, k, kind, message);
  // A retry that waited for this connection goes to an idle one now.
  hand_out_idle(k);
}

void HttpClient::Impl::connected(Conn* c, uint32_t events) {
  // Closed by the server as it was accepted (a connection limit): refused,
  // before any request went on it.
  if (events & (EPOLLRDHUP | EPOLLHUP)) return connect_failed(c, ECONNRESET);
  set_epoll_out(c, false);
  opened_connections.fetch_add(1, std::memory_order_relaxed);
  c->opened_ns = now_ns();
  {
    std::lock_guard<std::mutex> lock(mu);
    Node& node = *nodes[c->node];
    --node.connecting;
    node.backoff_until_ns = 0;
  }
  make_available(c);
}

bool HttpClient::Impl::take_request(Node& node, const Conn* c, Pending* out) {
  if (!node.refused_queue.empty() && (c->served || node.served_live == 0)) {
    *out = node.refused_queue.pop_front();
    return true;
  }
  if (!node.fresh_queue.empty() && (!c->served || node.connecting == 0)) {
    *out = node.fresh_queue.pop_front();
    return true;
  }
  if (node.queue.empty()) return false;
  *out = node.queue.pop_front();
  return true;
}

void HttpClient::Impl::make_available(Conn* c) {
  Pending next;
  {
    std::lock_guard<std::mutex> lock(mu);
    Node& node = *nodes[c->node];
    if (!take_request(node, c, &next)) {
      c->state.store(kIdle, std::memory_order_relaxed);
      node.idle.push_back(c);
      return;
    }
  }
  load(c, next);
  c->state.store(kInFlight, std::memory_order_relaxed);
  c->sent_ns = now_ns();
  last_send_ns.store(c->sent_ns, std::memory_order_relaxed);
  continue_write(c);
}

void HttpClient::Impl::hand_out_idle(uint32_t k) {
  Node& node = *nodes[k];
  for (;;) {
    Conn* c = nullptr;
    Pending next;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (node.refused_queue.empty() && node.fresh_queue.empty() && node.queue.empty()) return;
      size_t i = node.idle.size();
      while (i > 0 && !take_request(node, node.idle[i - 1], &next)) --i;
      if (i == 0) return;
      c = node.idle[i - 1];
      node.idle.erase(node.idle.begin() + static_cast<std::ptrdiff_t>(i - 1));
      c->state.store(kInFlight, std::memory_order_relaxed);
    }
    load(c, next);
    c->sent_ns = now_ns();
    last_send_ns.store(c->sent_ns, std::memory_order_relaxed);
    continue_write(c);
  }
}

bool HttpClient::Impl::closed_as_refused(const Conn* c, int64_t used_ns) const {
  return !c->served && used_ns - c->opened_ns < kRefusedWithinNs;
}

void HttpClient::Impl::drop_conn(Conn* c, bool refused) {
  close_socket(c);
  // A body kept up to the limit is not kept on.
  if (c->body.capacity() > kKeptBodyCapacity) {
    std::vector<uint8_t>().swap(c->body);
    c->body.reserve(kExcerptBytes + 1);
  }
  const uint32_t k = c->node;
  Node& node = *nodes[k];
  node.spare.push_back(c);
  bool refused_waiting;
  {
    std::lock_guard<std::mutex> lock(mu);
    --node.live;
    if (c->served) --node.served_live;
    if (refused) node.ceiling = std::min(node.ceiling, std::max<uint32_t>(node.live, 1));
    refused_waiting = !node.refused_queue.empty();
  }
  open_connections(k);
  // The last connection that had answered is gone: the others may take it.
  if (refused_waiting) hand_out_idle(k);
}

void HttpClient::Impl::continue_write(Conn* c) {
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

void HttpClient::Impl::write_failed(Conn* c, int err) {
  if (retry_on_new_connection(c)) return;
  fail_conn(c, FailureKind::Connection, node_text(c->node) + "write: " + errno_text(err));
}

bool HttpClient::Impl::retry_on_new_connection(Conn* c) {
  if (c->got_bytes || cancel_flag.load(std::memory_order_acquire)) return false;
  const uint32_t k = c->node;
  const bool refused = closed_as_refused(c, c->sent_ns);
  {
    std::lock_guard<std::mutex> lock(mu);
    Node& node = *nodes[k];
    // Refused while others are open: a connection limit, not this request
    // (unless it had used its retry already: see kMaxLimitRefusals).
    const bool by_limit = refused && node.live > 1 && !c->retried && c->refusals < kMaxLimitRefusals;
    if (!by_limit && c->retried) return false;
    const Pending again{c->tag, c->request, c->index, c->keep_body, c->retried || !by_limit,
                        static_cast<uint8_t>(c->refusals + (by_limit ? 1 : 0))};
    if (by_limit) {
      node.refused_queue.push_back(again);
    } else if (refused) {
      // The only connection, or refused too often: whichever is free next.
      node.queue.push_front(again);
    } else {
      node.fresh_queue.push_back(again);
    }
  }
  retried_requests.fetch_add(1, std::memory_order_relaxed);
  if (refused) refused_connections.fetch_add(1, std::memory_order_relaxed);
  drop_conn(c, refused);
  hand_out_idle(k);
  return true;
}

void HttpClient::Impl::take_handoffs() {
  std::vector<Conn*> taken;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (handoff.empty()) return;
    taken.swap(handoff);
  }
  for (Conn* c : taken) {
    c->state.store(kWriting, std::memory_order_relaxed);
    if (c->handed) {
      // Handed over unwritten (reactor_writes): sent as of now.
      c->handed = false;
      c->sent_ns = now_ns();
      last_send_ns.store(c->sent_ns, std::memory_order_relaxed);
      handed_writes.fetch_add(1, std::memory_order_relaxed);
    }
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

void HttpClient::Impl::take_grow_requests() {
  // At most one entry per node (Node::grow): the copy never allocates once warm.
  thread_local std::vector<uint32_t> taken;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (grow_requests.empty()) return;
    taken.assign(grow_requests.begin(), grow_requests.end());
    grow_requests.clear();
    for (uint32_t k : taken) nodes[k]->grow = false;
  }
  for (uint32_t k : taken) open_connections(k);
}

void HttpClient::Impl::on_idle_event(Conn* c) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (c->state.load(std::memory_order_relaxed) != kIdle) return;  // the issue thread took it
    auto& idle = nodes[c->node]->idle;
    idle.erase(std::find(idle.begin(), idle.end(), c));
    c->state.store(kClosed, std::memory_order_relaxed);
  }
  const bool refused = closed_as_refused(c, now_ns());
  if (refused) refused_connections.fetch_add(1, std::memory_order_relaxed);
  drop_conn(c, refused);
}

}  // namespace loadgen

#endif  // __linux__

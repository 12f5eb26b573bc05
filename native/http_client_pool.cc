// HttpClient's connections (http_client_impl.h): connecting, handing queued
// requests to free connections, finishing partial writes, retries.
#include "http_client_impl.h"

#if defined(__linux__)

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "clock.h"
#include "wait.h"

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
  c->reused = false;
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

void HttpClient::Impl::reconnect(Conn* c) {
  if (cancel_flag.load(std::memory_order_acquire) || stopping.load(std::memory_order_acquire)) return;
  const int err = open_socket(c);
  if (err != 0) return connect_failed(c, err);
  c->state.store(kConnecting, std::memory_order_relaxed);
  register_conn(c, true);
  c->connect_deadline_ns = now_ns() + config.connect_timeout_ns;
  note_timer(c->connect_deadline_ns);
}

void HttpClient::Impl::connect_failed(Conn* c, int err) {
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

void HttpClient::Impl::connected(Conn* c) {
  set_epoll_out(c, false);
  c->retry_at_ns = 0;
  {
    std::lock_guard<std::mutex> lock(mu);
    nodes[c->node]->backoff_until_ns = 0;
  }
  make_available(c);
}

void HttpClient::Impl::make_available(Conn* c) {
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

void HttpClient::Impl::take_handoffs() {
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

void HttpClient::Impl::on_idle_event(Conn* c) {
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

}  // namespace loadgen

#endif  // __linux__

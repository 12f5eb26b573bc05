// HttpClient's reactor thread (http_client_impl.h): epoll events, reading
// and finishing responses, failures, timers, the poll budget.
#include "http_client_impl.h"

#if defined(__linux__)

#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cerrno>
#include <ctime>

#include "clock.h"
#include "wait.h"

namespace loadgen {

using namespace http_internal;

void HttpClient::Impl::deliver(HttpOutcome& out) {
  responses.fetch_add(1, std::memory_order_relaxed);
  sink->on_outcome(out);
  outstanding.fetch_sub(1, std::memory_order_acq_rel);
}

void HttpClient::Impl::add_stat(uint32_t node, int kind, int64_t latency_ns) {
  if (latency_ns > 0) learn_response_time(latency_ns);
  if (stat_batch.size() == stat_batch.capacity()) flush_stats();
  stat_batch.push_back(StatRecord{node, kind, latency_ns});
}

void HttpClient::Impl::flush_stats() {
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

void HttpClient::Impl::deliver_failure(uint64_t tag, uint32_t index, uint32_t node, FailureKind kind, const std::string& message) {
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
  out.headers.clear();
  add_stat(node, static_cast<int>(kind), 0);
  deliver(out);
}

void HttpClient::Impl::fail_conn(Conn* c, FailureKind kind, std::string message) {
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
  out.headers.clear();
  add_stat(c->node, static_cast<int>(kind), 0);
  close_socket(c);
  nodes[c->node]->outstanding.fetch_sub(1, std::memory_order_relaxed);
  deliver(out);
  drop_conn(c, false);
}

void HttpClient::Impl::finish(Conn* c, int64_t done_ns, size_t extra_bytes) {
  // Read after its time was up (the reactor ran late, the timer had not fired
  // yet): a timeout all the same, as the undici transport counts it.
  const int64_t timeout = config.request_timeout_ns;
  if (timeout > 0 && c->written > 0 && done_ns - c->sent_ns > timeout) {
    return fail_conn(c, FailureKind::Timeout, node_text(c->node) + "no complete response within " + format_ms(timeout) + " ms");
  }
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
  out.headers.clear();
  const bool write_done = c->written == c->total;
  if (p.status() >= 200 && p.status() < 300) {
    out.ok = true;
    if (c->keep_body) out.body.swap(c->body);
    // Into the reused outcome's capacity; streamed ones went out before the body.
    if (!config.stream_bodies) out.headers.assign(p.captured(), p.captured() + p.captured_size());
  } else {
    out.ok = false;
    out.kind = FailureKind::HttpStatus;
    out.message = node_text(c->node) + "HTTP " + std::to_string(p.status());
    if (p.body_bytes() > 0) out.message += ": " + excerpt(c->body, p.body_bytes());
  }
  add_stat(c->node, out.ok ? -1 : static_cast<int>(out.kind), done_ns - c->sent_ns);
  if (!c->served) {
    // Once per connection: the node now has one the server let in.
    std::lock_guard<std::mutex> lock(mu);
    ++nodes[c->node]->served_live;
    c->served = true;
  }
  // Bytes after the end of a response belong to none (no pipelining): the
  // response stands as framed, as undici reads it, and the connection,
  // out of step, is not used again.
  const bool reusable = extra_bytes == 0 && write_done && p.keep_alive();
  if (!reusable) close_socket(c);
  // Before the sink: a send it lets happen sees this node's new count.
  nodes[c->node]->outstanding.fetch_sub(1, std::memory_order_relaxed);
  deliver(out);
  if (reusable) {
    make_available(c);
  } else {
    drop_conn(c, false);
  }
}

void HttpClient::Impl::deliver_streamed(Conn* c, int64_t read_ns) {
  const HttpResponseParser& p = c->parser;
  const int status = p.status();
  const bool ok_status = status >= 200 && status <= 299;
  HttpBodyChunk chunk;
  chunk.tag = c->tag;
  chunk.index = c->index;
  chunk.node = c->node;
  chunk.read_ns = read_ns;
  // The head's headers before any of the body (the reader's onHeaders).
  if (!c->headers_delivered && ok_status && p.head_complete() && !config.response_headers.empty()) {
    c->headers_delivered = true;
    chunk.data = p.captured();
    chunk.size = p.captured_size();
    sink->on_headers(chunk);
  }
  if (c->body.empty()) return;
  if (!ok_status) {
    if (c->body.size() > kExcerptBytes + 1) c->body.resize(kExcerptBytes + 1);
    return;
  }
  chunk.data = c->body.data();
  chunk.size = c->body.size();
  sink->on_body(chunk);
  c->body.clear();
}

void HttpClient::Impl::on_readable(Conn* c) {
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
      if (state == HttpResponseParser::State::Error) {
        std::string message = node_text(c->node) + "malformed response: " + c->parser.error();
        if (c->parser.over_body_limit()) message += " of " + std::to_string(config.max_body_bytes) + " bytes";
        return fail_conn(c, FailureKind::MalformedResponse, std::move(message));
      }
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

bool HttpClient::Impl::on_event(Conn* c, uint32_t events) {
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
        connected(c, events);
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
        // A failed write dropped (and maybe reopened) the connection.
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

void HttpClient::Impl::cancel_everything(const std::string& message) {
  std::vector<std::pair<uint32_t, Pending>> queued;
  {
    std::lock_guard<std::mutex> lock(mu);
    for (uint32_t k = 0; k < nodes.size(); ++k) {
      Node& node = *nodes[k];
      while (!node.refused_queue.empty()) queued.emplace_back(k, node.refused_queue.pop_front());
      while (!node.fresh_queue.empty()) queued.emplace_back(k, node.fresh_queue.pop_front());
      while (!node.queue.empty()) queued.emplace_back(k, node.queue.pop_front());
    }
    for (auto& q : queued) nodes[q.first]->outstanding.fetch_sub(1, std::memory_order_relaxed);
  }
  for (auto& q : queued) deliver_failure(q.second.tag, q.second.index, q.first, FailureKind::Cancelled, message);
  // By index: a dropped connection may add objects (none once cancelled, but cheap to be sure).
  for (size_t i = 0; i < conns.size(); ++i) {
    Conn* c = conns[i].get();
    const uint8_t s = c->state.load(std::memory_order_acquire);
    if (s == kInFlight || s == kWriting) fail_conn(c, FailureKind::Cancelled, message);
  }
}

void HttpClient::Impl::check_timers() {
  const int64_t now = now_ns();
  next_timer_ns = INT64_MAX;
  const int64_t timeout = config.request_timeout_ns;
  // By index: a failure may open connections, adding objects.
  for (size_t i = 0; i < conns.size(); ++i) {
    Conn* c = conns[i].get();
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
    }
  }
  // A request sent after this scan times out no earlier than this.
  if (timeout > 0) note_timer(now + timeout);
}

void HttpClient::Impl::learn_response_time(int64_t ns) {
  recent_response_ns[recent_responses++ % kRecentResponses] = ns;
  if (recent_responses % kRecentResponses != 0) return;
  std::array<int64_t, kRecentResponses> sorted = recent_response_ns;
  std::nth_element(sorted.begin(), sorted.begin() + kRecentResponses / 2, sorted.end());
  const int64_t budget = 2 * sorted[kRecentResponses / 2];
  poll_budget_ns.store(budget <= config.response_poll_ns ? budget : 0, std::memory_order_relaxed);
}

bool HttpClient::Impl::should_poll() const {
  const int64_t budget = poll_budget_ns.load(std::memory_order_relaxed);
  if (budget <= 0 || outstanding.load(std::memory_order_seq_cst) == 0) return false;
  return now_ns() < last_send_ns.load(std::memory_order_seq_cst) + budget;
}

int HttpClient::Impl::wait_events(epoll_event* events, int max_events, int64_t timeout_ns, bool round_up) {
  if (timeout_ns == 0) return epoll_wait(epfd, events, max_events, 0);
#if defined(SYS_epoll_pwait2)
  // Nanosecond timeouts (Linux 5.11+): an inline wait ends at its time, not
  // on the next millisecond.
  if (has_epoll_pwait2) {
    timespec ts{};
    if (timeout_ns > 0) {
      ts.tv_sec = static_cast<time_t>(timeout_ns / 1000000000);
      ts.tv_nsec = static_cast<long>(timeout_ns % 1000000000);
    }
    const long rc = ::syscall(SYS_epoll_pwait2, epfd, events, max_events, timeout_ns > 0 ? &ts : nullptr, nullptr, 0);
    if (rc >= 0 || errno != ENOSYS) return static_cast<int>(rc);
    has_epoll_pwait2 = false;
  }
#endif
  int timeout_ms = -1;
  if (timeout_ns > 0) {
    const int64_t ms = round_up ? (timeout_ns + 999999) / 1000000 : timeout_ns / 1000000;
    timeout_ms = static_cast<int>(std::min<int64_t>(ms, INT_MAX));
  }
  return epoll_wait(epfd, events, max_events, timeout_ms);
}

thread_local bool HttpClient::Impl::in_turn = false;

bool HttpClient::Impl::handle_events(const epoll_event* events, int n, bool polling, bool inline_turn) {
  struct TurnFlag {
    TurnFlag() { in_turn = true; }
    ~TurnFlag() { in_turn = false; }
  } flag;
  bool waiting = false;
  // reactor_writes: the requests handed over since the last turn go out first.
  if (config.reactor_writes && handoff_flag.load(std::memory_order_relaxed) && handoff_flag.exchange(false, std::memory_order_acq_rel)) {
    take_handoffs();
  }
  for (int i = 0; i < n; ++i) {
    const uint64_t data = events[i].data.u64;
    if (data == UINT64_MAX) {
      uint64_t count;
      while (::read(wakefd, &count, sizeof(count)) < 0 && errno == EINTR) {
      }
      take_handoffs();
      take_grow_requests();
      continue;
    }
    Conn* c = conns[static_cast<uint32_t>(data)].get();
    if (static_cast<uint32_t>(data >> 32) != c->generation || c->fd < 0) continue;
    if (polling) polled_events.fetch_add(1, std::memory_order_relaxed);
    if (inline_turn) inline_events.fetch_add(1, std::memory_order_relaxed);
    if (!on_event(c, events[i].events)) waiting = true;
  }
  if (cancel_flag.load(std::memory_order_acquire)) {
    take_handoffs();
    std::string message;
    {
      std::lock_guard<std::mutex> lock(mu);
      message = cancel_message;
    }
    cancel_everything(message);
  } else if (abandon_flag.exchange(false, std::memory_order_acq_rel)) {
    take_handoffs();
    std::string message;
    {
      std::lock_guard<std::mutex> lock(mu);
      message = abandon_message;
    }
    cancel_everything(message);
  }
  if (now_ns() >= next_timer_ns) check_timers();
  // Before the next wait, which may block: stats() must see what this turn delivered.
  flush_stats();
  return waiting;
}

void HttpClient::Impl::reactor_thread_turn(epoll_event* events, int max_events) {
  int64_t timeout_ns = -1;
  if (next_timer_ns != INT64_MAX) {
    const int64_t wait = next_timer_ns - now_ns();
    timeout_ns = wait <= 0 ? 0 : wait;
  }
  // Poll (timeout 0) while a recent request is outstanding; else block,
  // announced first so that a send wakes it (note_send).
  bool polling = timeout_ns != 0 && should_poll();
  bool announced = false;
  // With reactor_writes it always announces: a handoff then wakes it only when it blocks.
  if (timeout_ns != 0 && !polling && (poll_budget_ns.load(std::memory_order_relaxed) > 0 || config.reactor_writes)) {
    reactor_blocked.store(true, std::memory_order_seq_cst);
    announced = true;
    polling = should_poll() || (config.reactor_writes && handoff_flag.load(std::memory_order_seq_cst));
    if (polling) {
      reactor_blocked.store(false, std::memory_order_relaxed);
      announced = false;
    }
  }
  if (polling) {
    timeout_ns = 0;
  } else if (timeout_ns != 0 && outstanding.load(std::memory_order_relaxed) > 0) {
    blocking_waits.fetch_add(1, std::memory_order_relaxed);
  }
  const int n = wait_events(events, max_events, timeout_ns, true);
  if (announced) reactor_blocked.store(false, std::memory_order_relaxed);
  if (stopping.load(std::memory_order_acquire)) return;
  // The issue thread is mid-write on a connection with news: let it
  // finish. An empty poll does not yield: a yielded thread is queued
  // behind whatever else runs on its CPU (another process's whole time
  // slice, milliseconds), where a blocked one is woken ahead of it.
  const bool waiting = handle_events(events, n, polling, false);
  sink->on_turn_end(-1);
  if (waiting) yield_cpu();
}

void HttpClient::Impl::run_reactor() {
  if (config.reactor_cpu >= 0) prepare_issue_thread(config.reactor_cpu);
  epoll_event events[kMaxEvents];
  while (!stopping.load(std::memory_order_acquire)) {
    if (inline_wanted.load(std::memory_order_acquire)) {
      // The issue thread runs the turns while it issues (begin_inline).
      std::unique_lock<std::mutex> park(park_mu);
      park_cv.wait(park, [&] {
        return !inline_wanted.load(std::memory_order_acquire) || stopping.load(std::memory_order_acquire);
      });
      continue;
    }
    std::lock_guard<std::mutex> turn(reactor_mu);
    if (inline_wanted.load(std::memory_order_acquire)) continue;
    reactor_thread_turn(events, kMaxEvents);
    read_reactor_cpu();
  }
  std::lock_guard<std::mutex> turn(reactor_mu);
  flush_stats();
  last_cpu_read_ns = 0;
  read_reactor_cpu();
}

void HttpClient::Impl::read_reactor_cpu() {
  // A syscall (no vDSO for thread CPU clocks): once a millisecond at most.
  const int64_t now = now_ns();
  if (now - last_cpu_read_ns < kCpuReadNs) return;
  last_cpu_read_ns = now;
  timespec cpu{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
    reactor_cpu_ns.store(static_cast<int64_t>(cpu.tv_sec) * 1'000'000'000 + cpu.tv_nsec, std::memory_order_relaxed);
}

bool HttpClient::Impl::begin_inline() {
  if (!started || stopped.load(std::memory_order_acquire)) return false;
  {
    std::lock_guard<std::mutex> park(park_mu);
    inline_wanted.store(true, std::memory_order_seq_cst);
  }
  // A reactor blocked in epoll_wait returns, ends its turn and parks.
  wake();
  return true;
}

void HttpClient::Impl::end_inline() {
  {
    // What the last inline turn deferred goes now: the reactor thread may block first.
    std::lock_guard<std::mutex> turn(reactor_mu);
    sink->on_turn_end(-1);
  }
  {
    std::lock_guard<std::mutex> park(park_mu);
    inline_wanted.store(false, std::memory_order_seq_cst);
  }
  park_cv.notify_all();
}

int64_t HttpClient::Impl::wait_inline(int64_t target_ns, int64_t spin_window_ns, bool yield_while_spinning) {
  std::unique_lock<std::mutex> turn(reactor_mu);
  // Closed meanwhile (stop() tears the reactor down under this lock): a plain wait.
  if (stopping.load(std::memory_order_acquire) || epfd < 0) {
    turn.unlock();
    return wait_until_ns(target_ns, spin_window_ns, yield_while_spinning);
  }
  epoll_event events[kMaxEvents];
  for (;;) {
    const int64_t now = now_ns();
    if (now >= target_ns) return now;
    // Blocks in epoll until the spin window (responses are read as they
    // come), then polls it until the due time, yielding between polls
    // (unless pinned) until the last kHardSpinNs, as wait_until_ns spins.
    int64_t timeout_ns = target_ns - spin_window_ns - now;
    if (timeout_ns <= 0) {
      timeout_ns = 0;
    } else if (next_timer_ns != INT64_MAX) {
      timeout_ns = std::min(timeout_ns, std::max<int64_t>(next_timer_ns - now, 0));
    }
    const int n = wait_events(events, kMaxEvents, timeout_ns, false);
    handle_events(events, n, false, true);
    const int64_t next = target_ns - spin_window_ns - now_ns();
    sink->on_turn_end(next > 0 ? next : 0);
    if (stopping.load(std::memory_order_acquire)) {
      turn.unlock();
      return wait_until_ns(target_ns, spin_window_ns, yield_while_spinning);
    }
    if (timeout_ns == 0 && n <= 0 && yield_while_spinning && target_ns - now_ns() > kHardSpinNs) yield_cpu();
  }
}

}  // namespace loadgen

#endif  // __linux__

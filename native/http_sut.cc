#include "http_sut.h"

#include <algorithm>
#include <thread>

#include "clock.h"
#include "dispatch.h"
#include "series.h"
#include "session.h"

namespace loadgen {

HttpSut::HttpSut(HttpClientConfig config, uint32_t client_threads)
    : streams_(config.stream_bodies), node_count_(config.nodes.size()) {
  // The binding checks the count against the connections; here it is only kept in range.
  const uint32_t n = std::max<uint32_t>(1, std::min({client_threads, kMaxClientThreads,
                                                     std::max<uint32_t>(1, config.connections_per_node)}));
  const uint32_t total = config.connections_per_node;
  // Several client threads: each reactor reads its connections and writes their requests (reactor_writes).
  if (n > 1) {
    config.inline_reactor = false;
    config.reactor_writes = true;
  }
  for (uint32_t k = 0; k < n; ++k) {
    HttpClientConfig share = config;
    share.connections_per_node = std::max<uint32_t>(1, total / n + (k < total % n ? 1 : 0));
    if (n > 1) share.thread_name = "loadgen-http-" + std::to_string(k + 1);
    clients_.push_back(std::make_unique<HttpClient>(std::move(share), this));
    if (k > 0) clients_[k]->share_requests(*clients_[0]);
  }
}

HttpSut::~HttpSut() {
  detach();
  // Stops the reactors first: no on_outcome runs once the members go.
  stop();
}

void HttpSut::clear_requests() {
  if (outstanding() != 0) return;
  clients_[0]->clear_requests();
}

bool HttpSut::start(std::string* error) {
  for (auto& c : clients_) {
    if (c->start(error)) continue;
    stop();
    return false;
  }
  return true;
}

void HttpSut::stop() {
  for (auto& c : clients_) c->stop();
}

void HttpSut::cancel_all(const std::string& message) {
  for (auto& c : clients_) c->cancel_all(message);
}

uint64_t HttpSut::outstanding() const {
  uint64_t sum = 0;
  for (const auto& c : clients_) sum += c->outstanding();
  return sum;
}

void HttpSut::copy_node_stats(double* out) const {
  clients_[0]->copy_node_stats(out);
  if (clients_.size() == 1) return;
  const size_t nodes = node_count_;
  std::vector<double> more(nodes * kNodeStatsLength);
  for (size_t k = 1; k < clients_.size(); ++k) {
    clients_[k]->copy_node_stats(more.data());
    for (size_t i = 0; i < more.size(); ++i) {
      // The slice's one maximum (http_client_impl.h kStatMaxNs); every other entry is a count or a sum.
      out[i] = i % kNodeStatsLength == kNodeStatsMaxOffset ? std::max(out[i], more[i]) : out[i] + more[i];
    }
  }
}

HttpReactorCounts HttpSut::reactor_counts() const {
  HttpReactorCounts sum;
  for (const HttpReactorCounts& c : thread_counts()) {
    sum.polled_events += c.polled_events;
    sum.inline_events += c.inline_events;
    sum.blocking_waits += c.blocking_waits;
    sum.send_wakes += c.send_wakes;
    sum.poll_budget_ns = std::max(sum.poll_budget_ns, c.poll_budget_ns);
    sum.opened_connections += c.opened_connections;
    sum.refused_connections += c.refused_connections;
    sum.retried_requests += c.retried_requests;
    sum.responses += c.responses;
    sum.reactor_cpu_ns += c.reactor_cpu_ns;
    sum.handed_writes += c.handed_writes;
  }
  return sum;
}

std::vector<HttpReactorCounts> HttpSut::thread_counts() const {
  std::vector<HttpReactorCounts> counts;
  for (const auto& c : clients_) counts.push_back(c->reactor_counts());
  return counts;
}

HttpClient& HttpSut::pick_client() {
  const size_t n = clients_.size();
  if (n == 1) return *clients_[0];
  size_t best = next_client_;
  uint64_t least = clients_[best]->outstanding();
  for (size_t i = 1; i < n && least != 0; ++i) {
    const size_t k = (next_client_ + i) % n;
    const uint64_t o = clients_[k]->outstanding();
    if (o < least) {
      least = o;
      best = k;
    }
  }
  next_client_ = (best + 1) % n;
  return *clients_[best];
}

void HttpSut::attach(Session* session) {
  // A new run's series is not known yet; the old one goes with its session.
  series_.store(nullptr, std::memory_order_seq_cst);
  host_wake_interval_ns_.store(kHostWakeIntervalNs, std::memory_order_relaxed);
  abandoning_.store(false, std::memory_order_seq_cst);
  session_.store(session, std::memory_order_seq_cst);
  // An outcome that loaded the old pointer finishes before the session may go.
  while (in_outcome_.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
}

void HttpSut::take_host_responses(std::vector<HttpOutcome>* out) {
  // Cleared before taking: a response queued after the take wakes the host again.
  host_wake_pending_.store(false, std::memory_order_seq_cst);
  std::lock_guard<std::mutex> lock(host_mutex_);
  for (HttpOutcome& o : host_responses_) out->push_back(std::move(o));
  host_responses_.clear();
}

void HttpSut::take_stream_events(std::vector<HttpStreamEvent>* events, std::vector<uint8_t>* bytes) {
  host_wake_pending_.store(false, std::memory_order_seq_cst);
  events->clear();
  bytes->clear();
  std::lock_guard<std::mutex> lock(host_mutex_);
  events->swap(stream_events_);
  bytes->swap(stream_bytes_);
}

void HttpSut::push_stream_event(HttpStreamEvent event, const uint8_t* bytes, size_t size) {
  {
    std::lock_guard<std::mutex> lock(host_mutex_);
    event.offset = stream_bytes_.size();
    event.size = size;
    if (size > 0) stream_bytes_.insert(stream_bytes_.end(), bytes, bytes + size);
    stream_events_.push_back(event);
  }
  request_host_wake();
}

void HttpSut::request_host_wake() {
  // A wake that is out makes the host take everything queued (it clears the
  // flag before it takes): nothing to add.
  if (host_wake_pending_.load(std::memory_order_seq_cst)) return;
  if (HttpClient::in_reactor_turn()) {
    const int64_t now = now_ns();
    if (now - last_host_wake_ns_.load(std::memory_order_relaxed) < host_wake_interval_ns()) {
      host_wake_deferred_.store(true, std::memory_order_seq_cst);
      return;
    }
    return wake_host(now);
  }
  wake_host(-1);
}

void HttpSut::wake_host(int64_t now) {
  if (now >= 0) last_host_wake_ns_.store(now, std::memory_order_relaxed);
  if (!host_wake_pending_.exchange(true, std::memory_order_seq_cst) && host_wake_) host_wake_();
}

void HttpSut::on_turn_end(int64_t next_wait_ns) {
  if (!host_wake_deferred_.load(std::memory_order_seq_cst)) return;
  const int64_t now = now_ns();
  const int64_t interval = host_wake_interval_ns();
  // Another turn comes within the interval: it decides.
  if (next_wait_ns >= 0 && next_wait_ns < interval && now - last_host_wake_ns_.load(std::memory_order_relaxed) < interval)
    return;
  host_wake_deferred_.store(false, std::memory_order_seq_cst);
  wake_host(now);
}

void HttpSut::push_chunk(const HttpBodyChunk& chunk, HttpStreamEvent::Kind kind) {
  in_outcome_.fetch_add(1, std::memory_order_seq_cst);
  // Bytes of a request no attached run issued belong to no series: dropped.
  if (session_.load(std::memory_order_seq_cst) != nullptr) {
    HttpStreamEvent event;
    event.tag = chunk.tag;
    event.index = chunk.index;
    event.node = chunk.node;
    event.stamp_ns = chunk.read_ns;
    event.kind = kind;
    push_stream_event(event, chunk.data, chunk.size);
  }
  in_outcome_.fetch_sub(1, std::memory_order_seq_cst);
}

void HttpSut::on_body(const HttpBodyChunk& chunk) { push_chunk(chunk, HttpStreamEvent::kData); }

void HttpSut::on_headers(const HttpBodyChunk& chunk) { push_chunk(chunk, HttpStreamEvent::kHeaders); }

void HttpSut::set_secrets(const std::vector<std::u16string>& secrets) {
  auto redactor = std::make_shared<const SecretRedactor>(secrets);
  std::lock_guard<std::mutex> lock(secrets_mutex_);
  secrets_ = redactor->empty() ? nullptr : std::move(redactor);
}

std::string HttpSut::redact(const std::string& text) const {
  std::shared_ptr<const SecretRedactor> secrets;
  {
    std::lock_guard<std::mutex> lock(secrets_mutex_);
    secrets = secrets_;
  }
  return secrets == nullptr ? text : secrets->redact(text);
}

namespace {

// The client's own messages quote a server's bytes only in an error
// status's body excerpt; the others (connects, framing errors, timeouts,
// cancels) are loadgen's text. Only those are redacted, so that no failure
// made on the issue thread (send's: a node in backoff) takes the lock.
std::string failure_message(const HttpSut& sut, const HttpOutcome& outcome) {
  return outcome.kind == FailureKind::HttpStatus ? sut.redact(outcome.message) : outcome.message;
}

}  // namespace

void HttpSut::abandon_outstanding(const std::string& message) {
  abandoning_.store(true, std::memory_order_seq_cst);
  for (auto& c : clients_) c->cancel_outstanding(message);
}

int64_t HttpSut::host_wake_interval_for(const Series& series) {
  const uint64_t queries = series.trace.query_count();
  if (series.scenario != Scenario::Server || queries == 0) return kHostWakeIntervalNs;
  const int64_t mean_gap = series.trace.scheduled_delta_ns.back() / static_cast<int64_t>(queries);
  return std::clamp<int64_t>(kHostWakeGaps * mean_gap, kHostWakeIntervalNs, kMaxHostWakeIntervalNs);
}

void HttpSut::series_started(Series& series) {
  abandoning_.store(false, std::memory_order_seq_cst);
  host_wake_interval_ns_.store(host_wake_interval_for(series), std::memory_order_relaxed);
  series_.store(&series, std::memory_order_release);
}

bool HttpSut::host_reads_body(uint64_t id) const {
  if (host_reads_every_body_) return true;
  // Set by series_started of the attached session's run (its series live as long as it).
  const Series* series = series_.load(std::memory_order_acquire);
  if (series == nullptr || id < series->first_id) return false;
  const uint64_t k = id - series->first_id;
  const auto& sampled = series->trace.accuracy_log_sampled;
  return k < sampled.size() && sampled[k] != 0;
}

void HttpSut::issue(Series& series, uint64_t first, uint64_t last) {
  stamp_dispatched(series, first, last + 1, 1, now_ns() - series.start_ns);
  const uint64_t spq = series.samples_per_query;
  const auto& indices = series.trace.sample_index;
  const auto& sampled = series.trace.accuracy_log_sampled;
  for (uint64_t k = first * spq, end = (last + 1) * spq; k < end; ++k) {
    const bool keep_body = host_reads_every_body_ || (k < sampled.size() && sampled[k] != 0);  // host_reads_body()
    pick_client().send(series.first_id + k, static_cast<uint32_t>(indices[k]), keep_body);
  }
}

void HttpSut::on_outcome(HttpOutcome& outcome) {
  in_outcome_.fetch_add(1, std::memory_order_seq_cst);
  Session* session = session_.load(std::memory_order_seq_cst);
  const bool abandoned = !outcome.ok && outcome.kind == FailureKind::Cancelled &&
                         abandoning_.load(std::memory_order_seq_cst);
  if (session != nullptr && !abandoned) {
    const double id = static_cast<double>(outcome.tag);
    if (streams_) {
      // The host ran the response's reader on its bytes: it completes the sample.
      HttpStreamEvent event;
      event.tag = outcome.tag;
      event.index = outcome.index;
      event.node = outcome.node;
      event.stamp_ns = outcome.done_ns;
      event.sent_ns = outcome.sent_ns;
      if (outcome.ok) {
        event.kind = HttpStreamEvent::kEnd;
        push_stream_event(event, nullptr, 0);
      } else {
        event.kind = HttpStreamEvent::kFailed;
        event.failure = outcome.kind;
        const std::string message = failure_message(*this, outcome);
        push_stream_event(event, reinterpret_cast<const uint8_t*>(message.data()), message.size());
      }
    } else if (!outcome.ok && !host_reads_every_outcome_) {
      session->fail(outcome.done_ns, id, outcome.kind, failure_message(*this, outcome));
    } else if (!outcome.ok || host_reads_body(outcome.tag)) {
      // Kept bodies (even empty ones) are the host's to read and complete;
      // so are failures when the host logs every request.
      if (!outcome.ok) outcome.message = failure_message(*this, outcome);
      {
        std::lock_guard<std::mutex> lock(host_mutex_);
        host_responses_.push_back(std::move(outcome));
      }
      request_host_wake();
    } else {
      session->complete_at(outcome.done_ns, &id, 1);
    }
  }
  in_outcome_.fetch_sub(1, std::memory_order_seq_cst);
}

}  // namespace loadgen

#include "http_sut.h"

#include <algorithm>
#include <thread>

#include "clock.h"
#include "dispatch.h"
#include "series.h"
#include "session.h"

namespace loadgen {

HttpSut::HttpSut(HttpClientConfig config)
    : streams_(config.stream_bodies), client_(std::make_unique<HttpClient>(std::move(config), this)) {}

HttpSut::~HttpSut() {
  detach();
  // Stops the reactor first: no on_outcome runs once the members go.
  client_->stop();
}

void HttpSut::attach(Session* session) {
  // A new run's series is not known yet; the old one goes with its session.
  series_.store(nullptr, std::memory_order_seq_cst);
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
    if (now - last_host_wake_ns_.load(std::memory_order_relaxed) < kHostWakeIntervalNs) {
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
  // Another turn comes within the interval: it decides.
  if (next_wait_ns >= 0 && next_wait_ns < kHostWakeIntervalNs &&
      now - last_host_wake_ns_.load(std::memory_order_relaxed) < kHostWakeIntervalNs)
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
  client_->cancel_outstanding(message);
}

void HttpSut::series_started(Series& series) {
  abandoning_.store(false, std::memory_order_seq_cst);
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
    client_->send(series.first_id + k, static_cast<uint32_t>(indices[k]), keep_body);
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

#include "js_host.h"

#include "bindings/env_teardown.h"
#include "bindings/process_state.h"
#include "native/clock.h"

namespace loadgen_addon {

JsHost::JsHost(Napi::Env env, Napi::Function dispatcher, loadgen::SessionConfig config)
    : session_(std::make_unique<loadgen::Session>(std::move(config), this)) {
  // Unbounded queue (0): BlockingCall never blocks, and wakes are coalesced by
  // the session, so the queue stays short.
  tsfn_ = Tsfn::New(env, dispatcher, "loadgen", 0, 1, this);
}

JsHost::~JsHost() { shutdown(); }

void JsHost::post(HostEvent* event) {
  if (tsfn_.BlockingCall(event) != napi_ok && event->kind != HostEventKind::Drain) delete event;
}

void JsHost::CallJs(Napi::Env env, Napi::Function dispatcher, JsHost* host, HostEvent* event) {
  // Drain events are the host's one reusable object; every other event is
  // heap-allocated and owned here. Decided by kind, without touching `host`,
  // which may be gone when the TSFN is torn down (env == nullptr).
  std::unique_ptr<HostEvent> owned(event->kind == HostEventKind::Drain ? nullptr : event);
  if (env == nullptr || dispatcher.IsEmpty()) return;
  run_in_env(
      env,
      [&] {
        switch (event->kind) {
          case HostEventKind::Drain: {
            // Woken ahead of a Server query, this waits for it; and while the
            // next one is due within the lead, it stays for that one too
            // (Session::drain_published, hold_drain_for_next_due).
            loadgen::Session& s = host->session();
            // Bounded, so the event loop still turns (timers, I/O, promises).
            const int64_t hold_until = loadgen::now_ns() + loadgen::Session::kMaxDrainHoldNs;
            bool first = true;
            do {
              const uint64_t published = s.drain_published(host->drained_);
              if (!first && published == host->drained_) continue;
              first = false;
              host->drained_ = published;
              dispatcher.Call({Napi::Number::New(env, static_cast<int>(event->kind)),
                               Napi::Number::New(env, static_cast<double>(published))});
            } while (loadgen::now_ns() < hold_until && s.hold_drain_for_next_due());
            break;
          }
          case HostEventKind::Load:
          case HostEventKind::Unload: {
            auto array = Napi::Uint32Array::New(env, event->indices.size());
            std::copy(event->indices.begin(), event->indices.end(), array.Data());
            dispatcher.Call({Napi::Number::New(env, static_cast<int>(event->kind)), array,
                             Napi::Number::New(env, static_cast<double>(event->token))});
            break;
          }
          case HostEventKind::SeriesStarted:
            // A token: the session waits until the dispatcher acknowledges it (await_series_started).
            if (event->token != 0) {
              dispatcher.Call({Napi::Number::New(env, static_cast<int>(event->kind)), env.Undefined(),
                               Napi::Number::New(env, static_cast<double>(event->token))});
            } else {
              dispatcher.Call({Napi::Number::New(env, static_cast<int>(event->kind))});
            }
            break;
          default:
            dispatcher.Call({Napi::Number::New(env, static_cast<int>(event->kind))});
            break;
        }
      },
      [&](const std::string& message) {
        // The dispatcher catches everything itself; reaching here means
        // loadgen's own JS failed. End the run rather than leave it hanging.
        // (An environment going away gets here never: its teardown ends the run.)
        host->session().abort("internal dispatcher error: " + message);
        if (event->token != 0) host->acknowledge(event->token, message);
      });
}

bool JsHost::call_and_wait(HostEvent* event, std::string* error) {
  {
    std::lock_guard<std::mutex> lock(ack_mutex_);
    if (closing_) {
      delete event;
      *error = "the JavaScript environment is shutting down";
      return false;
    }
    event->token = ++next_token_;
    awaited_token_ = event->token;
    ack_received_ = false;
    ack_error_.clear();
  }
  if (tsfn_.BlockingCall(event) != napi_ok) {
    delete event;
    *error = "the JavaScript environment is shutting down";
    return false;
  }
  std::unique_lock<std::mutex> lock(ack_mutex_);
  ack_cv_.wait(lock, [&] { return ack_received_ || closing_; });
  if (!ack_received_) {
    *error = "the JavaScript environment is shutting down";
    return false;
  }
  if (!ack_error_.empty()) {
    *error = ack_error_;
    return false;
  }
  return true;
}

bool JsHost::acknowledge(uint64_t token, const std::string& error) {
  std::lock_guard<std::mutex> lock(ack_mutex_);
  if (token == 0 || token != awaited_token_ || ack_received_) return false;
  ack_received_ = true;
  ack_error_ = error;
  ack_cv_.notify_all();
  return true;
}

bool JsHost::load_samples(const std::vector<loadgen::SampleIndex>& indices, std::string* error) {
  return call_and_wait(new HostEvent{HostEventKind::Load, indices, 0}, error);
}

bool JsHost::unload_samples(const std::vector<loadgen::SampleIndex>& indices, std::string* error) {
  return call_and_wait(new HostEvent{HostEventKind::Unload, indices, 0}, error);
}

void JsHost::series_started() { post(new HostEvent{HostEventKind::SeriesStarted, {}, 0}); }

// The native HTTP client hands responses to JS on its own threadsafe function,
// which JS may serve before this one: without the wait, a run's first responses
// could be read before JS knew the series (their bodies not logged, their
// tokens not counted).
bool JsHost::await_series_started(std::string* error) {
  return call_and_wait(new HostEvent{HostEventKind::SeriesStarted, {}, 0}, error);
}
void JsHost::wake() { post(&drain_event_); }
void JsHost::flush_queries() { post(new HostEvent{HostEventKind::Flush, {}, 0}); }
void JsHost::finished() { post(new HostEvent{HostEventKind::Finished, {}, 0}); }

std::vector<uint64_t> JsHost::wait_for_issue_threads(uint64_t n, int64_t timeout_ms) {
  return ProcessState::instance().ports().wait_for(n, timeout_ms);
}

void JsHost::use_issue_threads(uint64_t count) {
  issue_ports_ = ProcessState::instance().ports().take(count);
  if (issue_ports_.size() < count) session_->abort("a registered issue-query thread went away before the series");
  // Each thread learns its role before any of this series' drains (same FIFO queue).
  for (uint64_t i = 0; i < issue_ports_.size(); ++i) issue_ports_[i]->post_series(i, count);
}

void JsHost::wake_issue_thread(uint64_t t) {
  if (t < issue_ports_.size()) issue_ports_[t]->post_drain();
}

std::vector<uint64_t> JsHost::wait_for_dispatch_workers(uint64_t n, int64_t timeout_ms) {
  std::vector<uint64_t> ids = ProcessState::instance().ports().wait_for(n, timeout_ms, PortRole::DispatchWorker);
  // Marked as in the run: a worker whose environment goes away now aborts it.
  ProcessState::instance().ports().take(n, PortRole::DispatchWorker);
  return ids;
}

void JsHost::finish() {
  session_->join();
  if (!tsfn_released_) {
    tsfn_released_ = true;
    tsfn_.Release();
  }
}

void JsHost::shutdown() {
  {
    std::lock_guard<std::mutex> lock(ack_mutex_);
    closing_ = true;
    ack_cv_.notify_all();
  }
  session_->abort("the JavaScript environment is shutting down");
  if (!tsfn_released_) {
    tsfn_released_ = true;
    tsfn_.Abort();
  }
  session_->join();
}

}  // namespace loadgen_addon

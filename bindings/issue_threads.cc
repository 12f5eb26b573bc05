#include "issue_threads.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "bindings/env_teardown.h"
#include "bindings/process_state.h"

namespace loadgen_addon {

namespace {

// Drain events carry nothing: one immutable object, so waking never allocates
// and its kind stays readable even while a TSFN is torn down. CallJs never
// writes through it (the TSFN's data type is not const).
const PortEvent kDrainEvent{PortEventKind::Drain, 0, 0};

}  // namespace

void UseGuard::close() {
  closed_.store(true, std::memory_order_seq_cst);
  while (users_.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
}

// ---- IssueThreadPort ----

std::shared_ptr<IssueThreadPort> IssueThreadPort::create(Napi::Env env, Napi::Function dispatcher, double thread_id,
                                                         PortRole role) {
  auto port = std::make_shared<IssueThreadPort>();
  port->thread_id_ = thread_id;
  port->role_ = role;
  port->serial_ = ProcessState::instance().next_port_serial();
  port->self_ = port;
  // Unbounded queue: BlockingCall never blocks; drains are coalesced by the session.
  port->tsfn_ = Tsfn::New(env, dispatcher, "loadgen-issue-thread", 0, 1, port.get(),
                          [](Napi::Env, void*, IssueThreadPort* p) {
                            std::shared_ptr<IssueThreadPort> last = std::move(p->self_);
                          },
                          static_cast<void*>(nullptr));
  port->guard_.open();
  return port;
}

void IssueThreadPort::CallJs(Napi::Env env, Napi::Function dispatcher, IssueThreadPort* port, PortEvent* event) {
  std::unique_ptr<PortEvent> owned(event->kind == PortEventKind::Drain ? nullptr : event);
  if (env == nullptr || dispatcher.IsEmpty()) return;
  double published = 0;
  double first_id = 0;
  if (event->kind != PortEventKind::Released) {
    SharedSession shared;
    loadgen::Session* s = shared.get();
    if (s == nullptr || !s->has_series()) return;  // the run is over; Released follows
    const uint64_t index = event->kind == PortEventKind::Drain ? port->index_.load() : event->index;
    s->begin_thread_drain(index);
    published = static_cast<double>(s->published_queries());
    first_id = static_cast<double>(s->first_id());
  }
  run_in_env(
      env,
      [&] {
        switch (event->kind) {
          case PortEventKind::Drain:
            dispatcher.Call(
                {Napi::Number::New(env, 0), Napi::Number::New(env, published), Napi::Number::New(env, first_id)});
            break;
          case PortEventKind::SeriesStarted:
            dispatcher.Call({Napi::Number::New(env, 1), Napi::Number::New(env, published),
                             Napi::Number::New(env, first_id),
                             Napi::Number::New(env, static_cast<double>(event->index)),
                             Napi::Number::New(env, static_cast<double>(event->stride))});
            break;
          case PortEventKind::Released:
            dispatcher.Call({Napi::Number::New(env, 2)});
            break;
        }
      },
      [](const std::string& message) {
        // The JS dispatcher catches everything itself; reaching here is loadgen's own bug.
        SharedSession shared;
        if (shared.get() != nullptr) shared.get()->abort("internal issue-thread dispatcher error: " + message);
      });
}

void IssueThreadPort::post_drain() {
  if (!guard_.enter()) return;
  tsfn_.BlockingCall(const_cast<PortEvent*>(&kDrainEvent));
  guard_.leave();
}

void IssueThreadPort::post_series(uint64_t index, uint64_t stride) {
  index_.store(index);
  if (!guard_.enter()) return;
  auto* event = new PortEvent{PortEventKind::SeriesStarted, index, stride};
  if (tsfn_.BlockingCall(event) != napi_ok) delete event;
  guard_.leave();
}

void IssueThreadPort::release() {
  std::lock_guard<std::mutex> lock(release_mutex_);
  if (released_) return;
  released_ = true;
  guard_.close();  // no issue-path call is inside the TSFN any more
  auto* event = new PortEvent{PortEventKind::Released, 0, 0};
  if (tsfn_.BlockingCall(event) != napi_ok) delete event;
  tsfn_.Release();  // the queued events still run; then its event loop may exit
}

void IssueThreadPort::teardown() {
  {
    std::lock_guard<std::mutex> lock(release_mutex_);
    if (!released_) {
      released_ = true;
      guard_.close();
      tsfn_.Abort();
    }
  }
  ProcessState::instance().ports().remove(serial_);
  if (in_run.load()) {
    SharedSession shared;
    if (shared.get() != nullptr) {
      // Named by its threadId, as the detail log's registration lines name it.
      char thread[32];  // a JS number: printed, never cast
      std::snprintf(thread, sizeof thread, "%.0f", thread_id_);
      shared.get()->abort(role_ == PortRole::DispatchWorker
                              ? std::string("dispatch worker thread ") + thread + " ended during the run"
                              : std::string("registered issue-query thread ") + thread + " ended during the run");
    }
  }
}

// ---- IssueThreadRegistry ----

uint64_t IssueThreadRegistry::add(std::shared_ptr<IssueThreadPort> port) {
  std::lock_guard<std::mutex> lock(mutex_);
  ports_.push_back(std::move(port));
  cv_.notify_all();
  return ports_.size() - 1;
}

std::shared_ptr<IssueThreadPort> IssueThreadRegistry::remove(uint64_t serial) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = ports_.begin(); it != ports_.end(); ++it) {
    if ((*it)->serial() == serial) {
      auto port = *it;
      ports_.erase(it);
      return port;
    }
  }
  return nullptr;
}

std::vector<uint64_t> IssueThreadRegistry::wait_for(uint64_t n, int64_t timeout_ms, PortRole role) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto ids_of_role = [&] {
    std::vector<uint64_t> ids;
    for (const auto& port : ports_)
      if (port->role() == role) ids.push_back(static_cast<uint64_t>(port->thread_id()));
    return ids;
  };
  cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms),
               [&] { return ids_of_role().size() >= n; });
  return ids_of_role();
}

std::vector<std::shared_ptr<IssueThreadPort>> IssueThreadRegistry::take(uint64_t count, PortRole role) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<IssueThreadPort>> out;
  for (const auto& port : ports_) {
    if (out.size() >= count) break;
    if (port->role() != role) continue;
    port->in_run.store(true);
    out.push_back(port);
  }
  return out;
}

void IssueThreadRegistry::release_all() {
  std::vector<std::shared_ptr<IssueThreadPort>> ports;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ports.swap(ports_);
  }
  for (auto& port : ports) {
    port->in_run.store(false);
    port->release();
  }
}

// ---- Exports ----

Napi::Value register_thread_port(const Napi::CallbackInfo& info, PortRole role, const char* function_name) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsFunction() || !info[1].IsNumber())
    throw Napi::TypeError::New(env, std::string(function_name) + "(dispatcher, threadId) expects a function and a number");
  auto port = IssueThreadPort::create(env, info[0].As<Napi::Function>(), info[1].As<Napi::Number>().DoubleValue(), role);
  // After the TSFN was created, so it runs before the TSFN's own teardown
  // (cleanup hooks run last-in first-out). Holds the port until then.
  env.AddCleanupHook([port] { port->teardown(); });
  const uint64_t index = ProcessState::instance().ports().add(port);
  Napi::Object o = Napi::Object::New(env);
  o.Set("index", static_cast<double>(index));
  o.Set("serial", static_cast<double>(port->serial()));
  return o;
}

namespace {

// dispatch 'poll': how long before a query is due the polling thread stops
// turning its event loop and spins for it (and how long past due it waits
// for a late issue thread). Timers and I/O still run at least every ~100 us.
constexpr int64_t kPollSpinWindowNs = 50000;

// registerIssueThread(dispatcher, threadId) -> { index, serial }
Napi::Value RegisterIssueThread(const Napi::CallbackInfo& info) {
  return register_thread_port(info, PortRole::IssueThread, "registerIssueThread");
}

// unregisterIssueThread(serial) -> whether it was still registered
Napi::Value UnregisterIssueThread(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) return Napi::Boolean::New(env, false);
  auto port = ProcessState::instance().ports().remove(static_cast<uint64_t>(info[0].As<Napi::Number>().DoubleValue()));
  if (!port) return Napi::Boolean::New(env, false);
  if (port->in_run.load()) {
    SharedSession shared;
    if (shared.get() != nullptr) shared.get()->abort("a registered issue-query thread unregistered during the run");
  }
  port->release();
  return Napi::Boolean::New(env, true);
}

// publishedQueries() -> queries of the current series issued so far (0 without a run)
Napi::Value PublishedQueries(const Napi::CallbackInfo& info) {
  SharedSession shared;
  const double n = shared.get() != nullptr ? static_cast<double>(shared.get()->published_queries()) : 0;
  return Napi::Number::New(info.Env(), n);
}

// pollPublished(seen) -> publishedQueries(), spinning first (at most
// kPollSpinWindowNs past its due time) when the next Server query is due
// within kPollSpinWindowNs and nothing beyond `seen` is published yet.
Napi::Value PollPublished(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) throw Napi::TypeError::New(env, "pollPublished(seen) expects a number");
  const double seen = info[0].As<Napi::Number>().DoubleValue();
  // Out of range: nothing to wait for (a count is never negative or fractional).
  const uint64_t seen_count = seen >= 0 && seen < 9007199254740992.0 ? static_cast<uint64_t>(seen) : UINT64_MAX;
  SharedSession shared;
  const double n = shared.get() != nullptr ? static_cast<double>(shared.get()->poll_published(seen_count, kPollSpinWindowNs)) : 0;
  return Napi::Number::New(env, n);
}

}  // namespace

void register_issue_threads(Napi::Env env, Napi::Object exports) {
  exports.Set("registerIssueThread", Napi::Function::New(env, RegisterIssueThread, "registerIssueThread"));
  exports.Set("unregisterIssueThread", Napi::Function::New(env, UnregisterIssueThread, "unregisterIssueThread"));
  exports.Set("publishedQueries", Napi::Function::New(env, PublishedQueries, "publishedQueries"));
  exports.Set("pollPublished", Napi::Function::New(env, PollPublished, "pollPublished"));
  register_dispatch_workers(env, exports);
}

}  // namespace loadgen_addon

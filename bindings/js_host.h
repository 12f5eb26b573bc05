// The bridge between a core Session and the JS SUT/QSL of one environment.
// Native threads only enqueue events on one threadsafe function; everything
// that touches N-API happens in CallJs on the JS thread.
#pragma once

#include <napi.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bindings/issue_threads.h"
#include "native/session.h"

namespace loadgen_addon {

// Codes understood by the JS dispatcher (lib/native/addon.ts, HostEventKind).
enum class HostEventKind : int { Drain = 0, SeriesStarted = 1, Load = 2, Unload = 3, Flush = 4, Finished = 5 };

struct HostEvent {
  HostEventKind kind;
  std::vector<loadgen::SampleIndex> indices;
  uint64_t token = 0;
};

class JsHost : public loadgen::SessionHost {
 public:
  JsHost(Napi::Env env, Napi::Function dispatcher, loadgen::SessionConfig config);
  ~JsHost() override;

  loadgen::Session& session() { return *session_; }
  void start() { session_->start(); }

  // JS thread: the dispatcher finished a Load/Unload event, or took a
  // SeriesStarted event that carried a token. Returns false when `token` is
  // not the one awaited.
  bool acknowledge(uint64_t token, const std::string& error);
  // JS thread: the run is over (after Finished): join the thread, drop the TSFN.
  void finish();
  // Environment teardown: stop the run without calling into JS any more.
  void shutdown();

  // SessionHost (session thread).
  bool load_samples(const std::vector<loadgen::SampleIndex>& indices, std::string* error) override;
  bool unload_samples(const std::vector<loadgen::SampleIndex>& indices, std::string* error) override;
  void series_started() override;
  bool await_series_started(std::string* error) override;
  void wake() override;
  void flush_queries() override;
  void finished() override;
  std::vector<uint64_t> wait_for_issue_threads(uint64_t n, int64_t timeout_ms) override;
  void use_issue_threads(uint64_t count) override;
  void wake_issue_thread(uint64_t t) override;
  std::vector<uint64_t> wait_for_dispatch_workers(uint64_t n, int64_t timeout_ms) override;

 private:
  static void CallJs(Napi::Env env, Napi::Function dispatcher, JsHost* host, HostEvent* event);
  // Posts `event` (owned here) with a fresh token and waits for its acknowledgement.
  bool call_and_wait(HostEvent* event, std::string* error);
  void post(HostEvent* event);

  using Tsfn = Napi::TypedThreadSafeFunction<JsHost, HostEvent, &JsHost::CallJs>;
  Tsfn tsfn_;
  bool tsfn_released_ = false;
  std::unique_ptr<loadgen::Session> session_;
  HostEvent drain_event_{HostEventKind::Drain, {}, 0};  // reused: waking never allocates
  uint64_t drained_ = 0;  // published count the last drain handed over (JS thread only)
  // This series' registered issue threads (session thread only); query q goes to q % size.
  std::vector<std::shared_ptr<IssueThreadPort>> issue_ports_;

  std::mutex ack_mutex_;
  std::condition_variable ack_cv_;
  uint64_t next_token_ = 0;
  uint64_t awaited_token_ = 0;
  bool ack_received_ = false;
  bool closing_ = false;
  std::string ack_error_;
};

}  // namespace loadgen_addon

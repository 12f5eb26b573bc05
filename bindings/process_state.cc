#include "bindings/process_state.h"

#include <algorithm>

namespace loadgen_addon {

ProcessState& ProcessState::instance() {
  static ProcessState* state = new ProcessState();  // leaked on purpose (see the header)
  return *state;
}

void ProcessState::note_runtime_threads() {
  std::call_once(runtime_threads_noted_, [this] { runtime_threads_ = loadgen::other_process_threads(); });
}

int ProcessState::idle_runtime_threads(const std::vector<int64_t>& keep) {
  std::lock_guard<std::mutex> lock(runtime_threads_mutex_);
  if (runtime_threads_idle_ != -2) return runtime_threads_idle_;
  std::vector<loadgen::ProcessThread> threads;
  for (const loadgen::ProcessThread& t : runtime_threads_)
    if (std::find(keep.begin(), keep.end(), t.tid) == keep.end()) threads.push_back(t);
  runtime_threads_idle_ = loadgen::idle_threads(threads);
  return runtime_threads_idle_;
}

int ProcessState::runtime_threads_idle() {
  std::lock_guard<std::mutex> lock(runtime_threads_mutex_);
  return runtime_threads_idle_;
}

bool ProcessState::reserve_run(const void* owner) {
  const void* expected = nullptr;
  return run_owner_.compare_exchange_strong(expected, owner, std::memory_order_seq_cst);
}

void ProcessState::release_run(const void* owner) {
  const void* expected = owner;
  run_owner_.compare_exchange_strong(expected, nullptr, std::memory_order_seq_cst);
}

bool ProcessState::holds_run(const void* owner) const {
  return run_owner_.load(std::memory_order_seq_cst) == owner;
}

void ProcessState::share_session(loadgen::Session* session) {
  shared_session_.store(session, std::memory_order_seq_cst);
  shared_session_guard_.open();
}

void ProcessState::unshare_session() {
  shared_session_guard_.close();  // waits for calls already holding the session
  shared_session_.store(nullptr, std::memory_order_seq_cst);
}

void ProcessState::keep_worker_error(const uint8_t* data, size_t size) {
  std::lock_guard<std::mutex> lock(worker_error_mutex_);
  if (has_worker_error_) return;
  worker_error_.assign(data, data + size);
  has_worker_error_ = true;
}

bool ProcessState::take_worker_error(std::vector<uint8_t>* out) {
  std::lock_guard<std::mutex> lock(worker_error_mutex_);
  if (!has_worker_error_) return false;
  out->swap(worker_error_);
  worker_error_.clear();
  has_worker_error_ = false;
  return true;
}

SharedSession::SharedSession() {
  ProcessState& state = ProcessState::instance();
  entered_ = state.shared_session_guard_.enter();
  if (entered_) session_ = state.shared_session_.load(std::memory_order_seq_cst);
}

SharedSession::~SharedSession() {
  if (entered_) ProcessState::instance().shared_session_guard_.leave();
}

}  // namespace loadgen_addon

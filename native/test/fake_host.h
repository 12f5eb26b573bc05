// The C++ stand-in for the JS side of a session, shared by the run-level
// tests: a SessionHost that loads nothing, counts what the session asks of
// it and signals the end of the run. Tests derive from it and override only
// how they take queries (wake, flush, registrations).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "session.h"

namespace loadgen_test {

class FakeHost : public loadgen::SessionHost {
 public:
  bool load_samples(const std::vector<loadgen::SampleIndex>& indices, std::string*) override {
    loads.push_back(indices.size());
    return true;
  }
  bool unload_samples(const std::vector<loadgen::SampleIndex>&, std::string*) override {
    unloads.fetch_add(1);
    return true;
  }
  void series_started() override { series.fetch_add(1); }
  void wake() override { wakes.fetch_add(1); }
  void flush_queries() override { flushes.fetch_add(1); }
  void finished() override {
    std::lock_guard<std::mutex> lock(finish_mutex_);
    done_ = true;
    finish_cv_.notify_all();
  }

  // Before the session starts (hosts with threads of their own start them here).
  virtual void attach(loadgen::Session* session) { session_ = session; }
  void wait_finished() {
    std::unique_lock<std::mutex> lock(finish_mutex_);
    finish_cv_.wait(lock, [&] { return done_; });
  }
  // Runs `session` to its end with this host and returns its outcome.
  const loadgen::RunOutcome& run(loadgen::Session& session) {
    attach(&session);
    session.start();
    wait_finished();
    session.join();
    return session.outcome();
  }

  // The ids of query `q`'s samples in the current series.
  std::vector<double> query_ids(uint64_t q) const {
    const uint64_t spq = session_->trace().samples_per_query;
    std::vector<double> ids;
    for (uint64_t i = 0; i < spq; ++i) ids.push_back(static_cast<double>(session_->first_id() + q * spq + i));
    return ids;
  }
  // Completes every sample of query `q`; returns what Session::complete returns.
  uint64_t complete_query(uint64_t q, bool hand_over = false) {
    const std::vector<double> ids = query_ids(q);
    return session_->complete(ids.data(), ids.size(), hand_over);
  }

  std::vector<size_t> loads;  // session thread
  std::atomic<int> unloads{0}, series{0}, wakes{0}, flushes{0};

 protected:
  loadgen::Session* session_ = nullptr;

 private:
  std::mutex finish_mutex_;
  std::condition_variable finish_cv_;
  bool done_ = false;
};

// Completes queued ids at their due times from a thread of its own: a SUT
// that answers in the background. The ids are taken when a query is queued,
// so a late answer carries its own series' ids (stale in a later series).
class DelayedCompleter {
 public:
  ~DelayedCompleter() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    if (worker_.joinable()) worker_.join();
  }
  // Once, before the session starts.
  void start(loadgen::Session* session) {
    session_ = session;
    worker_ = std::thread([this] { work(); });
  }
  void add(std::vector<double> ids, std::chrono::steady_clock::time_point due) {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.emplace_back(std::move(ids), due);
    cv_.notify_all();
  }

 private:
  void work() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || !pending_.empty(); });
      if (stop_) return;
      auto item = std::move(pending_.front());
      pending_.pop_front();
      lock.unlock();
      std::this_thread::sleep_until(item.second);
      session_->complete(item.first.data(), item.first.size());
      lock.lock();
    }
  }

  loadgen::Session* session_ = nullptr;
  std::thread worker_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::pair<std::vector<double>, std::chrono::steady_clock::time_point>> pending_;
  bool stop_ = false;
};

}  // namespace loadgen_test

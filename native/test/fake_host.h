// The C++ stand-in for the JS side of a session, shared by the run-level
// tests: a SessionHost that loads nothing, counts what the session asks of
// it and signals the end of the run. Tests derive from it and override only
// how they take queries (wake, flush, registrations).
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
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

}  // namespace loadgen_test

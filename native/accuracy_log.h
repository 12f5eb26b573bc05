// mlperf_log_accuracy.json, streamed to disk by its own thread so that the
// threads completing samples only copy bytes and enqueue (spec/50 §5).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace loadgen {

struct AccuracyRecord {
  uint64_t seq_id = 0;
  uint64_t qsl_idx = 0;
  std::vector<uint8_t> data;
  // use_token_latencies (spec/50 §5): Offline adds token_count; the other
  // scenarios add token_data (the first-token response) and token_count.
  bool with_token_count = false;
  bool with_token_data = false;
  int64_t token_count = 0;
  std::vector<uint8_t> token_data;
};

class AccuracyLog {
 public:
  AccuracyLog() = default;
  ~AccuracyLog();
  AccuracyLog(const AccuracyLog&) = delete;
  AccuracyLog& operator=(const AccuracyLog&) = delete;

  // Creates/truncates the file and writes "[". Returns false if it cannot be opened.
  bool open(const std::string& path);
  // Thread-safe; never blocks on disk.
  void append(AccuracyRecord record);
  // Writes every pending record and the closing "\n]\n"; joins the writer.
  void close();
  uint64_t records_written() const { return written_; }
  bool is_open() const { return file_ != nullptr; }

  // One record's text as the reference writes it, without the leading
  // separator: { "seq_id" : N, "qsl_idx" : M, "data" : "HEX" } (plus the
  // token fields when set).
  static std::string format_record(const AccuracyRecord& record);

 private:
  void writer_loop();

  std::FILE* file_ = nullptr;
  std::thread writer_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<AccuracyRecord> queue_;
  bool closing_ = false;
  uint64_t written_ = 0;
};

}  // namespace loadgen

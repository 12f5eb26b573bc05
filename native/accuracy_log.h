// mlperf_log_accuracy.json, streamed to disk by its own thread so that the
// threads completing samples only copy bytes and enqueue (spec/50 §5).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <memory>
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
  // Any thread, on the issue path (a completing call logs a sampled
  // response): a slot of a preallocated ring, claimed with one CAS; no lock,
  // no allocation, no system call. The writer is woken once per kWakeBatch
  // records, otherwise it looks every kPollPeriod. A full ring (the writer
  // behind, e.g. an accuracy run at millions of samples/s) makes the caller
  // wait for a slot. Records from one thread are written in their order.
  void append(AccuracyRecord record);
  // Writes every pending record and the closing "\n]\n"; joins the writer.
  void close();
  uint64_t records_written() const { return written_; }
  bool is_open() const { return file_ != nullptr; }

  // One record's text as the reference writes it, without the leading
  // separator: { "seq_id" : N, "qsl_idx" : M, "data" : "HEX" } (plus the
  // token fields when set).
  static std::string format_record(const AccuracyRecord& record);

  // A futex wake per record cost a sampled completion ~7 us on a 2-vCPU VM
  // (an unsampled one costs ~0.2 us): TEST01 measured a fast SUT slower than
  // its base run. The writer takes the records in batches instead.
  static constexpr uint64_t kRingSlots = 4096;  // a power of two
  static constexpr uint64_t kWakeBatch = 1024;
  static constexpr std::chrono::milliseconds kPollPeriod{50};
  // Response buffers up to this size stay in their slot once written, and the
  // next append to the slot frees them on its own thread (the thread that
  // allocated them, as a rule: its allocator's fast path, never a free from
  // the writer's thread contending with it); larger ones the writer frees.
  static constexpr size_t kKeptBufferBytes = 512;

 private:
  struct Slot {
    // Vyukov's bounded queue: == position: free for the append at that
    // position; == position + 1: holds that append's record.
    std::atomic<uint64_t> sequence{0};
    AccuracyRecord record;
  };
  void writer_loop();
  // Writes the records appended so far, in ring order (writer thread, or
  // close() once the writer is gone).
  void write_pending();

  std::FILE* file_ = nullptr;
  std::atomic<bool> accepting_{false};  // open and not closing: append() enqueues
  std::thread writer_;
  std::unique_ptr<Slot[]> ring_;
  std::atomic<uint64_t> append_position_{0};
  uint64_t write_position_ = 0;  // the writer's
  std::mutex mutex_;             // the writer's wait only, never append's
  std::condition_variable cv_;
  bool closing_ = false;
  uint64_t written_ = 0;
};

}  // namespace loadgen

// mlperf_log_accuracy.json, streamed to disk by its own thread so that the
// threads completing samples only copy bytes and enqueue (spec/50 §5).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
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
 private:
  struct Slot;

 public:
  // Every slot of the ring has a buffer this large for its response bytes,
  // allocated and touched at open() (2 MiB in all), so logging a response
  // up to this size allocates nothing; a larger one goes into a vector of
  // the slot's own, allocated on the completing thread and freed by the
  // writer once written (a ring of kept large buffers could hold GBs).
  static constexpr size_t kSlotBytes = 512;

  // One record being written into its slot of the ring (append_with's `fill`).
  class Record {
   public:
    // Every field of a record without token fields; `size` bytes are copied.
    void set(uint64_t seq_id, uint64_t qsl_idx, const uint8_t* data, size_t size);
    // The same, the QSL index read from `*qsl_index` by the writer thread
    // (a series' sample_index entry, alive until close()): the completing
    // thread never loads that line, a cache miss for a sparse sample.
    void set_with_index_at(uint64_t seq_id, const uint32_t* qsl_index, const uint8_t* data, size_t size);
    // use_token_latencies: token_count (Offline), with token_data (the other
    // scenarios; the first-token response, copied).
    void set_token_count(int64_t count);
    void set_token_data(const uint8_t* data, size_t size);

   private:
    friend class AccuracyLog;
    Record(Slot& slot, uint8_t* buffer) : slot_(slot), buffer_(buffer) {}
    Slot& slot_;
    uint8_t* buffer_;  // the slot's kSlotBytes
  };

  AccuracyLog() = default;
  ~AccuracyLog();
  AccuracyLog(const AccuracyLog&) = delete;
  AccuracyLog& operator=(const AccuracyLog&) = delete;

  // Creates/truncates the file and writes "[". Returns false if it cannot be opened.
  bool open(const std::string& path);
  // Any thread, on the issue path (a completing call logs a sampled
  // response): a slot of a preallocated ring, claimed with one CAS, into
  // which `fill(Record&)` writes the record (Record::set first); no lock, no
  // allocation (up to kSlotBytes of response), no system call. The writer is
  // woken once per kWakeBatch records, otherwise it looks every kPollPeriod.
  // A full ring (the writer behind, e.g. an accuracy run at millions of
  // samples/s) makes the caller wait for a slot. Records from one thread are
  // written in their order. Nothing after close().
  template <typename Fill>
  void append_with(Fill&& fill) {
    uint64_t position = 0;
    Slot* slot = claim(&position);
    if (slot == nullptr) return;
    Record record(*slot, buffer_of(position));
    try {
      fill(record);
    } catch (...) {
      // The slot must still be handed on, or the writer would stop at it for good.
      slot->dropped = true;
      publish(slot, position);
      throw;
    }
    slot->dropped = false;
    publish(slot, position);
  }
  // Asks for the lines the next append writes (a hint; any thread).
  void prefetch_next() const;
  // A copy of `record` (tests).
  void append(const AccuracyRecord& record);
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

 private:
  // A record of a few bytes is written into one cache line of its slot and
  // one of its buffer; nothing else of the ring is touched.
  struct alignas(64) Slot {
    // Vyukov's bounded queue: == position: free for the append at that
    // position; == position + 1: holds that append's record.
    std::atomic<uint64_t> sequence{0};
    uint64_t seq_id = 0;
    uint64_t qsl_idx = 0;
    const uint32_t* qsl_index_at = nullptr;  // set: the QSL index is *qsl_index_at
    int64_t token_count = 0;
    size_t size = 0;  // of the response: in the slot's buffer, or in `large`
    bool with_token_count = false;
    bool with_token_data = false;
    bool dropped = false;  // its fill threw: nothing to write
    std::vector<uint8_t> large;
    std::vector<uint8_t> token_data;
  };
  // The slot of the next append (its position in `*position`), or null once
  // the log no longer accepts records; waits while the ring is full.
  Slot* claim(uint64_t* position);
  // Hands a filled slot to the writer.
  void publish(Slot* slot, uint64_t position);
  uint8_t* buffer_of(uint64_t position) const { return buffers_.get() + (position & (kRingSlots - 1)) * kSlotBytes; }
  void writer_loop();
  // Writes the records appended so far, in ring order (writer thread, or
  // close() once the writer is gone).
  void write_pending();

  std::FILE* file_ = nullptr;
  std::thread writer_;
  std::unique_ptr<Slot[]> ring_;
  std::unique_ptr<uint8_t[]> buffers_;  // kSlotBytes per slot
  // The appenders' line: apart from what the writer writes.
  alignas(64) std::atomic<bool> accepting_{false};  // open and not closing: append() enqueues
  std::atomic<uint64_t> append_position_{0};
  alignas(64) uint64_t write_position_ = 0;  // the writer's
  uint64_t written_ = 0;
  std::string text_;  // the writer's, reused for each record
  std::mutex mutex_;  // the writer's wait only, never append's
  std::condition_variable cv_;
  bool closing_ = false;
};

}  // namespace loadgen

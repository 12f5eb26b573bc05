#include "accuracy_log.h"

#include <utility>

namespace loadgen {

AccuracyLog::~AccuracyLog() { close(); }

bool AccuracyLog::open(const std::string& path) {
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) return false;
  std::fputs("[", file_);
  ring_ = std::make_unique<Slot[]>(kRingSlots);
  for (uint64_t i = 0; i < kRingSlots; ++i) ring_[i].sequence.store(i, std::memory_order_relaxed);
  append_position_.store(0, std::memory_order_relaxed);
  write_position_ = 0;
  closing_ = false;
  accepting_.store(true, std::memory_order_release);
  writer_ = std::thread([this] { writer_loop(); });
  return true;
}

void AccuracyLog::append(AccuracyRecord record) {
  uint64_t position = append_position_.load(std::memory_order_relaxed);
  Slot* slot = nullptr;
  for (;;) {
    if (!accepting_.load(std::memory_order_acquire)) return;
    slot = &ring_[position & (kRingSlots - 1)];
    const uint64_t sequence = slot->sequence.load(std::memory_order_acquire);
    const auto ahead = static_cast<int64_t>(sequence - position);
    if (ahead == 0) {
      if (append_position_.compare_exchange_weak(position, position + 1, std::memory_order_relaxed)) break;
    } else if (ahead < 0) {
      // Full: the writer is a whole ring behind. Wake it and wait for a slot.
      cv_.notify_one();
      std::this_thread::yield();
      position = append_position_.load(std::memory_order_relaxed);
    } else {
      position = append_position_.load(std::memory_order_relaxed);  // another thread took this one
    }
  }
  // Frees what the slot kept of its last record (see kKeptBufferBytes).
  slot->record = std::move(record);
  slot->sequence.store(position + 1, std::memory_order_release);
  // Only once a batch: notify_one is a futex wake when the writer waits.
  if ((position + 1) % kWakeBatch == 0) cv_.notify_one();
}

std::string AccuracyLog::format_record(const AccuracyRecord& record) {
  static const char kHex[] = "0123456789ABCDEF";
  auto append_hex = [](std::string& out, const std::vector<uint8_t>& bytes) {
    for (uint8_t byte : bytes) {
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xF]);
    }
  };
  std::string out = "{ \"seq_id\" : " + std::to_string(record.seq_id) + ", \"qsl_idx\" : " +
                    std::to_string(record.qsl_idx) + ", \"data\" : \"";
  out.reserve(out.size() + (record.data.size() + record.token_data.size()) * 2 + 64);
  append_hex(out, record.data);
  out += "\"";
  if (record.with_token_data) {
    out += ", \"token_data\" : \"";
    append_hex(out, record.token_data);
    out += "\"";
  }
  if (record.with_token_count || record.with_token_data) {
    out += ", \"token_count\" : " + std::to_string(record.token_count);
  }
  out += " }";
  return out;
}

void AccuracyLog::write_pending() {
  bool wrote = false;
  for (;;) {
    Slot& slot = ring_[write_position_ & (kRingSlots - 1)];
    // Not yet appended (or its append is still moving the record in): later.
    if (slot.sequence.load(std::memory_order_acquire) != write_position_ + 1) break;
    std::fputs(written_ == 0 ? "\n" : ",\n", file_);
    std::fputs(format_record(slot.record).c_str(), file_);
    ++written_;
    wrote = true;
    if (slot.record.data.capacity() > kKeptBufferBytes) std::vector<uint8_t>().swap(slot.record.data);
    if (slot.record.token_data.capacity() > kKeptBufferBytes) std::vector<uint8_t>().swap(slot.record.token_data);
    slot.sequence.store(write_position_ + kRingSlots, std::memory_order_release);
    ++write_position_;
  }
  if (wrote) std::fflush(file_);
}

void AccuracyLog::writer_loop() {
  for (;;) {
    bool closing = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait_for(lock, kPollPeriod, [&] {
        return closing_ || append_position_.load(std::memory_order_relaxed) - write_position_ >= kWakeBatch;
      });
      closing = closing_;
    }
    write_pending();
    if (closing) return;
  }
}

void AccuracyLog::close() {
  if (!file_) return;
  accepting_.store(false, std::memory_order_release);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  cv_.notify_one();
  if (writer_.joinable()) writer_.join();
  write_pending();  // an append that claimed its slot while the writer made its last pass
  std::fputs("\n]\n", file_);
  std::fclose(file_);
  file_ = nullptr;
}

}  // namespace loadgen

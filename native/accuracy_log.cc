#include "accuracy_log.h"

#include "core_threads.h"

#include <cstring>
#include <utility>

namespace loadgen {

namespace {

// Asks for a cache line ahead of its use, for writing; a hint only.
inline void prefetch_for_write(const void* address) {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(address, 1, 3);
#else
  (void)address;
#endif
}

void append_hex(std::string& out, const uint8_t* bytes, size_t size) {
  static const char kHex[] = "0123456789ABCDEF";
  for (size_t i = 0; i < size; ++i) {
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 0xF]);
  }
}

// The reference's record text (spec/50 §5), appended to `out`.
void append_record(std::string& out, uint64_t seq_id, uint64_t qsl_idx, const uint8_t* data, size_t size,
                   bool with_token_count, bool with_token_data, int64_t token_count, const std::vector<uint8_t>& token_data) {
  out += "{ \"seq_id\" : ";
  out += std::to_string(seq_id);
  out += ", \"qsl_idx\" : ";
  out += std::to_string(qsl_idx);
  out += ", \"data\" : \"";
  append_hex(out, data, size);
  out += "\"";
  if (with_token_data) {
    out += ", \"token_data\" : \"";
    append_hex(out, token_data.data(), token_data.size());
    out += "\"";
  }
  if (with_token_count || with_token_data) {
    out += ", \"token_count\" : ";
    out += std::to_string(token_count);
  }
  out += " }";
}

}  // namespace

void AccuracyLog::Record::set_with_index_at(uint64_t seq_id, const uint32_t* qsl_index, const uint8_t* data,
                                            size_t size) {
  set(seq_id, 0, data, size);
  slot_.qsl_index_at = qsl_index;
}

void AccuracyLog::Record::set(uint64_t seq_id, uint64_t qsl_idx, const uint8_t* data, size_t size) {
  slot_.seq_id = seq_id;
  slot_.qsl_idx = qsl_idx;
  slot_.qsl_index_at = nullptr;
  slot_.with_token_count = false;
  slot_.with_token_data = false;
  slot_.token_count = 0;
  if (size <= kSlotBytes) {
    if (size != 0) std::memcpy(buffer_, data, size);
  } else {
    slot_.large.assign(data, data + size);
  }
  slot_.size = size;
}

void AccuracyLog::Record::set_token_count(int64_t count) {
  slot_.with_token_count = true;
  slot_.token_count = count;
}

void AccuracyLog::Record::set_token_data(const uint8_t* data, size_t size) {
  slot_.token_data.assign(data, data + size);
  slot_.with_token_data = true;
}

AccuracyLog::~AccuracyLog() { close(); }

bool AccuracyLog::open(const std::string& path) {
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) return false;
  std::fputs("[", file_);
  ring_ = std::make_unique<Slot[]>(kRingSlots);
  for (uint64_t i = 0; i < kRingSlots; ++i) ring_[i].sequence.store(i, std::memory_order_relaxed);
  // Zeroed here, so that no page of it faults in on the issue path.
  buffers_ = std::make_unique<uint8_t[]>(kRingSlots * kSlotBytes);
  append_position_.store(0, std::memory_order_relaxed);
  write_position_ = 0;
  closing_ = false;
  accepting_.store(true, std::memory_order_release);
  writer_ = std::thread([this] {
    name_current_thread("loadgen-acclog");
    writer_loop();
  });
  return true;
}

void AccuracyLog::append(const AccuracyRecord& record) {
  append_with([&record](Record& out) {
    out.set(record.seq_id, record.qsl_idx, record.data.data(), record.data.size());
    // token_data comes with token_count (format_record writes it for either).
    if (record.with_token_count || record.with_token_data) out.set_token_count(record.token_count);
    if (record.with_token_data) out.set_token_data(record.token_data.data(), record.token_data.size());
  });
}

AccuracyLog::Slot* AccuracyLog::claim(uint64_t* position_out) {
  uint64_t position = append_position_.load(std::memory_order_relaxed);
  for (;;) {
    if (!accepting_.load(std::memory_order_acquire)) return nullptr;
    Slot* slot = &ring_[position & (kRingSlots - 1)];
    const uint64_t sequence = slot->sequence.load(std::memory_order_acquire);
    const auto ahead = static_cast<int64_t>(sequence - position);
    if (ahead == 0) {
      if (append_position_.compare_exchange_weak(position, position + 1, std::memory_order_relaxed)) {
        *position_out = position;
        return slot;
      }
    } else if (ahead < 0) {
      // Full: the writer is a whole ring behind. Wake it and wait for a slot.
      cv_.notify_one();
      std::this_thread::yield();
      position = append_position_.load(std::memory_order_relaxed);
    } else {
      position = append_position_.load(std::memory_order_relaxed);  // another thread took this one
    }
  }
}

void AccuracyLog::publish(Slot* slot, uint64_t position) {
  slot->sequence.store(position + 1, std::memory_order_release);
  // Only once a batch: notify_one is a futex wake when the writer waits.
  if ((position + 1) % kWakeBatch == 0) cv_.notify_one();
}

void AccuracyLog::prefetch_next() const {
  if (!accepting_.load(std::memory_order_relaxed)) return;
  const uint64_t position = append_position_.load(std::memory_order_relaxed);
  prefetch_for_write(&ring_[position & (kRingSlots - 1)]);
  prefetch_for_write(buffer_of(position));
}

std::string AccuracyLog::format_record(const AccuracyRecord& record) {
  std::string out;
  append_record(out, record.seq_id, record.qsl_idx, record.data.data(), record.data.size(), record.with_token_count,
                record.with_token_data, record.token_count, record.token_data);
  return out;
}

void AccuracyLog::write_pending() {
  bool wrote = false;
  for (;;) {
    Slot& slot = ring_[write_position_ & (kRingSlots - 1)];
    // Not yet appended (or its append is still writing the record): later.
    if (slot.sequence.load(std::memory_order_acquire) != write_position_ + 1) break;
    if (!slot.dropped) {
      const uint8_t* data = slot.size <= kSlotBytes ? buffer_of(write_position_) : slot.large.data();
      text_ = written_ == 0 ? "\n" : ",\n";
      const uint64_t qsl_idx = slot.qsl_index_at != nullptr ? *slot.qsl_index_at : slot.qsl_idx;
      append_record(text_, slot.seq_id, qsl_idx, data, slot.size, slot.with_token_count, slot.with_token_data,
                    slot.token_count, slot.token_data);
      std::fwrite(text_.data(), 1, text_.size(), file_);
      ++written_;
      wrote = true;
    }
    if (slot.large.capacity() != 0) std::vector<uint8_t>().swap(slot.large);
    if (slot.token_data.capacity() > kSlotBytes) std::vector<uint8_t>().swap(slot.token_data);
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

#include "accuracy_log.h"

namespace loadgen {

AccuracyLog::~AccuracyLog() { close(); }

bool AccuracyLog::open(const std::string& path) {
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) return false;
  std::fputs("[", file_);
  writer_ = std::thread([this] { writer_loop(); });
  return true;
}

void AccuracyLog::append(AccuracyRecord record) {
  if (!file_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(record));
  }
  cv_.notify_one();
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

void AccuracyLog::writer_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return closing_ || !queue_.empty(); });
    std::deque<AccuracyRecord> batch;
    batch.swap(queue_);
    const bool closing = closing_;
    lock.unlock();
    for (const auto& record : batch) {
      std::fputs(written_ == 0 ? "\n" : ",\n", file_);
      std::fputs(format_record(record).c_str(), file_);
      ++written_;
    }
    lock.lock();
    if (closing && queue_.empty()) return;
  }
}

void AccuracyLog::close() {
  if (!file_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  cv_.notify_one();
  if (writer_.joinable()) writer_.join();
  std::fputs("\n]\n", file_);
  std::fclose(file_);
  file_ = nullptr;
}

}  // namespace loadgen

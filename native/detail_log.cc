#include "detail_log.h"

#include <charconv>
#include <cinttypes>
#include <iostream>

#include "clock.h"

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#elif defined(_WIN32)
#include <process.h>
#else
#include <pthread.h>
#include <unistd.h>
#endif

namespace loadgen {

namespace {

long current_pid() {
#if defined(_WIN32)
  return static_cast<long>(_getpid());
#else
  return static_cast<long>(getpid());
#endif
}

long current_tid() {
#if defined(__linux__)
  return static_cast<long>(syscall(SYS_gettid));
#elif defined(__APPLE__)
  uint64_t tid = 0;
  pthread_threadid_np(nullptr, &tid);
  return static_cast<long>(tid);
#else
  return 0;
#endif
}

}  // namespace

DetailLog::~DetailLog() { close(); }

bool DetailLog::open(const std::string& path, int64_t origin_ns, bool copy_to_stdout) {
  file_ = std::fopen(path.c_str(), "wb");
  origin_ns_ = origin_ns;
  copy_to_stdout_ = copy_to_stdout;
  pid_ = current_pid();
  return file_ != nullptr;
}

void DetailLog::add(const std::string& key, const std::string& value_text, bool is_error, bool is_warning,
                    const char* file, int line) {
  add_at(now_ns(), key, value_text, is_error, is_warning, file, line);
}

void DetailLog::add_at(int64_t timestamp_ns, const std::string& key, const std::string& value_text, bool is_error,
                       bool is_warning, const char* file, int line) {
  const char first = value_text.empty() ? '\0' : value_text.front();
  const bool composite = first == '"' || first == '[' || first == '{';
  const bool literal = value_text == "true" || value_text == "false" || value_text == "null";
  std::string text = entry_head(key);
  text.reserve(text.size() + value_text.size() + 240);
  text += composite || literal || is_json_number(value_text) ? value_text : std::string("null");
  text += entry_tail(timestamp_ns, is_error, is_warning, file, line);
  std::lock_guard<std::mutex> lock(mutex_);
  write_locked(text.data(), text.size());
  // As the reference: errors reach the disk at once.
  if (is_error && file_) std::fflush(file_);
}

size_t DetailLog::add_index_list(const std::string& key, const uint32_t* values, size_t count,
                                 const std::atomic<bool>* stop, const char* file, int line) {
  const int64_t timestamp_ns = now_ns();
  std::lock_guard<std::mutex> lock(mutex_);
  if (file_ == nullptr && !copy_to_stdout_) return count;  // written nowhere: nothing to format
  const std::string head = entry_head(key) + "[";
  write_locked(head.data(), head.size());
  // Pieces of 64 KiB: a few hundred microseconds of formatting each.
  char piece[1 << 16];
  constexpr size_t kMaxItem = 11;  // ",4294967295"
  size_t used = 0;
  size_t written = 0;
  for (; written < count; ++written) {
    if (used + kMaxItem > sizeof(piece)) {
      write_locked(piece, used);
      used = 0;
      if (stop != nullptr && stop->load(std::memory_order_relaxed)) break;
    }
    if (written != 0) piece[used++] = ',';
    used = static_cast<size_t>(std::to_chars(piece + used, piece + sizeof(piece), values[written]).ptr - piece);
  }
  piece[used++] = ']';
  write_locked(piece, used);
  const std::string tail = entry_tail(timestamp_ns, false, false, file, line);
  write_locked(tail.data(), tail.size());
  return written;
}

std::string DetailLog::entry_head(const std::string& key) {
  return ":::MLLOG {\"key\": " + quote(key) + ", \"value\": ";
}

std::string DetailLog::entry_tail(int64_t timestamp_ns, bool is_error, bool is_warning, const char* file,
                                  int line) const {
  const int64_t ns = timestamp_ns - origin_ns_;
  // time_ms as "<ms>.<6 digits>" (spec/50 §4.1); the origin precedes every entry.
  const uint64_t abs_ns = static_cast<uint64_t>(ns < 0 ? 0 : ns);
  char time_ms[48];
  std::snprintf(time_ms, sizeof(time_ms), "%" PRIu64 ".%06" PRIu64, abs_ns / 1000000, abs_ns % 1000000);
  std::string text = ", \"time_ms\": ";
  text += time_ms;
  text += ", \"namespace\": \"mlperf::logging\", \"event_type\": \"POINT_IN_TIME\", \"metadata\": {\"is_error\": ";
  text += boolean(is_error);
  text += ", \"is_warning\": ";
  text += boolean(is_warning);
  text += ", \"file\": ";
  text += quote(file);
  text += ", \"line_no\": " + std::to_string(line) + ", \"pid\": " + std::to_string(pid_) +
          ", \"tid\": " + std::to_string(current_tid()) + "}}\n";
  return text;
}

void DetailLog::write_locked(const char* data, size_t size) {
  if (file_) std::fwrite(data, 1, size, file_);
  if (copy_to_stdout_) std::cout.write(data, static_cast<std::streamsize>(size)) << std::flush;
}

void DetailLog::flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (file_) std::fflush(file_);
}

void DetailLog::close() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (file_) {
    std::fclose(file_);
    file_ = nullptr;
  }
}

std::string DetailLog::quote(const std::string& text) {
  // Escaped, unlike the reference (whose unescaped strings can break the
  // line's JSON): MLCommons' parsers read every line with a strict parser.
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out += "\"";
  return out;
}

bool DetailLog::is_json_number(const std::string& text) {
  size_t i = 0;
  const size_t n = text.size();
  const auto digits = [&] {
    const size_t start = i;
    while (i < n && text[i] >= '0' && text[i] <= '9') ++i;
    return i - start;
  };
  if (i < n && text[i] == '-') ++i;
  if (i < n && text[i] == '0') {
    ++i;
  } else if (i >= n || text[i] < '1' || text[i] > '9' || digits() == 0) {
    return false;
  }
  if (i < n && text[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  }
  if (i < n && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < n && (text[i] == '+' || text[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == n;
}

std::string DetailLog::integer_list(const std::vector<uint32_t>& values) {
  std::string out = "[";
  out.reserve(values.size() * 7 + 2);
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out.push_back(',');
    out += std::to_string(values[i]);
  }
  out += "]";
  return out;
}

}  // namespace loadgen

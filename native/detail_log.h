// mlperf_log_detail.txt: one ":::MLLOG {json}" line per entry, in the
// reference's format (spec/50 §4.1). Entries are formatted when added, on the
// session thread, never inside the issue loop's per-query path.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace loadgen {

class DetailLog {
 public:
  DetailLog() = default;
  ~DetailLog();
  DetailLog(const DetailLog&) = delete;
  DetailLog& operator=(const DetailLog&) = delete;

  // Creates/truncates the file; `origin_ns` (now_ns() clock) is time_ms 0.
  bool open(const std::string& path, int64_t origin_ns, bool copy_to_stdout);
  // Adds one entry. `value_text` is the JSON value exactly as it must appear;
  // `file`/`line` name the code that logged it (the record's metadata). A
  // bare value that is not JSON (a non-finite double formatted as "inf",
  // "-nan", ...) is written as null: every line stays JSON whatever a field
  // computes (the fields themselves give 0 and a reason, see results.cc).
  // Strings, arrays and objects are the callers' (quote(), integer_list()).
  void add(const std::string& key, const std::string& value_text, bool is_error, bool is_warning, const char* file,
           int line);
  // Same, with an explicit timestamp shared by several entries.
  void add_at(int64_t timestamp_ns, const std::string& key, const std::string& value_text, bool is_error,
              bool is_warning, const char* file, int line);
  // Adds one entry whose value is the list values[0, count), formatted and
  // written piece by piece: the loaded_qsl_set of 10^8 samples is ~900 MB of
  // text, never built as one string. `stop` (may be null) is read between
  // pieces; once it is set the list ends where it got to, its line still
  // JSON. Returns how many values the entry lists.
  size_t add_index_list(const std::string& key, const uint32_t* values, size_t count, const std::atomic<bool>* stop,
                        const char* file, int line);
  // What was added so far reaches the file (before long work, so that a
  // reader sees how far the run got).
  void flush();
  void close();
  bool is_open() const { return file_ != nullptr; }

  // Value texts.
  static std::string quote(const std::string& text);  // JSON string, escaped
  // Whether `text` is a JSON number (RFC 8259: -?int frac? exp?).
  static bool is_json_number(const std::string& text);
  static std::string boolean(bool v) { return v ? "true" : "false"; }
  static std::string integer_list(const std::vector<uint32_t>& values);

 private:
  // A line up to its value, and from the value's end on (spec/50 §4.1).
  static std::string entry_head(const std::string& key);
  std::string entry_tail(int64_t timestamp_ns, bool is_error, bool is_warning, const char* file, int line) const;
  // Writes to the file and, when copying, stdout; the caller holds mutex_.
  void write_locked(const char* data, size_t size);

  std::mutex mutex_;
  std::FILE* file_ = nullptr;
  int64_t origin_ns_ = 0;
  bool copy_to_stdout_ = false;
  long pid_ = 0;
};

// Build identity, filled in at configure time (native/version_info.cc.in).
struct VersionInfo {
  const char* version;          // package version
  const char* git_revision;     // short revision or "NA"
  const char* build_date_local;
  const char* build_date_utc;
  const char* git_commit_date;  // or "NA"
  const char* git_log_message;  // or "NA"
  const char* git_status;       // porcelain status or "NA"
  const char* file_sha1_json;   // {"/native/x.cc":"<sha1>",...}
};
const VersionInfo& version_info();

}  // namespace loadgen

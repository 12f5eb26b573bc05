// mlperf_log_trace.json: the reference's Chrome trace event format (spec/50 §6).
// Written by the session thread after each series from the per-sample records,
// never on the issue path; streamed through a buffered FILE*.
// Unlike the reference the file is always valid JSON: we emit no event whose
// text would need the reference's doubled quotes (LogSummary/LogDetail).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace loadgen {

class ChromeTrace {
 public:
  ChromeTrace() = default;
  ~ChromeTrace();
  ChromeTrace(const ChromeTrace&) = delete;
  ChromeTrace& operator=(const ChromeTrace&) = delete;

  // Creates/truncates the file. When `enabled` the header is written and
  // `origin_ns` (now_ns() clock) / `wall_origin_ns` (Unix epoch) become the
  // trace origin; when not, the file stays empty (0 bytes), as the reference.
  bool open(const std::string& path, bool enabled, int64_t origin_ns, int64_t wall_origin_ns);
  bool enabled() const { return file_ != nullptr && enabled_; }

  // A scoped duration ("ph":"X") on thread `tid`; times on the now_ns() clock.
  void complete(const char* name, uint64_t tid, int64_t start_ns, int64_t end_ns);
  // One completed sample: "Sample" async begin at its scheduled time and end
  // at its completion, with the reference's args (issue/complete relative to
  // the scheduled time). With `server_counter` also the "Latency" counter.
  void sample(uint64_t sample_seq, uint64_t query_seq, uint64_t sample_idx, int64_t scheduled_ns,
              int64_t issued_ns, int64_t completed_ns, bool server_counter);
  // Writes "LastTrace" and the footer (otherData.ts, version) and closes.
  void close();

 private:
  void ts(char* buf, size_t size, int64_t t_ns) const;

  std::FILE* file_ = nullptr;
  bool enabled_ = false;
  int64_t origin_ns_ = 0;
  int64_t wall_origin_ns_ = 0;
  long pid_ = 0;
};

}  // namespace loadgen

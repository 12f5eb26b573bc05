// Everything a run writes about itself, and where each line's content is
// decided: the messages (errors, warnings, notable events) with their
// detail-log lines, the detail log's header, settings, per-series and result
// entries, the rejected-completion lines, the summary file (with the
// loadgen-overhead block), the Chrome trace of each series and the
// PerfClock/system_clock check. Written on the session thread outside the
// issue path; log() also from abort() on any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "accuracy_log.h"
#include "chrome_trace.h"
#include "clock.h"
#include "detail_log.h"
#include "run_outcome.h"
#include "session_host.h"

namespace loadgen {

struct Series;

class RunLog {
 public:
  explicit RunLog(RunOutcome& outcome) : outcome_(outcome) {}
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;

  // Names and opens the run's files (detail, accuracy, trace) and writes the
  // detail log's header; a file that cannot be opened is logged as an error.
  void open(const SessionConfig& config, AccuracyLog& accuracy_log);
  // Writes the trace's footer and closes it (when the run's issuing is over).
  void close_trace() { chrome_trace_.close(); }
  // The detail log's entries so far to its file (before a set is built).
  void flush() { detail_.flush(); }
  // Closes the detail log (its last entry written).
  void close() { detail_.close(); }

  // One message: kept in the outcome and written to the detail log.
  void log(const std::string& key, const std::string& text, bool is_error, bool is_warning);
  // The requested and effective settings (spec/50 §4.2), one timestamp for all.
  void write_settings(const TestSettings& requested, const EffectiveSettings& effective);
  // loaded_qsl_set: every index, as the reference logs it, written piece by
  // piece. Once `stop` is set the list ends where it got to and a warning
  // says how much of the set it lists; returns false then.
  bool write_loaded_set(const std::vector<SampleIndex>& indices, const std::atomic<bool>* stop);
  void write_generated(const QueryTrace& trace);
  // After a series: its samples in the Chrome trace, the logger counters and power_begin/end.
  void write_series(const Series& series);
  // A scoped duration on the trace (loading, generating).
  void trace_span(const char* name, uint64_t tid, int64_t start_ns, int64_t end_ns) {
    chrome_trace_.complete(name, tid, start_ns, end_ns);
  }
  // print_timestamps lines and the PerfClock/system_clock check (spec/00 §6.1).
  void check_perf_clocks(bool print_timestamps, const ClockPair& start, const ClockPair& stop);

  // ---- After the run, in this order ----
  // One line per rejected id (outcome.completion_errors), capped per kind.
  void write_completion_errors();
  // One line per failed sample whose message was kept, then one per kind
  // for those whose messages were not (outcome.failed_samples).
  void write_failures(const std::vector<FailureMessage>& messages);
  // The result entries (outcome.summary), with our INVALID reasons.
  void write_detail_results();
  // outcome.error_count and warning_count from the messages and completion-error lines.
  void count_messages();
  // The summary text and file (spec/50 §3), then our overhead block.
  void write_summary(Mode mode, const LogOutputSettings& log);

 private:
  uint64_t errors_so_far();

  RunOutcome& outcome_;
  std::mutex messages_mutex_;  // messages come from the session thread and abort()
  DetailLog detail_;
  ChromeTrace chrome_trace_;
  uint64_t completion_error_lines_ = 0;  // detail-log lines written for rejected ids
  uint64_t failure_lines_ = 0;           // detail-log lines written for failed samples
};

// Why a run with failed samples is INVALID: "3 samples failed (http_status 2, timeout 1)".
std::string failed_samples_reason(const FailedSampleCounts& counts);

// "<outdir>/<prefix>[<datetime>_]": every log file's path up to its kind.
std::string log_base_path(const LogOutputSettings& log, const std::string& test_datetime);

}  // namespace loadgen

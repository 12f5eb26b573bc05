#include "run_log.h"

#include <algorithm>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>

#include "clock.h"
#include "series.h"
#include "settings_log.h"
#include "user_text.h"

namespace loadgen {

namespace {

constexpr const char* kFile = "native/run_log.cc";

std::string local_datetime_iso8601() {
  // The reference prints local time with a literal 'Z' (spec/00 §6 step 2).
  std::time_t t = std::time(nullptr);
  std::tm tm_local{};
#if defined(_WIN32)
  localtime_s(&tm_local, &t);
#else
  localtime_r(&t, &tm_local);
#endif
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm_local);
  return buf;
}

// power_begin/power_end: UTC "MM-DD-YYYY HH:MM:SS.mmm", milliseconds truncated.
std::string utc_power_timestamp(int64_t wall_ns) {
  const std::time_t seconds = static_cast<std::time_t>(wall_ns / 1000000000);
  const int millis = static_cast<int>((wall_ns / 1000000) % 1000);
  std::tm tm_utc{};
#if defined(_WIN32)
  gmtime_s(&tm_utc, &seconds);
#else
  gmtime_r(&seconds, &tm_utc);
#endif
  char buf[32];
  std::strftime(buf, sizeof(buf), "%m-%d-%Y %H:%M:%S", &tm_utc);
  char out[40];
  std::snprintf(out, sizeof(out), "%s.%03d", buf, millis);
  return out;
}

// The loadgen-for-Node block appended after the reference's summary (its
// layout above is untouched): how much of each query's latency was ours.
std::string format_overhead_block(const RunOverhead& o) {
  const std::string sep(48, '=');
  std::string out = "\n" + sep + "\nLoadgen Overhead (loadgen for Node.js)\n" + sep + "\n";
  auto lines = [&](const char* what, const OverheadStats& st) {
    auto line = [&](const char* label, int64_t v) {
      std::string head = std::string(what) + " " + label + " (ns)";
      if (head.size() < 32) head.append(32 - head.size(), ' ');
      out += head + ": " + std::to_string(v) + "\n";
    };
    line("p50", st.p50);
    line("p90", st.p90);
    line("p99", st.p99);
    line("p99.9", st.p999);
    line("max", st.max);
  };
  lines("Issue lateness", o.issue_lateness);
  if (o.has_delivery_lag) lines("Delivery lag", o.delivery_lag);
  out += "Issue lateness = issued - due; delivery lag = received by the SUT - due.\n";
  out += "Due = scheduled time (Server), start (Offline), previous completion (SingleStream/MultiStream).\n";
  return out;
}

}  // namespace

std::string log_base_path(const LogOutputSettings& log, const std::string& test_datetime) {
  std::string base = log.outdir + "/" + log.prefix;
  if (log.prefix_with_datetime) base += test_datetime + "_";
  return base;
}

void RunLog::open(const SessionConfig& config, AccuracyLog& accuracy_log) {
  const LogOutputSettings& log_settings = config.log;
  outcome_.test_datetime = local_datetime_iso8601();
  const std::string base = log_base_path(log_settings, outcome_.test_datetime);
  outcome_.detail_log_path = base + "detail" + log_settings.suffix + ".txt";
  if (!detail_.open(outcome_.detail_log_path, now_ns(), log_settings.copy_detail_to_stdout)) {
    outcome_.detail_log_path.clear();
  }
  outcome_.accuracy_log_path = base + "accuracy" + log_settings.suffix + ".json";
  if (!accuracy_log.open(outcome_.accuracy_log_path)) {
    outcome_.accuracy_log_path.clear();
  }
  // Always created; empty unless tracing (spec/00 §6 step 6).
  chrome_trace_.open(base + "trace" + log_settings.suffix + ".json", log_settings.enable_trace, now_ns(),
                     wall_now_ns());

  const VersionInfo& v = version_info();
  const int64_t t = now_ns();
  detail_.add_at(t, "loadgen_version", DetailLog::quote(std::string(v.version) + " @ " + v.git_revision), false,
                 false, kFile, __LINE__);
  detail_.add_at(t, "loadgen_build_date_local", DetailLog::quote(v.build_date_local), false, false, kFile, __LINE__);
  detail_.add_at(t, "loadgen_build_date_utc", DetailLog::quote(v.build_date_utc), false, false, kFile, __LINE__);
  detail_.add_at(t, "loadgen_git_commit_date", DetailLog::quote(v.git_commit_date), false, false, kFile, __LINE__);
  detail_.add_at(t, "loadgen_git_log_message", DetailLog::quote(v.git_log_message), false, false, kFile, __LINE__);
  detail_.add_at(t, "loadgen_git_status_message", DetailLog::quote(v.git_status), false, false, kFile, __LINE__);
  detail_.add_at(t, "loadgen_file_sha1", v.file_sha1_json, false, false, kFile, __LINE__);
  const int64_t t2 = now_ns();
  detail_.add_at(t2, "test_datetime", DetailLog::quote(outcome_.test_datetime), false, false, kFile, __LINE__);
  detail_.add_at(t2, "sut_name", DetailLog::quote(config.sut_name), false, false, kFile, __LINE__);
  // The SUT's name is read once in JS before the run; there is no call to time.
  detail_.add_at(t2, "get_sut_name_duration_ns", "0", false, false, kFile, __LINE__);
  detail_.add_at(t2, "qsl_name", DetailLog::quote(config.qsl_name), false, false, kFile, __LINE__);
  detail_.add_at(t2, "qsl_reported_total_count", std::to_string(config.qsl_total_count), false, false, kFile,
                 __LINE__);
  detail_.add_at(t2, "qsl_reported_performance_count", std::to_string(config.qsl_performance_count), false, false,
                 kFile, __LINE__);

  if (outcome_.detail_log_path.empty()) {
    log("error_runtime", "Failed to open detail log file " + base + "detail" + log_settings.suffix + ".txt", true,
        false);
  }
  if (outcome_.accuracy_log_path.empty()) {
    log("error_runtime", "Failed to open accuracy log file " + base + "accuracy" + log_settings.suffix + ".json",
        true, false);
  }
}

void RunLog::log(const std::string& key, const std::string& text, bool is_error, bool is_warning) {
  {
    std::lock_guard<std::mutex> lock(messages_mutex_);
    outcome_.messages.push_back(LogMessage{key, text, is_error, is_warning});
  }
  detail_.add(key, DetailLog::quote(text), is_error, is_warning, kFile, __LINE__);
}

void RunLog::write_settings(const TestSettings& requested, const EffectiveSettings& effective) {
  const int64_t t = now_ns();
  for (const auto& entry : requested_settings_entries(requested)) {
    detail_.add_at(t, entry.first, entry.second, false, false, "native/settings_log.cc", 0);
  }
  for (const auto& entry : effective_settings_entries(effective)) {
    detail_.add_at(t, entry.first, entry.second, false, false, "native/settings_log.cc", 0);
  }
}

bool RunLog::write_loaded_set(const std::vector<SampleIndex>& indices, const std::atomic<bool>* stop) {
  const size_t listed = detail_.add_index_list("loaded_qsl_set", indices.data(), indices.size(), stop, kFile, __LINE__);
  if (listed == indices.size()) return true;
  log("warning_generic_message",
      "loaded_qsl_set lists the first " + std::to_string(listed) + " of the set's " + std::to_string(indices.size()) +
          " samples: the run was stopped while it was written",
      false, true);
  return false;
}

void RunLog::write_generated(const QueryTrace& trace) {
  const int64_t t = now_ns();
  detail_.add_at(t, "generated_query_count", std::to_string(trace.query_count()), false, false, kFile, __LINE__);
  detail_.add_at(t, "generated_samples_per_query", std::to_string(trace.samples_per_query), false, false, kFile,
                 __LINE__);
  detail_.add_at(t, "generated_query_duration", std::to_string(trace.generated_query_duration_ns), false, false,
                 kFile, __LINE__);
}

void RunLog::write_series(const Series& series) {
  const uint64_t spq = series.samples_per_query;
  const uint64_t issued_samples = series.issued_queries * spq;
  if (chrome_trace_.enabled()) {
    const bool server = series.scenario == Scenario::Server;
    for (uint64_t k = 0; k < issued_samples; ++k) {
      const int64_t done = series.completed_ns[k].load(std::memory_order_acquire);
      if (done == Series::kNotCompleted) continue;  // never completed: no end to draw
      const uint64_t q = k / spq;
      chrome_trace_.sample(series.trace.first_sample_id + k, series.trace.first_query_id + q,
                           series.trace.sample_index[k], series.start_ns + scheduled_ns(series, q),
                           series.start_ns + series.issued_ns[q], series.start_ns + done, server);
    }
  }
  const int64_t t = now_ns();
  // The reference's logger contention counters; this logger has none.
  for (const char* key : {"logger_swap_request_slots_retry_count", "logger_swap_request_slots_retry_retry_count",
                          "logger_swap_request_slots_retry_reencounter_count",
                          "logger_start_reading_entries_retry_count", "logger_tls_total_log_cas_fail_count",
                          "logger_tls_total_swap_buffers_slot_retry_count"}) {
    detail_.add_at(t, key, "0", false, false, kFile, __LINE__);
  }
  int64_t last_completion = 0;
  for (uint64_t k = 0; k < issued_samples; ++k) {
    last_completion = std::max(last_completion, series.completed_ns[k].load(std::memory_order_acquire));
  }
  const int64_t t2 = now_ns();
  detail_.add_at(t2, "power_begin", DetailLog::quote(utc_power_timestamp(series.wall_start_ns)), false, false, kFile,
                 __LINE__);
  detail_.add_at(t2, "power_end", DetailLog::quote(utc_power_timestamp(series.wall_start_ns + last_completion)),
                 false, false, kFile, __LINE__);
}

void RunLog::check_perf_clocks(bool print_timestamps, const ClockPair& start, const ClockPair& stop) {
  // The printed lines are the reference's: millisecond durations and their
  // float ratio (PerfClock is our monotonic clock, system_clock the wall
  // clock). The verdict uses the nanosecond durations: the reference's two
  // clocks are one clock, so its check only fires on a step of the wall
  // clock; ours are two, and a run under 100 ms whose durations straddle a
  // millisecond boundary (49.9999 vs 50.0001 ms reads as 49/50 = 0.98) would
  // otherwise be logged as an error with nothing wrong.
  const int64_t pc_duration = (stop.perf_ns - start.perf_ns) / 1000000;
  const int64_t sc_duration = (stop.wall_ns - start.wall_ns) / 1000000;
  if (print_timestamps) {
    const float ms_ratio = static_cast<float>(pc_duration) / static_cast<float>(sc_duration);
    std::ostringstream out;  // a local stream: std::cout keeps its format flags (unlike the reference)
    out << "Loadgen :: Perf mode stop. systme_clock Timestamp = " << stop.wall_ns / 1000000000 << "\n"
        << "Loadgen :: PerfClock Perf duration = " << pc_duration << "ms\n"
        << "Loadgen :: system_clock Perf duration = " << sc_duration << "ms\n"
        << "Loadgen :: PerfClock/system_clock ratio = " << std::fixed << std::setprecision(4) << ms_ratio << "\n";
    std::cout << out.str() << std::flush;
  }
  const int64_t pc_ns = stop.perf_ns - start.perf_ns;
  const int64_t sc_ns = stop.wall_ns - start.wall_ns;
  // A wall clock stepped back to or before the start has no ratio: that is an error too.
  const float ratio = sc_ns > 0 ? static_cast<float>(static_cast<double>(pc_ns) / static_cast<double>(sc_ns))
                                : std::numeric_limits<float>::infinity();
  std::ostringstream r;
  r << ratio;
  if (!(ratio <= 1.01f && ratio >= 0.99f)) {
    log("error_runtime", "PerfClock and system_clock differ by more than 1%!  pc_sc_ratio: " + r.str(), true, false);
  } else if (ratio > 1.001f || ratio < 0.999f) {
    log("warning_generic_message", "PerfClock and system_clock differ by more than 0.1%!  pc_sc_ratio: " + r.str(),
        false, true);
  }
}

void RunLog::write_completion_errors() {
  // One line per rejected id, as the reference logs each duplicate; capped so
  // a runaway SUT cannot fill the disk.
  constexpr uint64_t kMaxLinesPerKind = 1000;
  struct Kind {
    uint64_t count;
    const char* text;
  };
  const CompletionErrorCounts& e = outcome_.completion_errors;
  const Kind kinds[] = {
      {e.duplicate_ids, "Attempted to complete a sample twice."},
      {e.invalid_ids,
       "Received a completion for an id that is not a sample of the current series (not an integer id, or "
       "beyond the series)."},
      {e.stale_ids,
       "Received a late completion for an id of an earlier series or run (not credited: ids are unique within "
       "the process)."},
      {e.unissued_ids, "Received a completion for a sample that was not issued yet."},
      // Token latencies: the reference's texts (spec/60 §1.2).
      {e.duplicate_first_tokens, "Attempted to complete a sample twice."},
      {e.first_token_after_completion, "Attempted to record token latency after sample was completed"},
      // No "Attempted to record a sample latency before it's first token
      // latency": such a sample failed as no_first_token (its line is a
      // "Sample failed" one, write_failures).
      {e.zero_tokens, "n_tokens argument missing or attempted to record 0 as number of tokens"},
      {e.negative_tokens, "Attempted to record a negative number of tokens"},
      {e.one_token, "Number of tokens need to be greater than 1"},
  };
  for (const Kind& kind : kinds) {
    const uint64_t lines = std::min(kind.count, kMaxLinesPerKind);
    for (uint64_t i = 0; i < lines; ++i) {
      detail_.add("error_runtime", DetailLog::quote(kind.text), true, false, kFile, __LINE__);
    }
    completion_error_lines_ += lines;
    if (kind.count > kMaxLinesPerKind) {
      detail_.add("error_runtime",
                  DetailLog::quote(std::to_string(kind.count - kMaxLinesPerKind) + " more of: " + kind.text), true,
                  false, kFile, __LINE__);
      completion_error_lines_ += 1;
    }
  }
}

void RunLog::write_failures(const std::vector<FailureMessage>& messages) {
  // Kept from any completing thread, so in the order of their failures only roughly: written in it.
  std::vector<const FailureMessage*> in_order;
  in_order.reserve(messages.size());
  for (const FailureMessage& m : messages) in_order.push_back(&m);
  std::stable_sort(in_order.begin(), in_order.end(),
                   [](const FailureMessage* a, const FailureMessage* b) { return a->failed_ns < b->failed_ns; });
  for (const FailureMessage* m : in_order) {
    detail_.add_at(m->failed_ns, "error_runtime",
                   DetailLog::quote(std::string("Sample failed (") + to_string(m->kind) + "): " + m->text), true,
                   false, kFile, __LINE__);
  }
  failure_lines_ += messages.size();
  const FailedSampleCounts& counts = outcome_.failed_samples;
  for (size_t i = 0; i < kFailureKindCount; ++i) {
    if (counts.by_kind[i] <= kMaxFailureLinesPerKind) continue;
    detail_.add("error_runtime",
                DetailLog::quote(std::to_string(counts.by_kind[i] - kMaxFailureLinesPerKind) + " more samples failed (" +
                                 kFailureKindNames[i] + "); their messages were not kept"),
                true, false, kFile, __LINE__);
    failure_lines_ += 1;
  }
}

std::string failed_samples_reason(const FailedSampleCounts& counts) {
  std::string text = std::to_string(counts.total) + (counts.total == 1 ? " sample failed (" : " samples failed (");
  bool first = true;
  for (size_t i = 0; i < kFailureKindCount; ++i) {
    if (counts.by_kind[i] == 0) continue;
    text += std::string(first ? "" : ", ") + kFailureKindNames[i] + " " + std::to_string(counts.by_kind[i]);
    first = false;
  }
  return text + ")";
}

uint64_t RunLog::errors_so_far() {
  uint64_t errors = completion_error_lines_ + failure_lines_;
  std::lock_guard<std::mutex> lock(messages_mutex_);
  for (const auto& m : outcome_.messages) errors += m.is_error ? 1 : 0;
  return errors;
}

void RunLog::write_detail_results() {
  const auto entries = detail_result_entries(outcome_.summary, errors_so_far(), outcome_.extra_invalid_reasons);
  const int64_t t = now_ns();
  for (const auto& entry : entries) {
    detail_.add_at(t, entry.first, entry.second, false, false, "native/results.cc", 0);
  }
}

void RunLog::count_messages() {
  {
    std::lock_guard<std::mutex> lock(messages_mutex_);
    for (const auto& m : outcome_.messages) {
      if (m.is_error) ++outcome_.error_count;
      if (m.is_warning) ++outcome_.warning_count;
    }
  }
  outcome_.error_count += completion_error_lines_ + failure_lines_;
}

void RunLog::write_summary(Mode mode, const LogOutputSettings& log_settings) {
  std::string text;
  if (outcome_.has_summary) {
    // Our reasons go under the reference's "Recommendations:" heading.
    text = format_summary_results(outcome_.summary, mode, outcome_.extra_invalid_reasons);
  } else if (outcome_.interrupted) {
    // Interrupted before a performance series had results: the verdict and why, still.
    text = "Result is : INVALID\nRecommendations:\n";
    for (const auto& reason : outcome_.extra_invalid_reasons) {
      text += " * " + escape_control_characters(as_sentence(reason)) + "\n";
    }
  }
  text += format_summary_footer(outcome_.warning_count, outcome_.error_count);
  if (outcome_.has_summary && outcome_.overhead.present) text += format_overhead_block(outcome_.overhead);
  outcome_.summary_text = text;

  outcome_.summary_path = log_base_path(log_settings, outcome_.test_datetime) + "summary" + log_settings.suffix + ".txt";
  std::ofstream out(outcome_.summary_path, std::ios::binary | std::ios::trunc);
  if (!out) {
    std::lock_guard<std::mutex> lock(messages_mutex_);
    outcome_.messages.push_back(
        LogMessage{"error_runtime", "Failed to open summary file " + outcome_.summary_path, true, false});
    outcome_.summary_path.clear();
  } else {
    out << text;
  }
  if (log_settings.copy_summary_to_stdout) std::cout << text << std::flush;
}

}  // namespace loadgen

#include "session.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <iomanip>
#include <sstream>
#include <iostream>
#include <stdexcept>
#include <type_traits>

#include "clock.h"
#include "format.h"
#include "report_data.h"
#include "settings_log.h"

namespace loadgen {

namespace {

// Server: sleep until this long before a scheduled time, then spin (design.md:
// ~120 us covers the wake-up latency of an idle vCPU at the median). A pinned
// issue thread owns its CPU: it never sleeps nor yields, since waking a
// halted vCPU and entering the kernel are what make lateness's tail (2-vCPU
// VM, null-native, 10k QPS, pinned: p99 22 us sleeping; 0.2-13 us spinning,
// tracking the host's preemptions that bench.cpuNoise measures).
constexpr int64_t kServerSpinWindowNs = 120000;
// Longest single sleep of the issue thread, so an abort is noticed promptly.
constexpr int64_t kMaxSleepSliceNs = 50000000;
// Spin this long for a completion before blocking (SingleStream/MultiStream).
constexpr int64_t kCompletionSpinNs = 50000;
constexpr int64_t kNotCompleted = Series::kNotCompleted;

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

// The null-native SUT's response: the QSL index as 4 little-endian bytes
// (what the reference's own null SUT in the golden runs returns).
std::vector<uint8_t> index_payload(uint64_t qsl_index) {
  const uint32_t v = static_cast<uint32_t>(qsl_index);
  return {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v >> 16),
          static_cast<uint8_t>(v >> 24)};
}

}  // namespace

Session::Session(SessionConfig config, SessionHost* host) : config_(std::move(config)), host_(host) {}

Session::~Session() {
  abort("session destroyed");
  join();
}

void Session::start() { thread_ = std::thread([this] { run(); }); }

void Session::join() {
  if (thread_.joinable()) thread_.join();
}

void Session::log(const std::string& key, const std::string& text, bool is_error, bool is_warning) {
  {
    std::lock_guard<std::mutex> lock(messages_mutex_);
    outcome_.messages.push_back(LogMessage{key, text, is_error, is_warning});
  }
  detail_.add(key, DetailLog::quote(text), is_error, is_warning, "native/session.cc", __LINE__);
}

uint64_t Session::errors_so_far() {
  uint64_t errors = completion_error_lines_;
  std::lock_guard<std::mutex> lock(messages_mutex_);
  for (const auto& m : outcome_.messages) errors += m.is_error ? 1 : 0;
  return errors;
}

void Session::abort(const std::string& reason) {
  bool expected = false;
  if (aborted_.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
    std::lock_guard<std::mutex> lock(messages_mutex_);
    outcome_.abort_reason = reason;
  }
  signal_.notify();
  dispatch_signal_.notify();
}

uint64_t Session::published_queries() const {
  const Series* s = current();
  return s ? s->published.load(std::memory_order_acquire) : 0;
}

int64_t Session::next_due_ns(const Series& series) const {
  if (effective_.scenario != Scenario::Server) return -1;
  // Acquire: a publication happens after start_ns was written.
  const uint64_t p = series.published.load(std::memory_order_acquire);
  if (p == 0 || p >= series.trace.query_count()) return -1;
  return series.start_ns + series.trace.scheduled_delta_ns[p];
}

uint64_t Session::drain_published(uint64_t seen) {
  if (config_.wake_lead_ns > 0) wait_published(seen, config_.wake_lead_ns, false);
  begin_drain();
  return published_queries();
}

bool Session::hold_drain_for_next_due() {
  if (config_.wake_lead_ns <= 0) return false;
  const Series* s = current();
  if (s == nullptr) return false;
  const int64_t due = next_due_ns(*s);
  if (due < 0 || due - now_ns() > config_.wake_lead_ns) return false;
  // Taken by a pending wake already: its drain comes; leave this one.
  return !drain_pending_.exchange(true, std::memory_order_seq_cst);
}

uint64_t Session::wait_published(uint64_t seen, int64_t window_ns, bool when_idle) {
  Series* s = current();
  if (s == nullptr) return 0;
  uint64_t p = s->published.load(std::memory_order_acquire);
  if (p != seen || window_ns <= 0) return p;
  int64_t now = now_ns();
  // Poll: at most one window a call (fewer event-loop turns: each allocates,
  // and ~1M turns a second meant ~100 scavenges a second, whose pauses set
  // the delivery lag's p99), or until a window past the next query's due time.
  const int64_t due = next_due_ns(*s);
  const bool due_soon = due >= 0 && due - now <= window_ns;
  if (!due_soon && !when_idle) return p;
  const int64_t give_up = due_soon ? std::max(due, now) + window_ns : now + window_ns;
  for (;;) {
    // Yield (other threads of this process may need the core) until the
    // last stretch before the due time, then spin; but never spin on the
    // issue thread's CPU: the query would wait for this thread's time slice
    // to end (measured: issue lateness p99 3.8 ms at 1k QPS).
    if (due >= 0 && due - now <= kPollHardSpinNs && current_cpu() != issue_thread_cpu_.load(std::memory_order_relaxed)) {
      cpu_relax();
    } else {
      yield_cpu();
    }
    p = s->published.load(std::memory_order_acquire);
    if (p != seen || aborted() || current() != s) return p;
    now = now_ns();
    if (s->poll_issue && due_soon && now >= due) {
      const uint64_t issued = poll_issue_due(*s, p);
      if (issued != 0) return issued;
    }
    if (now >= give_up) return p;
  }
}

uint64_t Session::poll_issue_due(Series& series, uint64_t p) {
  if (series.issue_ended.load(std::memory_order_acquire) || aborted()) return 0;
  uint64_t n = p;
  if (!series.next_issue.compare_exchange_strong(n, p + 1, std::memory_order_acq_rel)) return 0;
  const int64_t elapsed = now_ns() - series.start_ns;
  series.issued_ns[p] = elapsed;
  decide_server_end(series, p + 1, elapsed);
  series.published.store(p + 1, std::memory_order_release);
  return p + 1;
}

void Session::decide_server_end(Series& series, uint64_t issued, int64_t elapsed) const {
  // The issue loop's checks (same order, same figures), made before publishing.
  int reason = kServerEndNone;
  uint64_t outstanding = 0;
  if (issued >= series.trace.query_count()) {
    reason = kServerEndLastQuery;
  } else if (series.kind != SeriesKind::Accuracy) {  // accuracy series issue every query
    const uint64_t max_async = effective_.max_async_queries;
    if (max_async != 0) {
      outstanding = issued - series.done_queries.load(std::memory_order_acquire);
      if (outstanding > max_async) reason = kServerEndTooManyOutstanding;
    }
    if (reason == kServerEndNone && series.stop_max_queries != 0 && issued >= series.stop_max_queries) {
      reason = kServerEndMaxQueries;
    } else if (reason == kServerEndNone && series.stop_max_ns != 0 && elapsed > series.stop_max_ns) {
      reason = kServerEndMaxDuration;
    }
  }
  if (reason == kServerEndNone) return;
  series.end_outstanding = outstanding;
  series.end_elapsed_ns = elapsed;
  series.end_reason.store(reason, std::memory_order_relaxed);
  series.issue_ended.store(true, std::memory_order_release);
}

void Session::run() {
  outcome_.test_datetime = local_datetime_iso8601();
  std::string base = config_.log.outdir + "/" + config_.log.prefix;
  if (config_.log.prefix_with_datetime) base += outcome_.test_datetime + "_";
  outcome_.detail_log_path = base + "detail" + config_.log.suffix + ".txt";
  if (!detail_.open(outcome_.detail_log_path, now_ns(), config_.log.copy_detail_to_stdout)) {
    outcome_.detail_log_path.clear();
  }
  outcome_.accuracy_log_path = base + "accuracy" + config_.log.suffix + ".json";
  if (!accuracy_log_.open(outcome_.accuracy_log_path)) {
    outcome_.accuracy_log_path.clear();
  }
  // Always created; empty unless tracing (spec/00 §6 step 6).
  chrome_trace_.open(base + "trace" + config_.log.suffix + ".json", config_.log.enable_trace, now_ns(),
                     wall_now_ns());
  // Registered issue threads: at most this many receive queries (the flags never move once allocated).
  thread_drain_capacity_ = std::min<uint64_t>(config_.settings.server_num_issue_query_threads, 4096);
  if (thread_drain_capacity_ != 0) {
    thread_drain_pending_.reset(new std::atomic<bool>[thread_drain_capacity_]);
    for (uint64_t t = 0; t < thread_drain_capacity_; ++t) thread_drain_pending_[t].store(false);
  }
  write_detail_header();
  if (outcome_.detail_log_path.empty()) {
    log("error_runtime", "Failed to open detail log file " + base + "detail" + config_.log.suffix + ".txt", true,
        false);
  }
  if (outcome_.accuracy_log_path.empty()) {
    log("error_runtime", "Failed to open accuracy log file " + base + "accuracy" + config_.log.suffix + ".json",
        true, false);
  }

  for (const auto& m : config_.pre_run_messages) log(m.key, m.text, m.is_error, m.is_warning);
  std::vector<LogMessage> settings_messages;
  settings_ = apply_test05(config_.settings, &settings_messages);
  effective_ = derive_effective(settings_, config_.qsl_total_count, config_.qsl_performance_count,
                                &settings_messages);
  for (const auto& m : settings_messages) log(m.key, m.text, m.is_error, m.is_warning);
  const int64_t settings_time = now_ns();
  for (const auto& entry : requested_settings_entries(settings_)) {
    detail_.add_at(settings_time, entry.first, entry.second, false, false, "native/settings_log.cc", 0);
  }
  for (const auto& entry : effective_settings_entries(effective_)) {
    detail_.add_at(settings_time, entry.first, entry.second, false, false, "native/settings_log.cc", 0);
  }
  outcome_.effective = effective_;
  outcome_.mode = settings_.mode;

  try {
    switch (settings_.mode) {
      case Mode::SubmissionRun:
        run_accuracy(config_.qsl_total_count);
        if (!aborted()) run_performance(config_.qsl_total_count);
        break;
      case Mode::AccuracyOnly:
        run_accuracy(config_.qsl_total_count);
        break;
      case Mode::PerformanceOnly:
        run_performance(config_.qsl_total_count);
        break;
      case Mode::FindPeakPerformance:
        run_find_peak(config_.qsl_total_count);
        break;
    }
  } catch (const std::exception& e) {
    log("error_runtime", std::string("loadgen internal error: ") + e.what(), true, false);
    abort(e.what());
  }

  // Workers waiting in dispatch_next() return now instead of at their timeout.
  run_over_.store(true, std::memory_order_seq_cst);
  dispatch_signal_.notify();
  accuracy_log_.close();
  chrome_trace_.close();
  outcome_.accuracy_log_records = accuracy_log_.records_written();
  outcome_.aborted = aborted();
  outcome_.completion_errors.invalid_ids = invalid_ids_.load();
  outcome_.completion_errors.unissued_ids = unissued_ids_.load();
  outcome_.completion_errors.duplicate_ids = duplicate_ids_.load();
  outcome_.completion_errors.first_invalid_id = first_invalid_id_.load();
  outcome_.completion_errors.first_duplicate_id = first_duplicate_id_.load();
  outcome_.completion_errors.first_token_after_completion = first_token_after_completion_.load();
  outcome_.completion_errors.duplicate_first_tokens = duplicate_first_tokens_.load();
  write_completion_errors();
  std::string abort_reason;
  {
    std::lock_guard<std::mutex> lock(messages_mutex_);
    abort_reason = outcome_.abort_reason;
  }
  if (outcome_.aborted && !abort_reason.empty()) {
    log("error_runtime", "Run aborted: " + abort_reason, true, false);
    outcome_.extra_invalid_reasons.push_back("The run was aborted: " + abort_reason);
  }
  if (outcome_.has_summary && !outcome_.extra_invalid_reasons.empty()) outcome_.summary.result_valid = false;
  if (outcome_.has_summary) write_detail_results();
  {
    std::lock_guard<std::mutex> lock(messages_mutex_);
    for (const auto& m : outcome_.messages) {
      if (m.is_error) ++outcome_.error_count;
      if (m.is_warning) ++outcome_.warning_count;
    }
  }
  outcome_.error_count += completion_error_lines_;
  write_summary();
  // For `loadgen report`: computed from the records now that the run is over.
  write_report_data(series_, effective_, outcome_, config_.log);
  detail_.close();
  host_->finished();
}

void Session::write_detail_header() {
  const VersionInfo& v = version_info();
  const char* kFile = "native/session.cc";
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
  detail_.add_at(t2, "sut_name", DetailLog::quote(config_.sut_name), false, false, kFile, __LINE__);
  // The SUT's name is read once in JS before the run; there is no call to time.
  detail_.add_at(t2, "get_sut_name_duration_ns", "0", false, false, kFile, __LINE__);
  detail_.add_at(t2, "qsl_name", DetailLog::quote(config_.qsl_name), false, false, kFile, __LINE__);
  detail_.add_at(t2, "qsl_reported_total_count", std::to_string(config_.qsl_total_count), false, false, kFile,
                 __LINE__);
  detail_.add_at(t2, "qsl_reported_performance_count", std::to_string(config_.qsl_performance_count), false, false,
                 kFile, __LINE__);
}

void Session::write_series_footer(const Series& series) {
  const char* kFile = "native/session.cc";
  const int64_t t = now_ns();
  // The reference's logger contention counters; this logger has none.
  for (const char* key : {"logger_swap_request_slots_retry_count", "logger_swap_request_slots_retry_retry_count",
                          "logger_swap_request_slots_retry_reencounter_count",
                          "logger_start_reading_entries_retry_count", "logger_tls_total_log_cas_fail_count",
                          "logger_tls_total_swap_buffers_slot_retry_count"}) {
    detail_.add_at(t, key, "0", false, false, kFile, __LINE__);
  }
  int64_t last_completion = 0;
  const uint64_t issued_samples = series.issued_queries * series.samples_per_query;
  for (uint64_t k = 0; k < issued_samples; ++k) {
    last_completion = std::max(last_completion, series.completed_ns[k].load(std::memory_order_acquire));
  }
  const int64_t t2 = now_ns();
  detail_.add_at(t2, "power_begin", DetailLog::quote(utc_power_timestamp(series.wall_start_ns)), false, false, kFile,
                 __LINE__);
  detail_.add_at(t2, "power_end", DetailLog::quote(utc_power_timestamp(series.wall_start_ns + last_completion)),
                 false, false, kFile, __LINE__);
}

void Session::write_completion_errors() {
  // One line per rejected id, as the reference logs each duplicate; capped so
  // a runaway SUT cannot fill the disk.
  constexpr uint64_t kMaxLinesPerKind = 1000;
  struct Kind {
    uint64_t count;
    const char* text;
  };
  const Kind kinds[] = {
      {outcome_.completion_errors.duplicate_ids, "Attempted to complete a sample twice."},
      {outcome_.completion_errors.invalid_ids,
       "Received a completion for an id that is not a sample of the current series (unknown, out of range, "
       "or from an earlier series)."},
      {outcome_.completion_errors.unissued_ids, "Received a completion for a sample that was not issued yet."},
      // Token latencies: the reference's texts (spec/60 §1.2).
      {outcome_.completion_errors.duplicate_first_tokens, "Attempted to complete a sample twice."},
      {outcome_.completion_errors.first_token_after_completion,
       "Attempted to record token latency after sample was completed"},
      {outcome_.completion_errors.missing_first_tokens,
       "Attempted to record a sample latency before it's first token latency"},
      {outcome_.completion_errors.zero_tokens, "n_tokens argument missing or attempted to record 0 as number of tokens"},
      {outcome_.completion_errors.negative_tokens, "Attempted to record a negative number of tokens"},
      {outcome_.completion_errors.one_token, "Number of tokens need to be greater than 1"},
  };
  for (const Kind& kind : kinds) {
    const uint64_t lines = std::min(kind.count, kMaxLinesPerKind);
    for (uint64_t i = 0; i < lines; ++i) detail_.add("error_runtime", DetailLog::quote(kind.text), true, false);
    completion_error_lines_ += lines;
    if (kind.count > kMaxLinesPerKind) {
      detail_.add("error_runtime",
                  DetailLog::quote(std::to_string(kind.count - kMaxLinesPerKind) + " more of: " + kind.text), true,
                  false);
      completion_error_lines_ += 1;
    }
  }
}

void Session::write_detail_results() {
  auto entries = detail_result_entries(outcome_.summary, errors_so_far());
  for (auto& entry : entries) {
    if (entry.first == "result_invalid_reason" && !outcome_.extra_invalid_reasons.empty()) {
      // The reference's text (quoted, unescaped) plus our reasons.
      std::string text = entry.second.size() >= 2 ? entry.second.substr(1, entry.second.size() - 2) : "";
      for (const auto& reason : outcome_.extra_invalid_reasons) text += reason + " ";
      entry.second = DetailLog::quote(text);
    }
  }
  const int64_t t = now_ns();
  for (const auto& entry : entries) {
    detail_.add_at(t, entry.first, entry.second, false, false, "native/results.cc", 0);
  }
}

void Session::run_accuracy(uint64_t qsl_total) {
  log("generic_message", "Starting accuracy mode", false, false);
  const auto sets = generate_loadable_sets(effective_, effective_.accuracy_sample_count, qsl_total);
  for (const auto& set : sets) {
    if (aborted()) return;
    run_series(set, SeriesKind::Accuracy);
  }
}

void Session::run_performance(uint64_t qsl_total) {
  log("generic_message", "Starting performance mode", false, false);
  const auto sets = generate_loadable_sets(effective_, effective_.performance_sample_count, qsl_total);
  if (sets.empty()) throw std::invalid_argument("the QSL reported no samples to load");
  clock_check_ = true;  // RunPerformanceMode only, not FindPeak trials
  Series* series = run_series(sets.front(), SeriesKind::Performance);
  clock_check_ = false;
  if (series != nullptr && series->issued_queries != 0) {
    outcome_.summary = summarize_series(*series);
    outcome_.overhead = measure_overhead(*series);
    outcome_.has_summary = true;
  }
}

namespace {
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

std::string qps_text(double qps) { return std::to_string(qps); }  // the reference's to_string: %f

// The overhead of the (last) trial run at `qps`.
RunOverhead overhead_of_trial(const std::vector<PeakTrial>& trials, double qps) {
  for (auto it = trials.rbegin(); it != trials.rend(); ++it) {
    if (it->target_qps == qps) return it->overhead;
  }
  return {};
}
}  // namespace

bool Session::run_peak_trial(double qps, bool load, bool unload, PerformanceSummary* summary) {
  TestSettings trial = settings_;
  trial.server_target_qps = qps;
  effective_ = derive_effective(trial, config_.qsl_total_count, config_.qsl_performance_count, nullptr);
  const auto sets =
      generate_loadable_sets(effective_, effective_.performance_sample_count, config_.qsl_total_count);
  if (sets.empty()) throw std::invalid_argument("the QSL reported no samples to load");
  Series* series = run_series(sets.front(), SeriesKind::Performance, load, unload);
  if (series == nullptr || series->issued_queries == 0 || aborted()) return false;
  *summary = summarize_series(*series);
  outcome_.peak_trials.push_back(PeakTrial{qps, summary->perf_constraints_met,
                                           summary->target_latency_percentile.sample_latency,
                                           series->issued_queries, measure_overhead(*series)});
  return true;
}

void Session::run_find_peak(uint64_t qsl_total) {
  (void)qsl_total;
  log("generic_message", "Starting FindPeakPerformance mode", false, false);
  if (effective_.scenario != Scenario::Server) {
    log("error_invalid_config", "Finding peak performance is only supported in Server scenarios.", true, false);
    return;
  }
  const double step = settings_.server_find_peak_qps_boundary_step_size;
  const double scale = std::pow(10.0, static_cast<uint8_t>(settings_.server_find_peak_qps_decimals_of_precision));
  // Upper bounds beyond this would pre-generate more queries than a run can hold.
  const double max_qps = 4.0e9 / std::max(1.0, static_cast<double>(settings_.min_duration_ms) / 1000.0);

  double lower_qps = settings_.server_target_qps;
  PerformanceSummary lower;
  log("generic_message", "FindPeakPerformance: Check validity of the base settings field: " + qps_text(lower_qps),
      false, false);
  if (!run_peak_trial(lower_qps, true, true, &lower)) return;
  if (!lower.perf_constraints_met) {
    log("error_runtime",
        "FindPeakPerformance: Initial lower bound does not satisfy performance constraints, msg: " +
            lower.perf_constraints_recommendation,
        true, false);
    outcome_.summary = lower;
    outcome_.has_summary = true;
    outcome_.overhead = outcome_.peak_trials.front().overhead;
    return;
  }

  // FindBoundaries: widen until a trial fails the latency constraint.
  double upper_qps = 0;
  for (;;) {
    upper_qps = lower_qps * (1 + step);
    if (!(upper_qps > lower_qps) || upper_qps > max_qps) {
      log("error_runtime",
          "FindPeakPerformance: cannot widen the bounds beyond " + qps_text(lower_qps) +
              " (boundary step size or generation limit); reporting the lower bound.",
          true, false);
      outcome_.summary = lower;
      outcome_.has_summary = true;
      outcome_.peak_qps = lower_qps;
      outcome_.overhead = overhead_of_trial(outcome_.peak_trials, lower_qps);
      return;
    }
    log("generic_message", "FindBoundaries: Checking fields [" + qps_text(lower_qps) + ", " + qps_text(upper_qps) + ")",
        false, false);
    PerformanceSummary upper;
    if (!run_peak_trial(upper_qps, true, true, &upper)) return;
    if (!upper.perf_constraints_met) break;
    lower_qps = upper_qps;
    lower = upper;
  }
  log("generic_message",
      "FindPeakPerformance: Found boundaries: [" + qps_text(lower_qps) + ", " + qps_text(upper_qps) + ")", false,
      false);

  // Binary search on one loaded set (the upper bound's), kept loaded throughout.
  bool loaded = false;
  auto finished = [&] {
    return std::floor(lower_qps * scale) + 1 >= std::floor(upper_qps * scale);
  };
  while (!finished() && !aborted()) {
    const double mid_qps = lower_qps + (upper_qps - lower_qps) / 2;
    log("generic_message",
        "FindPeakPerformanceBinarySearch: Testing the mid value of bounds [" + qps_text(lower_qps) + ", " +
            qps_text(upper_qps) + "): " + qps_text(mid_qps),
        false, false);
    PerformanceSummary mid;
    if (!run_peak_trial(mid_qps, !loaded, false, &mid)) break;
    loaded = true;
    if (mid.perf_constraints_met) {
      lower_qps = mid_qps;
      lower = mid;
    } else {
      upper_qps = mid_qps;
    }
  }
  if (loaded && config_.host_loads_samples) {
    std::string error;
    const auto& set = series_.back()->loaded_set;
    if (!host_->unload_samples(set, &error) && !error.empty()) {
      log("error_runtime", "unloadSamplesFromRam failed: " + error, true, false);
    }
  }
  if (aborted()) return;
  log("generic_message", "FindPeakPerformance: Found peak performance field: " + qps_text(lower_qps), false, false);
  outcome_.summary = lower;
  outcome_.has_summary = true;
  outcome_.peak_qps = lower_qps;
  outcome_.overhead = overhead_of_trial(outcome_.peak_trials, lower_qps);
}

ScratchArray<int64_t> times_since_due(const Series& series, Scenario scenario, const int64_t* times) {
  const uint64_t issued = series.issued_queries;
  const bool waits_for_previous = scenario == Scenario::SingleStream || scenario == Scenario::MultiStream;
  ScratchArray<int64_t> out(issued);
  for (uint64_t q = 0; q < issued; ++q) {
    int64_t due = 0;
    if (scenario == Scenario::Server) {
      due = series.trace.scheduled_delta_ns[q];
    } else if (waits_for_previous && q > 0) {
      due = series.query_done_time(q - 1);
      if (due == Series::kNotCompleted) continue;  // never completed: nothing was due
    }
    if (times[q] != Series::kNotCompleted) out.push_back(times[q] - due);
  }
  return out;
}

RunOverhead Session::measure_overhead(const Series& series) const {
  RunOverhead out;
  const uint64_t issued = series.issued_queries;
  if (issued == 0) return out;
  auto stats = [](ScratchArray<int64_t>&& v) {
    OverheadStats st;
    if (v.empty()) return st;
    std::sort(v.begin(), v.end());
    const auto at = [&](double p) { return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))]; };
    st.count = v.size();
    st.p50 = at(0.50);
    st.p90 = at(0.90);
    st.p99 = at(0.99);
    st.p999 = at(0.999);
    st.max = v.back();
    double sum = 0;
    for (int64_t x : v) sum += static_cast<double>(x);
    st.mean = sum / static_cast<double>(v.size());
    return st;
  };
  out.issue_lateness = stats(times_since_due(series, effective_.scenario, series.issued_ns.get()));
  out.present = out.issue_lateness.count != 0;
  out.delivery_lag = stats(times_since_due(series, effective_.scenario, series.dispatched_ns.get()));
  out.has_delivery_lag = out.delivery_lag.count != 0;
  return out;
}

Series* Session::run_series(const LoadableSet& set, SeriesKind kind, bool load, bool unload) {
  if (load) {
    detail_.add("loaded_qsl_set", DetailLog::integer_list(set.indices), false, false, "native/session.cc", __LINE__);
  }
  // The reference's tid is a thread-id hash; 32 bits keep it exact as a JS number.
  const uint64_t session_tid = std::hash<std::thread::id>{}(std::this_thread::get_id()) & 0xffffffffu;
  if (config_.host_loads_samples && load) {
    std::string error;
    const int64_t load_start = now_ns();
    const bool loaded = host_->load_samples(set.indices, &error);
    chrome_trace_.complete("LoadSamples", session_tid, load_start, now_ns());
    if (!loaded) {
      abort(error.empty() ? "loadSamplesToRam failed" : error);
      return nullptr;
    }
  }
  Series* series = nullptr;
  if (!aborted()) {
    // The reference reads both clocks after loading, before generating (spec/00 §6.1 step 3).
    const int64_t pc_start = now_ns();
    const int64_t sc_start = wall_now_ns();
    if (clock_check_ && settings_.print_timestamps) {
      std::cout << "Loadgen :: Perf mode start. system_clock Timestamp = " << sc_start / 1000000000 << "\n"
                << std::flush;
    }
    const int64_t generate_start = now_ns();
    series = prepare_series(set, kind);
    chrome_trace_.complete("GenerateQueries", session_tid, generate_start, now_ns());
    if (series != nullptr) {
      issue_queries(*series);
      if (clock_check_) check_perf_clocks(pc_start, sc_start, now_ns(), wall_now_ns());
      write_trace_series(*series);
      write_series_footer(*series);
      if (series->n_tokens) check_tokens(*series);
    }
  }
  if (series != nullptr) series->loaded_set = set.indices;
  if (config_.host_loads_samples && unload) {
    std::string error;
    const int64_t unload_start = now_ns();
    const bool unloaded = host_->unload_samples(set.indices, &error);
    chrome_trace_.complete("UnloadSampes", session_tid, unload_start, now_ns());  // sic, as the reference
    if (!unloaded && !error.empty()) {
      log("error_runtime", "unloadSamplesFromRam failed: " + error, true, false);
    }
  }
  return series;
}

Series* Session::prepare_series(const LoadableSet& set, SeriesKind kind) {
  auto owned = std::make_unique<Series>();
  Series& s = *owned;
  s.kind = kind;
  s.trace = generate_queries(effective_, kind, set, sequence_);
  s.samples_per_query = s.trace.samples_per_query == 0 ? 1 : s.trace.samples_per_query;
  s.sample_count = s.trace.sample_count();
  s.first_id = s.trace.first_sample_id + 1;
  const uint64_t queries = s.trace.query_count();
  const int64_t generated_at = now_ns();
  detail_.add_at(generated_at, "generated_query_count", std::to_string(queries), false, false, "native/session.cc",
                 __LINE__);
  detail_.add_at(generated_at, "generated_samples_per_query", std::to_string(s.trace.samples_per_query), false, false,
                 "native/session.cc", __LINE__);
  detail_.add_at(generated_at, "generated_query_duration", std::to_string(s.trace.generated_query_duration_ns), false,
                 false, "native/session.cc", __LINE__);
  outcome_.series_count += 1;
  outcome_.generated_query_count += queries;
  outcome_.generated_sample_count += s.sample_count;
  if (queries == 0) {
    log("error_runtime", "No queries were generated; check min_query_count and min_duration_ms.", true, false);
    return nullptr;
  }

  s.issued_ns.reset(new int64_t[queries]);
  s.dispatched_ns.reset(new int64_t[queries]);
  std::fill_n(s.issued_ns.get(), queries, kNotCompleted);
  std::fill_n(s.dispatched_ns.get(), queries, kNotCompleted);
  s.completed_ns.reset(new std::atomic<int64_t>[s.sample_count]);
  for (uint64_t k = 0; k < s.sample_count; ++k) s.completed_ns[k].store(kNotCompleted, std::memory_order_relaxed);
  if (settings_.use_token_latencies) {
    s.needs_first_token = effective_.scenario != Scenario::Offline;
    s.first_token_ns.reset(new std::atomic<int64_t>[s.sample_count]);
    s.n_tokens.reset(new std::atomic<int64_t>[s.sample_count]);
    for (uint64_t k = 0; k < s.sample_count; ++k) {
      s.first_token_ns[k].store(kNotCompleted, std::memory_order_relaxed);
      s.n_tokens[k].store(0, std::memory_order_relaxed);
    }
  }
  if (s.samples_per_query > 1) {
    s.outstanding.reset(new std::atomic<uint32_t>[queries]);
    s.query_done_ns.reset(new std::atomic<int64_t>[queries]);
    for (uint64_t q = 0; q < queries; ++q) {
      s.outstanding[q].store(static_cast<uint32_t>(s.samples_per_query), std::memory_order_relaxed);
      s.query_done_ns[q].store(kNotCompleted, std::memory_order_relaxed);
    }
  }
  // Accuracy series ignore max_duration (they issue everything), so only the
  // completion timeout bounds their waits.
  stall_limit_ns_ = static_cast<int64_t>(config_.completion_timeout_ms) * 1000000;
  if (kind == SeriesKind::Performance && effective_.max_duration_ms != 0) {
    const int64_t max_duration_ns = static_cast<int64_t>(effective_.max_duration_ms) * 1000000;
    if (stall_limit_ns_ == 0 || max_duration_ns < stall_limit_ns_) stall_limit_ns_ = max_duration_ns;
  }
  // Before the series is visible: hosts ask whether it coalesces when it starts.
  s.coalesce = effective_.scenario == Scenario::Server && settings_.server_coalesce_queries;
  const int64_t live_target_ns =
      kind == SeriesKind::Accuracy ? 0
      : effective_.scenario == Scenario::Server
          ? s.trace.scheduled_delta_ns.back()
          : static_cast<int64_t>(effective_.target_duration_ms) * 1000000;
  live_.begin_series(kind, effective_.scenario, live_target_ns, queries, s.samples_per_query);
  series_.push_back(std::move(owned));
  current_.store(&s, std::memory_order_release);
  if (!config_.complete_on_issue_thread) host_->series_started();
  return &s;
}

int64_t Session::scheduled_ns(const Series& series, uint64_t q) const {
  switch (effective_.scenario) {
    case Scenario::Server:
      return series.trace.scheduled_delta_ns[q];
    case Scenario::Offline:
      return 0;
    default:
      return series.issued_ns[q];  // SingleStream/MultiStream: scheduled when issued
  }
}

template <typename Ready>
bool Session::wait_with_stall_limit(Series& series, Ready ready) {
  const int64_t poll_ns =
      stall_limit_ns_ > 0 ? std::min<int64_t>(50000000, std::max<int64_t>(stall_limit_ns_ / 8, 1000000)) : 50000000;
  uint64_t seen_completions = series.completed_samples.load(std::memory_order_acquire);
  int64_t last_progress = now_ns();
  for (;;) {
    if (signal_.wait(ready, 0, kCompletionSpinNs, poll_ns)) return true;
    if (aborted()) return false;
    const uint64_t completions = series.completed_samples.load(std::memory_order_acquire);
    const int64_t now = now_ns();
    if (completions != seen_completions) {
      seen_completions = completions;
      last_progress = now;
    } else if (stall_limit_ns_ > 0 && now - last_progress >= stall_limit_ns_) {
      return ready();
    }
  }
}

void Session::issue_queries(Series& series) {
  const std::string pin_warning = prepare_issue_thread(config_.issue_thread_cpu);
  if (!pin_warning.empty() && outcome_.series_count == 1) log("warning_generic_message", pin_warning, false, true);
  const bool pinned = config_.issue_thread_cpu >= 0 && pin_warning.empty();
  const int64_t spin_window_ns = pinned ? kMaxSleepSliceNs : kServerSpinWindowNs;

  const EffectiveSettings& s = effective_;
  const bool accuracy = series.kind == SeriesKind::Accuracy;
  const uint64_t queries = series.trace.query_count();
  const bool server = s.scenario == Scenario::Server;
  const bool waits_for_previous = s.scenario == Scenario::SingleStream || s.scenario == Scenario::MultiStream;
  const int64_t target_duration_ns = static_cast<int64_t>(s.target_duration_ms) * 1000000;
  const int64_t max_duration_ns = static_cast<int64_t>(s.max_duration_ms) * 1000000;
  bool ran_out = !server && !accuracy;
  bool stalled = false;
  uint64_t issued = 0;
  // Registered issue threads (before the clock starts: the wait is not part of the series).
  const uint64_t stride = attach_issue_threads();
  series.issue_stride = stride;
  const bool coalesce = series.coalesce;
  const DispatchMode dispatch = config_.dispatch;
  if (dispatch == DispatchMode::Worker && !config_.complete_on_issue_thread && !attach_dispatch_workers()) return;
  // SingleStream/MultiStream hand-over: the host's completing calls may issue
  // the next query themselves (set before the first publication, like the limits).
  series.hand_over =
      waits_for_previous && !config_.complete_on_issue_thread && stride == 0 && dispatch != DispatchMode::Worker;
  // A spinning worker (dispatchSpinUs) is there at due times too.
  series.poll_issue = server && stride == 0 && !coalesce && !config_.complete_on_issue_thread &&
                      (dispatch == DispatchMode::Poll || (dispatch == DispatchMode::Worker && config_.dispatch_spin_ns > 0));
  const bool wake_ahead =
      config_.wake_lead_ns > 0 && server && dispatch == DispatchMode::Wake && stride == 0 &&
      !config_.complete_on_issue_thread && !accuracy;
  series.stop_min_queries = s.min_query_count;
  series.stop_max_queries = s.max_query_count;
  series.stop_target_ns = target_duration_ns;
  series.stop_max_ns = s.max_duration_ms != 0 ? max_duration_ns : 0;
  // The issue thread named in early-out messages: the one that issued query q.
  auto thread_of = [&](uint64_t q) { return std::to_string(stride == 0 ? 0 : q % stride); };
  // The reference's early-out messages (whoever decided the end: this loop, or
  // with poll_issue the issuer of query q, decide_server_end).
  auto log_early_end = [&](int reason, uint64_t q, uint64_t issued_count, uint64_t outstanding, int64_t elapsed) {
    std::string text = "IssueQueryThread " + thread_of(q) + " Ending early: ";
    if (reason == kServerEndTooManyOutstanding) {
      text += "Too many outstanding queries. issued " + std::to_string(issued_count) + " outstanding " +
              std::to_string(outstanding);
    } else if (reason == kServerEndMaxQueries) {
      text += "Max query count reached. query_count " + std::to_string(issued_count);
    } else {
      text += "Max test duration reached. duration_ns " + std::to_string(elapsed);
    }
    log("error_runtime", text, true, false);
  };

  series.wall_start_ns = wall_now_ns();
  series.start_ns = now_ns();
  live_.issuing_started(series.start_ns);
  for (uint64_t q = 0; q < queries; ++q) {
    if (aborted()) {
      ran_out = false;
      break;
    }
    int64_t now;
    // Hand-over: queries handed_from..q were issued by completing calls (only
    // the last one's stop checks can end issuing; they are repeated below).
    bool handed = false;
    uint64_t handed_from = q;
    if (server) {
      const int64_t target = series.start_ns + series.trace.scheduled_delta_ns[q];
      now = now_ns();
      // In slices, so an abort is noticed (pinned: spun, not slept).
      while (target - now > kMaxSleepSliceNs + spin_window_ns && !aborted()) {
        now = wait_until_ns(now + kMaxSleepSliceNs, pinned ? kMaxSleepSliceNs : 0, !pinned);
      }
      if (aborted()) {
        ran_out = false;
        break;
      }
      issue_thread_cpu_.store(current_cpu(), std::memory_order_relaxed);
      if (wake_ahead) {
        // Wake the host's thread wake_lead_ns early when it sleeps: its drain
        // waits for this query (Session::drain_published), so the wake-up's
        // latency is spent before the due time, not after it.
        wait_until_ns(target - config_.wake_lead_ns, spin_window_ns, !pinned);
        if (!drain_pending_.exchange(true, std::memory_order_seq_cst)) host_->wake();
      }
      now = wait_until_ns(target, spin_window_ns, !pinned);
      if (series.poll_issue) {
        uint64_t n = q;
        if (!series.next_issue.compare_exchange_strong(n, q + 1, std::memory_order_acq_rel)) {
          // The poller issued q (and maybe more) while this thread was late.
          while (series.published.load(std::memory_order_acquire) < n) cpu_relax();
          handed = true;
          q = n - 1;
          now = series.start_ns + series.issued_ns[q];
        }
      }
    } else if (waits_for_previous && q > 0) {
      // The previous query must complete; with hand-over the completing call
      // may have issued this one (and more) already. No per-query wake then:
      // only the end of issuing or a completion that handed nothing over.
      if (!wait_with_stall_limit(series, [&] {
            if (!series.hand_over) return series.query_done(q - 1);
            if (series.issue_ended.load(std::memory_order_acquire)) return true;
            return series.query_done(series.next_issue.load(std::memory_order_acquire) - 1) &&
                   series.handing_over.load(std::memory_order_seq_cst) == 0;
          })) {
        if (!aborted()) stalled = true;
        ran_out = false;
        break;
      }
      if (series.hand_over) {
        uint64_t n = series.next_issue.load(std::memory_order_acquire);
        if (n == q) series.next_issue.compare_exchange_strong(n, q + 1, std::memory_order_acq_rel);
        if (n > q) {  // claimed by a completing call (a lost CAS reloads n)
          while (series.published.load(std::memory_order_acquire) < n) cpu_relax();
          handed = true;
          q = n - 1;
        }
      }
      now = handed ? series.start_ns + series.issued_ns[q] : now_ns();
    } else {
      now = now_ns();
    }
    // Coalescing (spec/30 §7): every following query already due is issued
    // with this one (same issue time, its own scheduled time) and published
    // at once; the host's drain merges them into one IssueQuery call.
    const uint64_t first = handed ? handed_from : q;
    if (coalesce) {
      while (q + 1 < queries && now - series.start_ns >= series.trace.scheduled_delta_ns[q + 1]) ++q;
    }
    if (!handed) {
      for (uint64_t j = first; j <= q; ++j) series.issued_ns[j] = now - series.start_ns;
      if (series.hand_over) {
        // Claimed here (q > 0: by the CAS above); whether issuing ends after
        // this query is known before a completing call could claim the next.
        if (q == 0) series.next_issue.store(1, std::memory_order_relaxed);
        if (sequence_ends(series, q + 1, now - series.start_ns)) {
          series.issue_ended.store(true, std::memory_order_release);
        }
      }
      if (series.poll_issue) decide_server_end(series, q + 1, now - series.start_ns);
      series.published.store(q + 1, std::memory_order_release);
    }
    issued += q - first + 1;
    if (handed) {
      // Already with the host: the completing call hands it to the SUT.
    } else if (config_.complete_on_issue_thread) {
      for (uint64_t j = first; j <= q; ++j) complete_on_issue_thread(series, j, now_ns() - series.start_ns);
    } else if (stride != 0) {
      // Wake each issue thread that got a query, unless its drain is pending.
      for (uint64_t j = first; j <= q && j < first + stride; ++j) {
        const uint64_t t = j % stride;
        if (!thread_drain_pending_[t].exchange(true, std::memory_order_seq_cst)) host_->wake_issue_thread(t);
      }
    } else if (dispatch == DispatchMode::Worker) {
      dispatch_signal_.notify();  // a syscall only when a worker sleeps
    } else if (dispatch == DispatchMode::Poll) {
      // Nothing: the host's thread polls published_queries() while the series runs.
    } else if (!drain_pending_.exchange(true, std::memory_order_seq_cst)) {
      host_->wake();
    }
    if (accuracy) continue;  // accuracy series issue every query

    const int64_t elapsed = now - series.start_ns;
    if (series.poll_issue) {
      // Decided by whoever issued query q (decide_server_end); logged here.
      if (!series.issue_ended.load(std::memory_order_acquire)) continue;
      const int reason = series.end_reason.load(std::memory_order_relaxed);
      if (reason == kServerEndLastQuery) continue;  // the loop ends
      log_early_end(reason, q, issued, series.end_outstanding, series.end_elapsed_ns);
      if (reason != kServerEndTooManyOutstanding) ran_out = false;
      break;
    }
    if (server) {
      if (s.max_async_queries != 0) {
        const uint64_t outstanding = issued - series.done_queries.load(std::memory_order_acquire);
        if (outstanding > s.max_async_queries) {
          log_early_end(kServerEndTooManyOutstanding, q, issued, outstanding, elapsed);
          break;
        }
      }
    } else if (issued >= s.min_query_count && elapsed >= target_duration_ns) {
      log("generic_message", "Ending naturally: Minimum query count and test duration met.", false, false);
      ran_out = false;
      break;
    }
    if (s.max_query_count != 0 && issued >= s.max_query_count) {
      log_early_end(kServerEndMaxQueries, q, issued, 0, elapsed);
      ran_out = false;
      break;
    }
    if (s.max_duration_ms != 0 && elapsed > max_duration_ns) {
      log_early_end(kServerEndMaxDuration, q, issued, 0, elapsed);
      ran_out = false;
      break;
    }
  }

  if (series.hand_over || series.poll_issue) {
    // Completing calls (the poller) issue nothing more. One that claimed a query after the
    // loop stopped looking (an abort) still publishes it: count it as issued.
    const uint64_t claimed = series.next_issue.exchange(Series::kHandOverClosed, std::memory_order_acq_rel);
    while (series.published.load(std::memory_order_acquire) < claimed) cpu_relax();
    issued = std::max(issued, claimed);
  }
  series.issuing_ended.store(true, std::memory_order_seq_cst);
  dispatch_signal_.notify();
  if (!config_.complete_on_issue_thread && !aborted()) host_->flush_queries();
  if (ran_out && !aborted()) {
    log("error_runtime",
        "Ending early: Ran out of generated queries to issue before the minimum query count and test duration "
        "were reached. Please update the relevant expected latency or target qps in the TestSettings so they "
        "are more accurate.",
        true, false);
  }
  live_.issuing_ended();
  series.issued_queries = issued;
  const uint64_t issued_samples = issued * series.samples_per_query;
  outcome_.issued_query_count += issued;
  outcome_.issued_sample_count += issued_samples;

  if (stalled) {
    outcome_.extra_invalid_reasons.push_back("The SUT stopped completing samples: no completion arrived for " +
                                             std::to_string(stall_limit_ns_ / 1000000) + " ms while query " +
                                             std::to_string(issued - 1) + " was outstanding.");
  } else if (!aborted()) {
    const bool all_done = wait_with_stall_limit(
        series, [&] { return series.done_queries.load(std::memory_order_acquire) >= issued; });
    if (!all_done && !aborted()) {
      const uint64_t missing = issued_samples - series.completed_samples.load(std::memory_order_acquire);
      outcome_.extra_invalid_reasons.push_back(
          std::to_string(missing) + " issued samples never completed (no completion arrived within the "
                                    "completion timeout after issuing ended).");
    }
  }
  if (dispatch == DispatchMode::Worker && !config_.complete_on_issue_thread) quiesce_dispatch_workers();
  // Counted from the records, not from completed_samples: a completing call
  // marks each sample (and its query done) before it adds its batch to that
  // counter, so the counter can lag the moment every query is seen done.
  uint64_t incomplete = 0;
  for (uint64_t k = 0; k < issued_samples; ++k) {
    if (series.completed_ns[k].load(std::memory_order_acquire) == kNotCompleted) ++incomplete;
  }
  outcome_.completed_sample_count += issued_samples - incomplete;
  outcome_.incomplete_sample_count += incomplete;
  if (incomplete != 0) {
    log("error_runtime",
        "Encountered incomplete samples at the end of a series of queries. count: " + std::to_string(incomplete),
        true, false);
  }
}

uint64_t Session::attach_issue_threads() {
  const uint64_t n = settings_.server_num_issue_query_threads;
  if (n == 0) return 0;
  const std::vector<uint64_t> ids = host_->wait_for_issue_threads(n, config_.issue_thread_wait_ms);
  for (uint64_t i = issue_threads_logged_; i < ids.size(); ++i) {
    log("generic_message",
        "Registered IssueQueryThread[" + std::to_string(i) + "]. thread ID : " + std::to_string(ids[i]), false, false);
  }
  issue_threads_logged_ = std::max<uint64_t>(issue_threads_logged_, ids.size());
  if (ids.size() != n) {
    log("error_runtime",
        "Mismatch between settings and number of registered IssueQueryThreads! "
        "settings.server_num_issue_query_threads = " +
            std::to_string(n) + " but " + std::to_string(ids.size()) + " threads registered.",
        true, false);
  }
  // Only Server spreads queries over registered threads; the null-native SUT
  // completes on the issue thread. With fewer registrations than asked, the
  // registered ones share all queries (the reference would leave holes).
  uint64_t stride = 0;
  if (effective_.scenario == Scenario::Server && !config_.complete_on_issue_thread) {
    stride = std::min<uint64_t>(std::min<uint64_t>(ids.size(), n), thread_drain_capacity_);
  }
  for (uint64_t t = 0; t < stride; ++t) thread_drain_pending_[t].store(false, std::memory_order_seq_cst);
  host_->use_issue_threads(stride);
  return stride;
}

bool Session::attach_dispatch_workers() {
  if (dispatch_attached_) return true;
  const uint64_t n = config_.dispatch_workers;
  const std::vector<uint64_t> ids = host_->wait_for_dispatch_workers(n, config_.issue_thread_wait_ms);
  for (uint64_t i = 0; i < ids.size(); ++i) {
    log("generic_message", "Registered dispatch worker[" + std::to_string(i) + "]. thread ID : " + std::to_string(ids[i]),
        false, false);
  }
  if (ids.size() < n) {
    const std::string text = "dispatch 'worker' needs " + std::to_string(n) + " registered worker thread(s) but " +
                             std::to_string(ids.size()) + " registered within " +
                             std::to_string(config_.issue_thread_wait_ms) + " ms";
    log("error_runtime", text, true, false);
    abort(text);
    return false;
  }
  dispatch_parts_ = std::max<uint64_t>(1, n);
  dispatch_attached_ = true;
  return true;
}

uint64_t Session::outstanding_samples() const {
  const Series* s = current();
  if (s == nullptr) return 0;
  const uint64_t issued = s->published.load(std::memory_order_acquire) * s->samples_per_query;
  const uint64_t done = s->completed_samples.load(std::memory_order_acquire);
  return issued > done ? issued - done : 0;
}

bool Session::claim(Series& series, DispatchClaim* out) {
  const uint64_t spq = series.samples_per_query;
  // Offline's one query is split so every worker gets a part; otherwise a
  // claim is one whole query (every due one when coalescing).
  const bool split = effective_.scenario == Scenario::Offline;
  const uint64_t part = split ? (spq + dispatch_parts_ - 1) / dispatch_parts_ : spq;
  uint64_t cur = series.claimed_samples.load(std::memory_order_acquire);
  uint64_t n = 0;
  for (;;) {
    const uint64_t available = series.published.load(std::memory_order_acquire) * spq;
    if (cur >= available) return false;
    n = series.coalesce ? available - cur : std::min(part, available - cur);
    if (series.claimed_samples.compare_exchange_weak(cur, cur + n, std::memory_order_acq_rel)) break;
  }
  // The claim holding a query's first sample stamps its delivery (one writer per query).
  const int64_t t = now_ns() - series.start_ns;
  for (uint64_t q = (cur + spq - 1) / spq; q * spq < cur + n; ++q) series.dispatched_ns[q] = t;
  out->first_id = series.first_id;
  out->first_sample = cur;
  out->samples = n;
  return true;
}

void Session::quiesce_dispatch_workers() {
  // A worker's completion call is followed by its accuracy-log calls
  // (logResponse) in the same JS task; the series' records must be in before
  // the log moves on. Every worker back inside dispatch_next() proves its
  // task ended. Bounded: a worker that stopped (its SUT threw) never returns.
  const int64_t deadline = now_ns() + 1000000000;
  while (dispatch_inside_.load(std::memory_order_seq_cst) < dispatch_parts_ && !aborted() && now_ns() < deadline) {
    wait_until_ns(now_ns() + 50000, 0);
  }
}

int Session::dispatch_next(uint64_t flushed_first_id, int64_t spin_ns, int64_t wait_ns, DispatchClaim* out) {
  dispatch_inside_.fetch_add(1, std::memory_order_seq_cst);
  struct Leave {
    std::atomic<uint64_t>& inside;
    ~Leave() { inside.fetch_sub(1, std::memory_order_seq_cst); }
  } leave{dispatch_inside_};
  int status = kDispatchIdle;
  // Signal::wait may call the predicate again after it returned true (its
  // check before sleeping): a claim already made must not be replaced.
  auto ready = [&] {
    if (status != kDispatchIdle) return true;
    if (aborted()) {
      status = kDispatchOver;
      return true;
    }
    Series* s = current();
    if (s == nullptr) {
      if (!run_over_.load(std::memory_order_acquire)) return false;
      status = kDispatchOver;
      return true;
    }
    if (claim(*s, out)) {
      status = kDispatchClaimed;
      return true;
    }
    if (s->issuing_ended.load(std::memory_order_acquire) && s->first_id != flushed_first_id) {
      // Everything is published now: claim what the first look may have missed.
      if (claim(*s, out)) {
        status = kDispatchClaimed;
        return true;
      }
      out->first_id = s->first_id;
      status = kDispatchSeriesEnded;
      return true;
    }
    // After the last series' end was reported: a worker flushes even when the
    // run ended before it got to look (a loaded machine).
    if (run_over_.load(std::memory_order_acquire)) {
      status = kDispatchOver;
      return true;
    }
    return false;
  };
  const int64_t deadline = now_ns() + std::max<int64_t>(wait_ns, 0);
  if (spin_ns > 0 && !ready()) {
    // Server: the next query's time is known. Sleep (a publication wakes us
    // early) until spin_ns before it is due, then spin for it: a spinning
    // worker's delivery lag without spinning between queries.
    // A late issue thread: the worker issues the due query itself
    // (poll_issue_due; one CAS decides who issues it).
    Series* s = current();
    const uint64_t p = s != nullptr ? s->published.load(std::memory_order_acquire) : 0;
    const int64_t due = s != nullptr ? next_due_ns(*s) : -1;
    if (due >= 0) {
      const int64_t now = now_ns();
      const int64_t spin_from = std::min(deadline, due - spin_ns);
      if (spin_from > now) dispatch_signal_.wait(ready, spin_from, 0, spin_from - now);
      if (status != kDispatchIdle) return status;
      const int64_t until = std::min(deadline, std::max(due, now_ns()) + spin_ns);
      while (!ready()) {
        const int64_t t = now_ns();
        if (t >= until) break;
        if (s->poll_issue && t >= due && poll_issue_due(*s, p) != 0) continue;  // claimed by ready() next
        yield_cpu();
      }
      return status;
    }
  }
  dispatch_signal_.wait(ready, deadline, std::min(spin_ns, wait_ns), wait_ns);
  return status;
}

void Session::write_trace_series(const Series& series) {
  if (!chrome_trace_.enabled()) return;
  const bool server = effective_.scenario == Scenario::Server;
  const uint64_t spq = series.samples_per_query;
  const uint64_t issued_samples = series.issued_queries * spq;
  for (uint64_t k = 0; k < issued_samples; ++k) {
    const int64_t done = series.completed_ns[k].load(std::memory_order_acquire);
    if (done == kNotCompleted) continue;  // never completed: no end to draw
    const uint64_t q = k / spq;
    chrome_trace_.sample(series.trace.first_sample_id + k, series.trace.first_query_id + q,
                         series.trace.sample_index[k], series.start_ns + scheduled_ns(series, q),
                         series.start_ns + series.issued_ns[q], series.start_ns + done, server);
  }
}

void Session::check_perf_clocks(int64_t pc_start, int64_t sc_start, int64_t pc_stop, int64_t sc_stop) {
  // Millisecond durations and a float ratio, as the reference computes them
  // (PerfClock is our monotonic clock, system_clock the wall clock).
  const int64_t pc_duration = (pc_stop - pc_start) / 1000000;
  const int64_t sc_duration = (sc_stop - sc_start) / 1000000;
  const float ratio = static_cast<float>(pc_duration) / static_cast<float>(sc_duration);
  if (settings_.print_timestamps) {
    std::ostringstream out;  // a local stream: std::cout keeps its format flags (unlike the reference)
    out << "Loadgen :: Perf mode stop. systme_clock Timestamp = " << sc_stop / 1000000000 << "\n"
        << "Loadgen :: PerfClock Perf duration = " << pc_duration << "ms\n"
        << "Loadgen :: system_clock Perf duration = " << sc_duration << "ms\n"
        << "Loadgen :: PerfClock/system_clock ratio = " << std::fixed << std::setprecision(4) << ratio << "\n";
    std::cout << out.str() << std::flush;
  }
  std::ostringstream r;
  r << ratio;
  if (ratio > 1.01 || ratio < 0.99) {
    log("error_runtime", "PerfClock and system_clock differ by more than 1%!  pc_sc_ratio: " + r.str(), true, false);
  } else if (ratio > 1.001 || ratio < 0.999) {
    log("warning_generic_message", "PerfClock and system_clock differ by more than 0.1%!  pc_sc_ratio: " + r.str(),
        false, true);
  }
}

void Session::complete_on_issue_thread(Series& series, uint64_t q, int64_t t) {
  const uint64_t spq = series.samples_per_query;
  const uint64_t first = q * spq;
  // A large query (Offline) is completed in chunks, each stamped when it is
  // recorded, so the result measures what recording costs, not zero.
  constexpr uint64_t kStampEvery = 4096;
  for (uint64_t k = first; k < first + spq; ++k) {
    if (k != first && (k - first) % kStampEvery == 0) t = now_ns() - series.start_ns;
    series.completed_ns[k].store(t, std::memory_order_release);
    if (series.trace.accuracy_log_sampled[k]) {
      const uint64_t index = series.trace.sample_index[k];
      AccuracyRecord record;
      record.seq_id = series.trace.first_sample_id + k;
      record.qsl_idx = index;
      record.data = index_payload(index);
      // The null SUT reports no tokens: the record still has the token fields.
      record.with_token_count = static_cast<bool>(series.n_tokens);
      record.with_token_data = series.needs_first_token;
      accuracy_log_.append(std::move(record));
    }
  }
  live_.record_completion(series, q, t, spq);
  if (spq > 1) {
    series.outstanding[q].store(0, std::memory_order_relaxed);
    series.query_done_ns[q].store(t, std::memory_order_release);
  }
  series.done_queries.fetch_add(1, std::memory_order_acq_rel);
  series.completed_samples.fetch_add(spq, std::memory_order_release);
}

void Session::mark_dispatched(uint64_t q) {
  Series* s = current();
  if (!s || q >= s->published.load(std::memory_order_acquire)) return;
  s->dispatched_ns[q] = now_ns() - s->start_ns;
}

namespace {
inline bool id_to_u64(double id, uint64_t* out) {
  // Rejects NaN, fractions, negatives and values beyond 2^53 before any use.
  if (!(id >= 1.0 && id <= 9007199254740992.0) || std::floor(id) != id) return false;
  *out = static_cast<uint64_t>(id);
  return true;
}
inline bool id_to_u64(uint32_t id, uint64_t* out) {
  *out = id;
  return id != 0;
}
inline double id_as_double(double id) { return id; }
inline double id_as_double(uint32_t id) { return static_cast<double>(id); }
}  // namespace

// n_tokens as the SUT reported it: NaN counts as missing (0), fractions
// truncate, out-of-range values saturate (the validity rules apply later).
inline int64_t token_count_of(double n) {
  if (!(n == n)) return 0;
  if (n >= 9.2e18) return INT64_MAX;
  if (n <= -9.2e18) return INT64_MIN + 1;  // INT64_MIN is the "no slot" marker
  return static_cast<int64_t>(n);
}

template <typename Tokens, typename Id>
uint64_t Session::complete_ids(int64_t stamp, const Id* ids, const Tokens* n_tokens, size_t count, bool hand_over) {
  Series* s = current();
  const uint64_t published = s ? s->published.load(std::memory_order_acquire) : 0;
  if (published == 0) {
    invalid_ids_.fetch_add(count, std::memory_order_relaxed);
    return 0;
  }
  Series& series = *s;
  hand_over = hand_over && series.hand_over;
  // Before any completion is visible: the issue thread must not claim the
  // next query while this call may still hand it over.
  if (hand_over) series.handing_over.fetch_add(1, std::memory_order_seq_cst);
  const int64_t t = stamp - series.start_ns;
  const uint64_t spq = series.samples_per_query;
  const uint64_t issued_samples = published * spq;
  uint64_t newly_completed = 0;
  bool any_query_done = false;
  for (size_t i = 0; i < count; ++i) {
    uint64_t id;
    if (!id_to_u64(ids[i], &id) || id < series.first_id || id - series.first_id >= series.sample_count) {
      double expected = 0;
      first_invalid_id_.compare_exchange_strong(expected, id_as_double(ids[i]));
      invalid_ids_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    const uint64_t k = id - series.first_id;
    if (k >= issued_samples) {
      unissued_ids_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    int64_t not_completed = kNotCompleted;
    if (!series.completed_ns[k].compare_exchange_strong(not_completed, t, std::memory_order_acq_rel)) {
      double expected = 0;
      first_duplicate_id_.compare_exchange_strong(expected, id_as_double(ids[i]));
      duplicate_ids_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    if constexpr (!std::is_void_v<Tokens>) {
      // Only the winner of the CAS writes, before the query counts as done.
      if (series.n_tokens) series.n_tokens[k].store(token_count_of(n_tokens[i]), std::memory_order_relaxed);
    }
    ++newly_completed;
    live_.record_completion(series, k / spq, t);
    if (spq == 1) {
      series.done_queries.fetch_add(1, std::memory_order_acq_rel);
      any_query_done = true;
    } else if (series.outstanding[k / spq].fetch_sub(1, std::memory_order_acq_rel) == 1) {
      series.query_done_ns[k / spq].store(t, std::memory_order_release);
      series.done_queries.fetch_add(1, std::memory_order_acq_rel);
      any_query_done = true;
    }
  }
  if (newly_completed != 0) series.completed_samples.fetch_add(newly_completed, std::memory_order_acq_rel);
  const uint64_t handed = hand_over && any_query_done ? hand_over_next(series) : 0;
  if (hand_over) series.handing_over.fetch_sub(1, std::memory_order_seq_cst);
  // A hand-over needs no wake of the issue thread (it learns of the last
  // query of the series from hand_over_next's own notify).
  if (any_query_done && handed == 0) signal_.notify();
  return handed;
}

bool Session::sequence_ends(const Series& series, uint64_t issued, int64_t elapsed) {
  if (issued >= series.trace.query_count()) return true;  // ran out (or the last query)
  if (series.kind == SeriesKind::Accuracy) return false;  // no stop checks
  if (issued >= series.stop_min_queries && elapsed >= series.stop_target_ns) return true;
  if (series.stop_max_queries != 0 && issued >= series.stop_max_queries) return true;
  return series.stop_max_ns != 0 && elapsed > series.stop_max_ns;
}

uint64_t Session::hand_over_next(Series& series) {
  // The claimant of query n-1 set issue_ended before publishing it, and this
  // call saw that publication (it completed a sample of n-1).
  if (series.issue_ended.load(std::memory_order_acquire) || aborted()) return 0;
  uint64_t n = series.next_issue.load(std::memory_order_acquire);
  if (n == 0 || n >= series.trace.query_count() || !series.query_done(n - 1)) return 0;
  if (!series.next_issue.compare_exchange_strong(n, n + 1, std::memory_order_acq_rel)) return 0;
  const int64_t elapsed = now_ns() - series.start_ns;  // scheduled = issued = now (spec/30 §2)
  series.issued_ns[n] = elapsed;
  const bool ends = sequence_ends(series, n + 1, elapsed);
  if (ends) series.issue_ended.store(true, std::memory_order_release);
  series.published.store(n + 1, std::memory_order_release);
  if (ends) signal_.notify();  // the issue thread logs the stop and ends the loop
  return n + 1;
}

// One clock reading for the whole batch, taken before anything else.
uint64_t Session::complete(const double* ids, size_t count, bool hand_over) {
  return complete_ids<void>(now_ns(), ids, nullptr, count, hand_over);
}
uint64_t Session::complete(const uint32_t* ids, size_t count, bool hand_over) {
  return complete_ids<void>(now_ns(), ids, nullptr, count, hand_over);
}

int64_t Session::clamp_stamp(int64_t stamp_ns) const {
  const int64_t now = now_ns();
  const Series* s = current();
  if (s == nullptr || stamp_ns < s->start_ns || stamp_ns > now) stamp_ns = now;
  return stamp_ns;
}

uint64_t Session::complete_at(int64_t stamp_ns, const double* ids, size_t count, bool hand_over) {
  return complete_ids<void>(clamp_stamp(stamp_ns), ids, nullptr, count, hand_over);
}

uint64_t Session::complete_with_tokens(int64_t stamp_ns, const double* ids, const double* n_tokens, size_t count,
                                       bool hand_over) {
  return complete_ids<double>(stamp_ns == 0 ? now_ns() : clamp_stamp(stamp_ns), ids, n_tokens, count, hand_over);
}

uint64_t Session::complete_with_tokens(int64_t stamp_ns, const uint32_t* ids, const double* n_tokens, size_t count,
                                       bool hand_over) {
  return complete_ids<double>(stamp_ns == 0 ? now_ns() : clamp_stamp(stamp_ns), ids, n_tokens, count, hand_over);
}

void Session::first_token(double id_value, int64_t stamp_ns, const uint8_t* data, size_t size) {
  stamp_ns = stamp_ns == 0 ? now_ns() : clamp_stamp(stamp_ns);
  Series* s = current();
  const uint64_t published = s ? s->published.load(std::memory_order_acquire) : 0;
  if (s != nullptr && !s->first_token_ns) return;  // token latencies off
  uint64_t id;
  if (published == 0 || !id_to_u64(id_value, &id) || id < s->first_id || id - s->first_id >= s->sample_count) {
    double expected = 0;
    first_invalid_id_.compare_exchange_strong(expected, id_value);
    invalid_ids_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Series& series = *s;
  const uint64_t k = id - series.first_id;
  if (k >= published * series.samples_per_query) {
    unissued_ids_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (series.completed_ns[k].load(std::memory_order_acquire) != kNotCompleted) {
    first_token_after_completion_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  int64_t not_recorded = kNotCompleted;
  if (!series.first_token_ns[k].compare_exchange_strong(not_recorded, stamp_ns - series.start_ns,
                                                        std::memory_order_acq_rel)) {
    duplicate_first_tokens_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // Offline records never carry token_data, so nothing is cached there.
  if (series.trace.accuracy_log_sampled[k] && series.needs_first_token) {
    std::vector<uint8_t> bytes(data, data + size);
    std::lock_guard<std::mutex> lock(series.token_data_mutex);
    series.token_data[k] = std::move(bytes);
  }
}

bool Session::log_response(double id_value, const uint8_t* data, size_t size) {
  Series* s = current();
  uint64_t id;
  if (!s || !id_to_u64(id_value, &id) || id < s->first_id || id - s->first_id >= s->sample_count) return false;
  const uint64_t k = id - s->first_id;
  if (k >= s->published.load(std::memory_order_acquire) * s->samples_per_query) return false;
  if (!s->trace.accuracy_log_sampled[k]) return false;
  AccuracyRecord record;
  record.seq_id = s->trace.first_sample_id + k;
  record.qsl_idx = s->trace.sample_index[k];
  if (size != 0) record.data.assign(data, data + size);
  if (s->n_tokens) {
    // The completion (stamped before this call) already stored n_tokens.
    record.with_token_count = true;
    record.token_count = s->n_tokens[k].load(std::memory_order_relaxed);
    if (s->needs_first_token) {
      record.with_token_data = true;
      std::lock_guard<std::mutex> lock(s->token_data_mutex);
      const auto it = s->token_data.find(k);
      if (it != s->token_data.end()) record.token_data = it->second;
    }
  }
  accuracy_log_.append(std::move(record));
  return true;
}

PerformanceSummary Session::summarize_series(Series& series) {
  const uint64_t issued = series.issued_queries;
  const uint64_t spq = series.samples_per_query;

  SeriesResult raw;
  raw.queries_issued = issued;
  const uint64_t issued_samples = issued * spq;
  raw.sample_latencies_ns.reserve(issued_samples);
  int64_t max_latency = 0;
  int64_t last_completion = 0;
  for (uint64_t k = 0; k < issued_samples; ++k) {
    const int64_t done = series.completed_ns[k].load(std::memory_order_acquire);
    if (done == kNotCompleted) continue;  // counted as incomplete; INVALID
    const int64_t latency = done - scheduled_ns(series, k / spq);
    raw.sample_latencies_ns.push_back(latency);
    max_latency = std::max(max_latency, latency);
    last_completion = std::max(last_completion, done);
  }
  if (effective_.scenario == Scenario::MultiStream) {
    raw.query_latencies_ns.reserve(issued);
    for (uint64_t q = 0; q < issued; ++q) {
      const int64_t done = series.query_done_time(q);
      if (done != kNotCompleted) raw.query_latencies_ns.push_back(done - scheduled_ns(series, q));
    }
  }
  const uint64_t last = issued - 1;
  raw.max_latency_s = static_cast<double>(max_latency) / 1e9;
  raw.final_query_scheduled_time_s = static_cast<double>(series.trace.scheduled_delta_ns[last]) / 1e9;
  raw.final_query_issued_time_s = static_cast<double>(series.issued_ns[last]) / 1e9;
  const int64_t last_done = series.query_done_time(last);
  raw.final_query_all_samples_done_time_s =
      static_cast<double>(last_done == kNotCompleted ? last_completion : last_done) / 1e9;
  outcome_.issue_duration_ns = last_completion;
  if (series.n_tokens) fill_token_results(series, &raw);
  PerformanceSummary summary = summarize(effective_, config_.sut_name, std::move(raw));
  // Everything reported is computed; the sorted copies (8 bytes a sample
  // each) would otherwise live as long as the outcome.
  std::vector<int64_t>().swap(summary.raw.sample_latencies_ns);
  std::vector<int64_t>().swap(summary.raw.query_latencies_ns);
  std::vector<int64_t>().swap(summary.raw.first_token_latencies_ns);
  std::vector<int64_t>().swap(summary.raw.time_per_output_token_ns);
  std::vector<int64_t>().swap(summary.raw.tokens_per_sample);
  return summary;
}

void Session::check_tokens(const Series& series) {
  const bool needs_first_token = series.needs_first_token;
  const uint64_t issued_samples = series.issued_queries * series.samples_per_query;
  CompletionErrorCounts& e = outcome_.completion_errors;
  for (uint64_t k = 0; k < issued_samples; ++k) {
    if (series.completed_ns[k].load(std::memory_order_acquire) == kNotCompleted) continue;
    if (needs_first_token && series.first_token_ns[k].load(std::memory_order_acquire) == kNotCompleted) {
      ++e.missing_first_tokens;
    }
    const int64_t n = series.n_tokens[k].load(std::memory_order_relaxed);
    if (n == 0) {
      ++e.zero_tokens;
    } else if (n < 0) {
      ++e.negative_tokens;
    } else if (n == 1) {
      ++e.one_token;
    }
  }
}

void Session::fill_token_results(const Series& series, SeriesResult* raw) const {
  // spec/30 §9, in sample-id order over the completed samples (the ones in
  // sample_latencies_ns). Offline reports only the token count.
  const bool needs_first_token = series.needs_first_token;
  const uint64_t spq = series.samples_per_query;
  const uint64_t issued_samples = series.issued_queries * spq;
  raw->tokens_per_sample.reserve(issued_samples);
  if (needs_first_token) {
    raw->first_token_latencies_ns.reserve(issued_samples);
    raw->time_per_output_token_ns.reserve(issued_samples);
  }
  for (uint64_t k = 0; k < issued_samples; ++k) {
    const int64_t done = series.completed_ns[k].load(std::memory_order_acquire);
    if (done == kNotCompleted) continue;
    int64_t n = series.n_tokens[k].load(std::memory_order_relaxed);
    if (n < 0 || n == 1) n = 0;  // the reference's coercions; 0 stays 0
    raw->tokens_per_sample.push_back(n);
    if (!needs_first_token) continue;
    const int64_t first = series.first_token_ns[k].load(std::memory_order_acquire);
    const int64_t scheduled = scheduled_ns(series, k / spq);
    // A missing first token keeps the INT64_MIN marker, as in the reference.
    const int64_t ttft = first == kNotCompleted ? kMissingLatency : first - scheduled;
    const int64_t latency = done - scheduled;
    // (latency - ttft) / (n - 1) with int64 wrap-around instead of UB for the
    // marker; with n forced to 0 the divisor is -1 (a negative TPOT).
    const int64_t span =
        static_cast<int64_t>(static_cast<uint64_t>(latency) - static_cast<uint64_t>(ttft));
    const int64_t divisor = n - 1;
    const int64_t tpot = (span == INT64_MIN && divisor == -1) ? INT64_MIN : span / divisor;
    raw->first_token_latencies_ns.push_back(ttft);
    raw->time_per_output_token_ns.push_back(tpot);
  }
}

void Session::write_summary() {
  std::string text;
  if (outcome_.has_summary) {
    text = format_summary_results(outcome_.summary, settings_.mode);
    if (!outcome_.extra_invalid_reasons.empty()) {
      // Our reasons go under the reference's "Recommendations:" heading.
      std::string lines;
      for (const auto& reason : outcome_.extra_invalid_reasons) lines += " * " + reason + "\n";
      const std::string heading = "Recommendations:\n";
      const size_t at = text.find(heading);
      if (at != std::string::npos) text.insert(at + heading.size(), lines);
    }
  }
  text += format_summary_footer(outcome_.warning_count, outcome_.error_count);
  if (outcome_.has_summary && outcome_.overhead.present) text += format_overhead_block(outcome_.overhead);
  outcome_.summary_text = text;

  std::string base = config_.log.outdir + "/" + config_.log.prefix;
  if (config_.log.prefix_with_datetime) base += outcome_.test_datetime + "_";
  outcome_.summary_path = base + "summary" + config_.log.suffix + ".txt";
  std::ofstream out(outcome_.summary_path, std::ios::binary | std::ios::trunc);
  if (!out) {
    std::lock_guard<std::mutex> lock(messages_mutex_);
    outcome_.messages.push_back(
        LogMessage{"error_runtime", "Failed to open summary file " + outcome_.summary_path, true, false});
    outcome_.summary_path.clear();
  } else {
    out << text;
  }
  if (config_.log.copy_summary_to_stdout) std::cout << text << std::flush;
}

}  // namespace loadgen

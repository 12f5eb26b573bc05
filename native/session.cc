#include "session.h"

#include <functional>
#include <iostream>
#include <stdexcept>

#include "clock.h"
#include "core_threads.h"
#include "find_peak.h"
#include "issue_loop.h"
#include "report_data.h"
#include "series_results.h"
#include "test_plan.h"

namespace loadgen {

Session::Session(SessionConfig config, SessionHost* host) : config_(std::move(config)), host_(host) {}

Session::~Session() {
  abort("session destroyed");
  join();
}

void Session::start() {
  // Settings whose run could not end are refused before the thread starts.
  const SettingsProblem problem =
      check_run_bounds(config_.settings, config_.qsl_total_count, config_.qsl_performance_count);
  if (problem.field != nullptr) throw std::invalid_argument(problem.message);
  // From the thread that kept the process's priority, when the host lowered its own (core_threads.h).
  // Named for the issuing it does (Server, SingleStream...), though it also computes the results.
  thread_ = start_core_thread("loadgen-issue", [this] { run(); });
}

void Session::join() {
  if (thread_.joinable()) thread_.join();
}

void Session::abort(const std::string& reason) {
  bool expected = false;
  if (aborted_.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
    std::lock_guard<std::mutex> lock(abort_mutex_);
    outcome_.abort_reason = reason;
  }
  issuing_stopped_.store(true, std::memory_order_release);
  completions_.notify();
  dispatch_.notify_workers();
}

void Session::interrupt(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(interrupt_mutex_);
    if (interrupted_.load(std::memory_order_relaxed)) return;
    interrupt_reason_ = reason;  // never written again: readers need no lock once they see the flag
    interrupted_.store(true, std::memory_order_release);
  }
  issuing_stopped_.store(true, std::memory_order_release);
  // The issue thread may be waiting for a completion (SingleStream/MultiStream).
  completions_.notify();
}

// One clock reading for the whole batch, taken before anything else. A
// caller's stamp (complete_at, a nonzero stamp_ns) is checked per sample
// against the sample's issue time (Recorder::complete); our own reading
// needs no check.
uint64_t Session::complete(const double* ids, size_t count, bool hand_over, const ResponseBytes* responses) {
  return recorder_.complete<void>(now_ns(), false, ids, nullptr, count, hand_over, nullptr, responses);
}
uint64_t Session::complete(const uint32_t* ids, size_t count, bool hand_over, const ResponseBytes* responses) {
  return recorder_.complete<void>(now_ns(), false, ids, nullptr, count, hand_over, nullptr, responses);
}
uint64_t Session::complete_at(int64_t stamp_ns, const double* ids, size_t count, bool hand_over,
                              const ResponseBytes* responses) {
  return recorder_.complete<void>(recorder_.clamp_stamp(stamp_ns), true, ids, nullptr, count, hand_over, nullptr,
                                  responses);
}
uint64_t Session::complete_with_tokens(int64_t stamp_ns, const double* ids, const double* n_tokens, size_t count,
                                       bool hand_over, const ResponseBytes* responses) {
  const int64_t stamp = stamp_ns == 0 ? now_ns() : recorder_.clamp_stamp(stamp_ns);
  return recorder_.complete<double>(stamp, stamp_ns != 0, ids, n_tokens, count, hand_over, nullptr, responses);
}
uint64_t Session::complete_with_tokens(int64_t stamp_ns, const uint32_t* ids, const double* n_tokens, size_t count,
                                       bool hand_over, const ResponseBytes* responses) {
  const int64_t stamp = stamp_ns == 0 ? now_ns() : recorder_.clamp_stamp(stamp_ns);
  return recorder_.complete<double>(stamp, stamp_ns != 0, ids, n_tokens, count, hand_over, nullptr, responses);
}

uint64_t Session::fail(int64_t stamp_ns, double id, FailureKind kind, const std::string& message, bool hand_over) {
  const int64_t stamp = stamp_ns == 0 ? now_ns() : recorder_.clamp_stamp(stamp_ns);
  const Recorder::Failure failure{kind, &message};
  return recorder_.complete<void>(stamp, stamp_ns != 0, &id, nullptr, 1, hand_over, &failure);
}

void Session::run() {
  dispatch_.begin_run(config_.settings.server_num_issue_query_threads);
  log_.open(config_, accuracy_log_);
  for (const auto& m : config_.pre_run_messages) log_.log(m.key, m.text, m.is_error, m.is_warning);
  std::vector<LogMessage> settings_messages;
  settings_ = apply_test05(config_.settings, &settings_messages);
  effective_ = derive_effective(settings_, config_.qsl_total_count, config_.qsl_performance_count,
                                &settings_messages);
  for (const auto& m : settings_messages) log_.log(m.key, m.text, m.is_error, m.is_warning);
  log_.write_settings(settings_, effective_);
  outcome_.effective = effective_;
  outcome_.mode = settings_.mode;

  try {
    if (settings_.mode == Mode::FindPeakPerformance) {
      PeakTrials trials;
      trials.run = [this](double qps, bool load, bool unload, PeakTrialResult* result) {
        return run_peak_trial(qps, load, unload, result);
      };
      trials.unload_kept = [this] {
        std::string error;
        if (config_.host_loads_samples && !host_->unload_samples(series_.back()->loaded_set, &error) &&
            !error.empty()) {
          log_.log("error_runtime", "unloadSamplesFromRam failed: " + error, true, false);
        }
      };
      if (config_.completion_timeout_ms == 0 && settings_.max_duration_ms == 0) {
        log_.log("generic_message",
                 "FindPeakPerformance: completion_timeout_ms is 0; each trial waits at most " +
                     std::to_string(kPeakTrialStallLimitMs) + " ms without a completion for its last samples",
                 false, false);
      }
      find_peak_performance(settings_, effective_.scenario, trials, issuing_stopped_, log_, outcome_);
    } else {
      // The phases in test_plan's order (SubmissionRun: accuracy, then
      // performance unless aborted or interrupted).
      const std::vector<SeriesKind> phases = phase_kinds(settings_.mode);
      for (size_t i = 0; i < phases.size() && (i == 0 || !issuing_stopped()); ++i) run_phase(phases[i]);
    }
  } catch (const GenerationStopped&) {
    // Interrupted or aborted while a set was built: finish_run says why.
  } catch (const std::exception& e) {
    log_.log("error_runtime", std::string("loadgen internal error: ") + e.what(), true, false);
    abort(e.what());
  }
  finish_run();
}

void Session::finish_run() {
  // Workers waiting in dispatch_next() return now instead of at their timeout.
  dispatch_.end_run();
  accuracy_log_.close();
  log_.close_trace();
  outcome_.accuracy_log_records = accuracy_log_.records_written();
  outcome_.aborted = aborted();
  recorder_.copy_error_counts(&outcome_.completion_errors);
  log_.write_completion_errors();
  std::vector<FailureMessage> failure_messages;
  recorder_.take_failures(&outcome_.failed_samples, &failure_messages);
  if (!peak_failure_messages_.empty()) {
    failure_messages.insert(failure_messages.begin(), std::make_move_iterator(peak_failure_messages_.begin()),
                            std::make_move_iterator(peak_failure_messages_.end()));
    peak_failure_messages_.clear();
  }
  log_.write_failures(failure_messages);
  std::string abort_reason;
  {
    std::lock_guard<std::mutex> lock(abort_mutex_);
    abort_reason = outcome_.abort_reason;
  }
  if (outcome_.aborted && !abort_reason.empty()) {
    log_.log("error_runtime", "Run aborted: " + abort_reason, true, false);
    outcome_.extra_invalid_reasons.push_back("The run was aborted: " + abort_reason);
  }
  // FindPeak reports one trial: failures in the others made them fail and
  // bounded the search (counted, logged); find_peak adds the reported
  // trial's own, if any, to the reasons.
  if (outcome_.failed_samples.total != 0 && settings_.mode != Mode::FindPeakPerformance) {
    outcome_.extra_invalid_reasons.push_back(failed_samples_reason(outcome_.failed_samples));
  }
  if (interrupted()) {
    outcome_.interrupted = true;
    outcome_.interrupt_reason = interrupt_reason_;
    // Not logged by an issue loop: it came while loading or waiting for completions.
    if (!interrupt_logged_) log_.log("error_runtime", "Ending early: " + interrupt_reason_, true, false);
    // The caller's reason, exactly, first: it is why the run is INVALID.
    outcome_.extra_invalid_reasons.insert(outcome_.extra_invalid_reasons.begin(), interrupt_reason_);
  }
  if (outcome_.has_summary && !outcome_.extra_invalid_reasons.empty()) outcome_.summary.result_valid = false;
  if (outcome_.has_summary) log_.write_detail_results();
  log_.count_messages();
  log_.write_summary(settings_.mode, config_.log);
  // For `loadgen report`: computed from the records now that the run is over.
  if (config_.log.report_data) write_report_data(series_, effective_, outcome_, config_.log);
  log_.close();
  host_->finished();
}

void Session::run_phase(SeriesKind kind) {
  log_.log("generic_message", kind == SeriesKind::Accuracy ? "Starting accuracy mode" : "Starting performance mode",
           false, false);
  log_.flush();  // building a large set takes seconds: the log shows that it began
  const auto sets = generate_loadable_sets(effective_, phase_sample_count(effective_, kind), config_.qsl_total_count,
                                           &issuing_stopped_);
  if (kind == SeriesKind::Accuracy) {
    for (const auto& set : sets) {
      if (issuing_stopped()) return;
      run_series(set, SeriesKind::Accuracy);
    }
    return;
  }
  // A performance run loads only the first set.
  if (sets.empty()) throw std::invalid_argument("the QSL reported no samples to load");
  clock_check_ = true;  // RunPerformanceMode only, not FindPeak trials
  Series* series = run_series(sets.front(), SeriesKind::Performance);
  clock_check_ = false;
  if (series != nullptr && series->issued_queries != 0) {
    outcome_.summary = summarize_series(*series, effective_, config_.sut_name, &outcome_.issue_duration_ns);
    outcome_.overhead = measure_overhead(*series);
    outcome_.has_summary = true;
  }
}

bool Session::run_peak_trial(double qps, bool load, bool unload, PeakTrialResult* result) {
  TestSettings trial = settings_;
  trial.server_target_qps = qps;
  effective_ = derive_effective(trial, config_.qsl_total_count, config_.qsl_performance_count, nullptr);
  const auto sets = generate_loadable_sets(effective_, effective_.performance_sample_count, config_.qsl_total_count,
                                           &issuing_stopped_);
  if (sets.empty()) throw std::invalid_argument("the QSL reported no samples to load");
  const uint64_t incomplete_before = outcome_.incomplete_sample_count;
  Series* series = run_series(sets.front(), SeriesKind::Performance, load, unload);
  if (series == nullptr || series->issued_queries == 0 || aborted()) return false;
  result->summary = summarize_series(*series, effective_, config_.sut_name, &outcome_.issue_duration_ns);
  result->issued_samples = series->issued_queries * series->samples_per_query;
  result->incomplete = outcome_.incomplete_sample_count - incomplete_before;
  const FailedSampleCounts by_kind = failures_since_last_trial();
  uint64_t failed = 0;
  {
    std::lock_guard<std::mutex> lock(series->failed_mutex);
    failed = series->failed_samples.size();
  }
  // The series' own list decides (a late failure of an earlier trial's
  // sample is not this one's); the kinds are the run's since the last trial.
  result->failed = failed == 0 ? FailedSampleCounts{} : by_kind;
  result->failed.total = failed;
  outcome_.peak_trials.push_back(PeakTrial{qps, result->summary.perf_constraints_met,
                                           result->summary.target_latency_percentile.sample_latency,
                                           series->issued_queries, result->failed.total, result->incomplete,
                                           result->passed(), measure_overhead(*series)});
  if (interrupted()) {
    // The search stops here; the summary reports the trial it cut short (INVALID).
    outcome_.summary = result->summary;
    outcome_.has_summary = true;
    outcome_.overhead = outcome_.peak_trials.back().overhead;
    if (result->failed.total != 0) outcome_.extra_invalid_reasons.push_back(peak_trial_failed_samples_text(*result));
    return false;
  }
  return true;
}

FailedSampleCounts Session::failures_since_last_trial() {
  // The recorder counts a run's failures; taking its messages (to give them
  // back in finish_run) is the one way to read the counts mid-run.
  FailedSampleCounts so_far;
  std::vector<FailureMessage> messages;
  recorder_.take_failures(&so_far, &messages);
  peak_failure_messages_.insert(peak_failure_messages_.end(), std::make_move_iterator(messages.begin()),
                                std::make_move_iterator(messages.end()));
  FailedSampleCounts trial;
  for (size_t i = 0; i < kFailureKindCount; ++i) {
    trial.by_kind[i] = so_far.by_kind[i] - peak_failures_seen_.by_kind[i];
    trial.total += trial.by_kind[i];
  }
  peak_failures_seen_ = so_far;
  return trial;
}

Series* Session::run_series(const LoadableSet& set, SeriesKind kind, bool load, bool unload) {
  // Stopped before the set was loaded (or while it was logged): nothing is
  // loaded, issued or unloaded.
  if (load && (issuing_stopped() || !log_.write_loaded_set(set.indices, &issuing_stopped_))) return nullptr;
  // The reference's tid is a thread-id hash; 32 bits keep it exact as a JS number.
  const uint64_t session_tid = std::hash<std::thread::id>{}(std::this_thread::get_id()) & 0xffffffffu;
  if (config_.host_loads_samples && load) {
    std::string error;
    const int64_t load_start = now_ns();
    const bool loaded = host_->load_samples(set.indices, &error);
    log_.trace_span("LoadSamples", session_tid, load_start, now_ns());
    if (!loaded) {
      abort(error.empty() ? "loadSamplesToRam failed" : error);
      return nullptr;
    }
  }
  Series* series = nullptr;
  if (!issuing_stopped()) {
    // The reference reads both clocks after loading, before generating (spec/00 §6.1 step 3).
    const ClockPair clocks_at_start = read_clock_pair();
    if (clock_check_ && settings_.print_timestamps) {
      std::cout << "Loadgen :: Perf mode start. system_clock Timestamp = " << clocks_at_start.wall_ns / 1000000000 << "\n"
                << std::flush;
    }
    const int64_t generate_start = now_ns();
    try {
      series = prepare_series(set, kind);
    } catch (const GenerationStopped&) {
      series = nullptr;  // stopped while generating: what was loaded is still unloaded below
    }
    log_.trace_span("GenerateQueries", session_tid, generate_start, now_ns());
    if (series != nullptr) {
      const IssueThreadEnv env{config_,
                               host_,
                               dispatch_,
                               log_,
                               live_,
                               completions_,
                               aborted_,
                               issuing_stopped_,
                               interrupted_,
                               interrupt_reason_,
                               interrupt_logged_,
                               settings_.server_num_issue_query_threads,
                               stall_limit_ns_};
      std::string abort_reason;
      if (!issue_series(*series, env, outcome_, &abort_reason)) abort(abort_reason);
      if (clock_check_) log_.check_perf_clocks(settings_.print_timestamps, clocks_at_start, read_clock_pair());
      log_.write_series(*series);
      if (series->n_tokens) check_tokens(*series, &outcome_.completion_errors);
    }
  }
  // Kept only for a set that stays loaded (FindPeak's binary search unloads it at the end).
  if (series != nullptr && !unload) series->loaded_set = set.indices;
  // A set loaded for a series that never ran is unloaded whatever the caller
  // planned: no later series will use it.
  if (config_.host_loads_samples && (unload || (load && series == nullptr))) {
    std::string error;
    const int64_t unload_start = now_ns();
    const bool unloaded = host_->unload_samples(set.indices, &error);
    log_.trace_span("UnloadSampes", session_tid, unload_start, now_ns());  // sic, as the reference
    if (!unloaded && !error.empty()) log_.log("error_runtime", "unloadSamplesFromRam failed: " + error, true, false);
  }
  return series;
}

Series* Session::prepare_series(const LoadableSet& set, SeriesKind kind) {
  GenerateOptions options;
  options.stop = &issuing_stopped_;
  QueryTrace trace = generate_queries(effective_, kind, set, sequence_, options);
  log_.write_generated(trace);
  const uint64_t queries = trace.query_count();
  outcome_.series_count += 1;
  outcome_.generated_query_count += queries;
  outcome_.generated_sample_count += trace.sample_count();
  if (queries == 0) {
    log_.log("error_runtime", "No queries were generated; check min_query_count and min_duration_ms.", true, false);
    return nullptr;
  }
  std::unique_ptr<Series> owned = make_series(effective_, settings_, kind, std::move(trace));
  Series& s = *owned;
  // Accuracy series ignore max_duration (they issue everything), so only the
  // completion timeout bounds their waits.
  stall_limit_ns_ = static_cast<int64_t>(config_.completion_timeout_ms) * 1000000;
  if (kind == SeriesKind::Performance && s.limits.max_ns != 0 &&
      (stall_limit_ns_ == 0 || s.limits.max_ns < stall_limit_ns_)) {
    stall_limit_ns_ = s.limits.max_ns;
  }
  // The FindPeak search must end by itself, also when the SUT stops answering.
  if (settings_.mode == Mode::FindPeakPerformance && stall_limit_ns_ == 0) {
    stall_limit_ns_ = static_cast<int64_t>(kPeakTrialStallLimitMs) * 1000000;
  }
  const int64_t live_target_ns = kind == SeriesKind::Accuracy               ? 0
                                 : effective_.scenario == Scenario::Server ? s.trace.scheduled_delta_ns.back()
                                                                           : s.limits.target_ns;
  live_.begin_series(kind, effective_.scenario, live_target_ns, queries, s.samples_per_query);
  series_.push_back(std::move(owned));
  current_.store(&s, std::memory_order_release);
  // A SUT inside the core still has a host: its JS side reads the responses
  // whose bodies are logged, and completes them through the active series,
  // which it must know before the first response can reach it.
  if (config_.native_sut) {
    config_.native_sut->series_started(s);
    std::string error;
    if (!host_->await_series_started(&error)) abort(error.empty() ? "the host did not take the series" : error);
  } else if (!config_.complete_on_issue_thread) {
    host_->series_started();
  }
  return &s;
}

}  // namespace loadgen

#include "issue_loop.h"

#include <algorithm>

#include "clock.h"
#include "issuer.h"
#include "scheduler.h"

namespace loadgen {

namespace {

struct LoopResult {
  uint64_t issued = 0;
  bool ran_out = false;  // every generated query issued before a natural end (non-Server performance)
  bool stalled = false;  // no completion arrived within the stall limit
  bool stopped = false;  // issuing stopped: the run was aborted or interrupted
};

// The issue loop over one scheduler (a template: no virtual call per query).
template <typename Scheduler>
LoopResult issue_loop(Series& series, const Scheduler& scheduler, const IssueThreadEnv& env) {
  LoopResult r;
  const uint64_t queries = series.trace.query_count();
  const bool accuracy = series.kind == SeriesKind::Accuracy;
  r.ran_out = series.scenario != Scenario::Server && !accuracy;
  const uint64_t stride = series.issue_stride;
  auto at_lead = [&] { env.dispatch.wake_ahead(); };
  for (uint64_t q = 0; q < queries; ++q) {
    if (env.issuing_stopped.load(std::memory_order_acquire)) {
      r.ran_out = false;
      r.stopped = true;
      break;
    }
    int64_t now = 0;
    // Looked at again after the wait: a stop that came during it issues nothing.
    if (!scheduler.wait_due(q, &now, at_lead) || env.issuing_stopped.load(std::memory_order_acquire)) {
      r.stopped = env.issuing_stopped.load(std::memory_order_acquire);
      r.stalled = !r.stopped;
      r.ran_out = false;
      break;
    }
    // A Server wait that returned before q was due was ended by max_duration
    // (server_wait_until_ns): issuing ends before q, unless another thread
    // claimed q meanwhile (then it is caught up with below).
    if (series.scenario == Scenario::Server && now - series.start_ns < series.trace.scheduled_delta_ns[q] &&
        (!series.others_issue() || close_before(series, q))) {
      const StopDecision ended = decide_and_record(series, q, now - series.start_ns);  // MaxDuration
      const std::string text = stop_message(ended, stride == 0 || q == 0 ? 0 : (q - 1) % stride);
      env.log.log(stop_is_error(ended.reason) ? "error_runtime" : "generic_message", text, stop_is_error(ended.reason),
                  false);
      break;
    }
    const uint64_t first = q;
    StopDecision decision;
    // Where others may issue, queries first..q may have been issued by them
    // (a completing call or the poller): only their end decision is left.
    uint64_t claimed = q;
    if (series.others_issue()) claimed = claim_or_catch_up(series, q);
    if (claimed > q) {
      q = claimed - 1;
      // An end decided for a later query (claimed after this look) is
      // reported when the loop reaches it.
      if (series.issue_ended.load(std::memory_order_acquire) && series.end.issued == q + 1) decision = series.end;
    } else {
      // Coalescing (spec/30 §7): every following query already due is issued
      // with this one (same issue time, its own scheduled time) and published
      // at once; the host's drain merges them into one IssueQuery call.
      if (series.coalesce) {
        while (q + 1 < queries && now - series.start_ns >= series.trace.scheduled_delta_ns[q + 1]) ++q;
      }
      if (series.others_issue()) {
        decision = issue_claimed(series, first, q, now - series.start_ns);
        env.dispatch.hand_to_sut(series, first, q);
      } else {
        stamp_and_publish(series, first, q, now - series.start_ns);
        env.dispatch.hand_to_sut(series, first, q);
        decision = decide_and_record(series, q + 1, now - series.start_ns);
      }
    }
    r.issued += q - first + 1;
    if (decision.reason == StopReason::None || decision.reason == StopReason::LastQuery) continue;
    // The issue thread named is the one that got the last query.
    const std::string text = stop_message(decision, stride == 0 ? 0 : q % stride);
    env.log.log(stop_is_error(decision.reason) ? "error_runtime" : "generic_message", text,
                stop_is_error(decision.reason), false);
    r.ran_out = false;
    break;
  }
  return r;
}

}  // namespace

bool issue_series(Series& series, const IssueThreadEnv& env, RunOutcome& outcome, std::string* abort_reason) {
  const SessionConfig& config = env.config;
  const std::string pin_warning = prepare_issue_thread(config.issue_thread_cpu);
  if (!pin_warning.empty() && outcome.series_count == 1) env.log.log("warning_generic_message", pin_warning, false, true);
  const bool pinned = config.issue_thread_cpu >= 0 && pin_warning.empty();
  const bool server = series.scenario == Scenario::Server;
  const bool accuracy = series.kind == SeriesKind::Accuracy;
  // The null-native SUT or a SUT inside the core: no host wakes, hand-over, poller or workers.
  const bool native_sut = config.complete_on_issue_thread || config.native_sut != nullptr;
  const DispatchMode dispatch = config.dispatch;
  // Registered issue threads (before the clock starts: the wait is not part of the series).
  const uint64_t stride = env.dispatch.attach_issue_threads(env.issue_threads, server && !native_sut, env.log);
  series.issue_stride = stride;
  if (dispatch == DispatchMode::Worker && !native_sut && !env.dispatch.attach_workers(env.log, abort_reason)) {
    return false;
  }
  // Who else may issue (set before the first publication, like the limits):
  // SingleStream/MultiStream, the host's completing calls (hand-over);
  // Server, the poller or a spinning worker (dispatchSpinUs), at due times.
  series.hand_over = (series.scenario == Scenario::SingleStream || series.scenario == Scenario::MultiStream) &&
                     !native_sut && stride == 0 && dispatch != DispatchMode::Worker;
  series.poll_issue = server && stride == 0 && !series.coalesce && !native_sut &&
                      (dispatch == DispatchMode::Poll || (dispatch == DispatchMode::Worker && config.dispatch_spin_ns > 0));
  const bool wake_ahead = config.wake_lead_ns > 0 && server && dispatch == DispatchMode::Wake && stride == 0 &&
                          !native_sut && !accuracy;

  series.wall_start_ns = wall_now_ns();
  series.start_ns = now_ns();
  env.live.issuing_started(series.start_ns);
  LoopResult r;
  switch (series.scenario) {
    case Scenario::Server: {
      ServerScheduler scheduler{series, env.issuing_stopped, pinned, wake_ahead ? config.wake_lead_ns : 0};
      AdaptiveSpinWindow adaptive(series, native_sut_spin_window_ns(series));
      if (config.native_sut) {
        scheduler.unpinned_window_ns = native_sut_spin_window_ns(series);
        scheduler.adaptive = &adaptive;
      }
      // The SUT's own work on this thread while it waits (inline issuing),
      // until issuing ends: the wait for completions below is another thread's.
      struct InlineIssuing {
        NativeSut* sut = nullptr;
        ~InlineIssuing() {
          if (sut != nullptr) sut->end_inline_issuing();
        }
      } inline_issuing;
      if (config.native_sut != nullptr && config.native_sut->begin_inline_issuing()) {
        inline_issuing.sut = config.native_sut.get();
        scheduler.inline_sut = config.native_sut.get();
      }
      r = issue_loop(series, scheduler, env);
      break;
    }
    case Scenario::Offline:
      r = issue_loop(series, OfflineScheduler{}, env);
      break;
    default:
      r = issue_loop(series, SequenceScheduler{series, env.completions, env.issuing_stopped, env.stall_limit_ns}, env);
      break;
  }
  const auto aborted = [&] { return env.aborted.load(std::memory_order_acquire); };

  // Nobody else issues from now on. One that claimed a query after the loop
  // stopped looking (an abort) still publishes it: count it as issued.
  if (series.others_issue()) r.issued = std::max(r.issued, close_issuing(series));
  // An interrupt ends issuing like the reference's early-outs (an error line).
  if (r.stopped && !aborted() && env.interrupted.load(std::memory_order_acquire) && !env.interrupt_logged) {
    env.log.log("error_runtime", "Ending early: " + env.interrupt_reason + ". query_count " + std::to_string(r.issued),
                true, false);
    env.interrupt_logged = true;
  }
  env.dispatch.end_series(series);
  if (!native_sut && !aborted()) env.host->flush_queries();
  if (r.ran_out && !aborted()) env.log.log("error_runtime", kRanOutMessage, true, false);
  env.live.issuing_ended();
  const uint64_t issued = r.issued;
  series.issued_queries = issued;
  const uint64_t issued_samples = issued * series.samples_per_query;
  outcome.issued_query_count += issued;
  outcome.issued_sample_count += issued_samples;

  if (r.stalled) {
    outcome.extra_invalid_reasons.push_back("The SUT stopped completing samples: no completion arrived for " +
                                            std::to_string(env.stall_limit_ns / 1000000) + " ms while query " +
                                            std::to_string(issued - 1) + " was outstanding.");
  } else if (!aborted()) {
    const bool all_done = wait_for_completions(series, env.completions, env.stall_limit_ns, env.aborted, [&] {
      return series.done_queries.load(std::memory_order_acquire) >= issued;
    });
    if (!all_done && !aborted()) {
      const uint64_t missing = issued_samples - series.completed_samples.load(std::memory_order_acquire);
      outcome.extra_invalid_reasons.push_back(
          std::to_string(missing) + " issued samples never completed (no completion arrived within the "
                                    "completion timeout after issuing ended).");
    }
  }
  if (dispatch == DispatchMode::Worker && !native_sut) env.dispatch.quiesce_workers();
  // Counted from the records, not from completed_samples: a completing call
  // marks each sample (and its query done) before it adds its batch to that
  // counter, so the counter can lag the moment every query is seen done.
  uint64_t incomplete = 0;
  for (uint64_t k = 0; k < issued_samples; ++k) {
    if (series.completed_ns[k].load(std::memory_order_acquire) == Series::kNotCompleted) ++incomplete;
  }
  outcome.completed_sample_count += issued_samples - incomplete;
  outcome.incomplete_sample_count += incomplete;
  if (incomplete != 0) {
    env.log.log("error_runtime",
                "Encountered incomplete samples at the end of a series of queries. count: " +
                    std::to_string(incomplete),
                true, false);
  }
  return true;
}

}  // namespace loadgen

// The issue thread's work for one series: wait until each query is due
// (scheduler.h), issue it (issuer.h), hand it to the SUT (dispatch.h), and
// log why issuing ended; then flush, wait for the completions and count
// what never completed. Runs on the session thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "dispatch.h"
#include "live_stats.h"
#include "run_log.h"
#include "run_outcome.h"
#include "series.h"
#include "session_host.h"
#include "wait.h"

namespace loadgen {

// What the issue thread works with; owned by the session.
struct IssueThreadEnv {
  const SessionConfig& config;
  SessionHost* host;
  Dispatch& dispatch;
  RunLog& log;
  LiveStats& live;
  Signal& completions;  // notified by completing calls
  const std::atomic<bool>& aborted;
  // Aborted or interrupted: issue nothing more (a completion wait goes on
  // unless aborted).
  const std::atomic<bool>& issuing_stopped;
  // Session::interrupt: its reason is readable once `interrupted` is seen
  // (acquire). issue_series logs the stop it caused and sets interrupt_logged.
  const std::atomic<bool>& interrupted;
  const std::string& interrupt_reason;
  bool& interrupt_logged;
  uint64_t issue_threads;  // server_num_issue_query_threads
  // completion_timeout_ms, capped by max_duration_ms in performance series; 0 = none.
  int64_t stall_limit_ns;
};

// Issues `series` start to end and waits for its completions, adding the
// counts (and INVALID reasons) to `outcome`. False, with `abort_reason`
// set, when the series could not start (too few dispatch workers).
bool issue_series(Series& series, const IssueThreadEnv& env, RunOutcome& outcome, std::string* abort_reason);

}  // namespace loadgen

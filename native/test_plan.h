// The whole pre-generated trace of one StartTest, planned without running
// anything: which sets are loaded in which order, and the queries generated
// for each load round (spec/20 §2-§7, golden/query_traces). The conformance
// surface uses it directly; a session can use the same building blocks to
// generate one round at a time.
#pragma once

#include <cstdint>
#include <vector>

#include "settings.h"
#include "trace.h"

namespace loadgen {

// One load round: the set handed to LoadSamplesToRam and the queries
// generated for it.
struct PlannedRound {
  LoadableSet set;
  QueryTrace trace;
};

struct PlannedPhase {
  SeriesKind kind = SeriesKind::Performance;
  // How many sets the set generator produced for this phase. A performance
  // phase uses only the first, so it always has one round.
  uint64_t loadable_set_count = 0;
  std::vector<PlannedRound> rounds;
};

struct TestPlan {
  TestSettings requested;  // after the test05 override
  EffectiveSettings effective;
  // Everything logged while deriving (the test05 warning, invalid-setting
  // errors), in order; LogMessage::is_error tells errors apart.
  std::vector<LogMessage> messages;
  std::vector<PlannedPhase> phases;  // in execution order
  // Ids and the accuracy-log stream after the last round.
  SequenceState sequence;
};

// The series kinds a mode runs, in order: SubmissionRun = accuracy then
// performance; AccuracyOnly = accuracy; PerformanceOnly and
// FindPeakPerformance = performance (one trial's worth).
std::vector<SeriesKind> phase_kinds(Mode mode);

// The sample count a phase's set generator is called with: the effective
// accuracy sample count for accuracy phases, else the effective performance
// sample count.
uint64_t phase_sample_count(const EffectiveSettings& effective, SeriesKind kind);

// Plans one phase: generates its loadable sets and, for every round it runs
// (all sets in accuracy phases, the first one in performance phases), the
// queries, advancing `sequence`.
PlannedPhase plan_phase(const EffectiveSettings& effective, SeriesKind kind, uint64_t qsl_total_count,
                        SequenceState& sequence, const GenerateOptions& options = {});

// Plans a whole StartTest from the requested settings and the QSL's counts:
// applies test05, derives the effective settings, then plans every phase of
// the (possibly overridden) mode with one SequenceState shared by all rounds
// and phases. Throws std::invalid_argument where the reference would loop
// forever, crash or exhaust memory (see generate_queries).
TestPlan plan_test(const TestSettings& requested, uint64_t qsl_total_count, uint64_t qsl_performance_count,
                   const GenerateOptions& options = {});

}  // namespace loadgen

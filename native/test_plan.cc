// Planning of a StartTest's pre-generated trace (see test_plan.h).
#include "test_plan.h"

#include <utility>

namespace loadgen {

std::vector<SeriesKind> phase_kinds(Mode mode) {
  switch (mode) {
    case Mode::SubmissionRun: return {SeriesKind::Accuracy, SeriesKind::Performance};
    case Mode::AccuracyOnly: return {SeriesKind::Accuracy};
    case Mode::PerformanceOnly:
    case Mode::FindPeakPerformance: return {SeriesKind::Performance};
  }
  return {};
}

uint64_t phase_sample_count(const EffectiveSettings& effective, SeriesKind kind) {
  return kind == SeriesKind::Accuracy ? effective.accuracy_sample_count : effective.performance_sample_count;
}

PlannedPhase plan_phase(const EffectiveSettings& effective, SeriesKind kind, uint64_t qsl_total_count,
                        SequenceState& sequence, const GenerateOptions& options) {
  PlannedPhase phase;
  phase.kind = kind;
  std::vector<LoadableSet> sets =
      generate_loadable_sets(effective, phase_sample_count(effective, kind), qsl_total_count);
  phase.loadable_set_count = sets.size();
  // Performance runs load only the first set; accuracy runs load each in turn.
  const size_t rounds = kind == SeriesKind::Accuracy ? sets.size() : (sets.empty() ? 0 : 1);
  phase.rounds.reserve(rounds);
  for (size_t i = 0; i < rounds; ++i) {
    PlannedRound round;
    round.set = std::move(sets[i]);
    round.trace = generate_queries(effective, kind, round.set, sequence, options);
    phase.rounds.push_back(std::move(round));
  }
  return phase;
}

TestPlan plan_test(const TestSettings& requested, uint64_t qsl_total_count, uint64_t qsl_performance_count,
                   const GenerateOptions& options) {
  TestPlan plan;
  // StartTest applies test05 before anything is derived (spec/00 §6).
  plan.requested = apply_test05(requested, &plan.messages);
  plan.effective = derive_effective(plan.requested, qsl_total_count, qsl_performance_count, &plan.messages);
  for (SeriesKind kind : phase_kinds(plan.effective.mode)) {
    plan.phases.push_back(plan_phase(plan.effective, kind, qsl_total_count, plan.sequence, options));
  }
  return plan;
}

}  // namespace loadgen

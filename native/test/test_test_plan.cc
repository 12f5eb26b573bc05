// Whole-StartTest planning against golden/query_traces (ss_submission_run,
// ss_test05) and spec/20 §8 vector 8: round counts, phase order, sequence-id
// continuity over rounds and phases, and the test05 override.
#include <cstdint>
#include <vector>

#include "check.h"
#include "test_plan.h"

using loadgen::GenerateOptions;
using loadgen::Mode;
using loadgen::PlannedPhase;
using loadgen::Scenario;
using loadgen::SeriesKind;
using loadgen::TestPlan;
using loadgen::TestSettings;

namespace {

std::vector<uint32_t> head(const std::vector<uint32_t>& v, size_t n) {
  return std::vector<uint32_t>(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(n, v.size())));
}

// golden/query_traces/ss_submission_run.json
TestSettings submission_run_settings() {
  TestSettings s;
  s.scenario = Scenario::SingleStream;
  s.mode = Mode::SubmissionRun;
  s.single_stream_expected_latency_ns = 2000000;
  s.min_duration_ms = 100;
  s.min_query_count = 64;
  s.qsl_rng_seed = 11;
  s.sample_index_rng_seed = 12;
  s.schedule_rng_seed = 13;
  return s;
}

// Sequence ids of each round start where the previous round ended.
void check_continuity(const TestPlan& plan) {
  uint64_t next_query = 0, next_sample = 0;
  for (const PlannedPhase& phase : plan.phases) {
    for (const auto& round : phase.rounds) {
      CHECK_EQ(round.trace.first_query_id, next_query);
      CHECK_EQ(round.trace.first_sample_id, next_sample);
      next_query += round.trace.query_count();
      next_sample += round.trace.sample_count();
    }
  }
  CHECK_EQ(plan.sequence.next_query_id, next_query);
  CHECK_EQ(plan.sequence.next_sample_id, next_sample);
}

}  // namespace

TEST(plan_phase_kinds_by_mode) {
  using K = std::vector<SeriesKind>;
  CHECK(loadgen::phase_kinds(Mode::SubmissionRun) == K({SeriesKind::Accuracy, SeriesKind::Performance}));
  CHECK(loadgen::phase_kinds(Mode::AccuracyOnly) == K({SeriesKind::Accuracy}));
  CHECK(loadgen::phase_kinds(Mode::PerformanceOnly) == K({SeriesKind::Performance}));
  CHECK(loadgen::phase_kinds(Mode::FindPeakPerformance) == K({SeriesKind::Performance}));
}

TEST(plan_submission_run_order_rounds_and_ids) {
  const TestPlan plan = loadgen::plan_test(submission_run_settings(), 300, 128);
  CHECK(plan.effective.mode == Mode::SubmissionRun);
  CHECK_EQ(plan.phases.size(), size_t{2});
  if (plan.phases.size() != 2) return;
  const PlannedPhase& acc = plan.phases[0];
  const PlannedPhase& perf = plan.phases[1];
  CHECK(acc.kind == SeriesKind::Accuracy);
  CHECK(perf.kind == SeriesKind::Performance);
  CHECK_EQ(acc.loadable_set_count, uint64_t{3});
  CHECK_EQ(acc.rounds.size(), size_t{3});
  CHECK_EQ(perf.loadable_set_count, uint64_t{1});
  CHECK_EQ(perf.rounds.size(), size_t{1});
  if (acc.rounds.size() != 3 || perf.rounds.size() != 1) return;

  CHECK(head(acc.rounds[0].set.indices, 8) == std::vector<uint32_t>({24, 178, 51, 69, 224, 217, 174, 162}));
  CHECK(head(acc.rounds[1].set.indices, 8) == std::vector<uint32_t>({167, 79, 47, 187, 25, 140, 197, 29}));
  CHECK(head(acc.rounds[2].set.indices, 8) == std::vector<uint32_t>({233, 204, 237, 215, 221, 37, 28, 243}));
  CHECK_EQ(acc.rounds[2].set.distribution_end, uint64_t{44});
  CHECK(head(acc.rounds[0].trace.sample_index, 8) == std::vector<uint32_t>({126, 278, 16, 41, 90, 292, 147, 53}));
  CHECK(head(acc.rounds[1].trace.sample_index, 8) == std::vector<uint32_t>({21, 172, 97, 251, 289, 121, 200, 36}));
  CHECK_EQ(acc.rounds[0].trace.query_count(), uint64_t{128});
  CHECK_EQ(acc.rounds[2].trace.query_count(), uint64_t{44});
  CHECK_EQ(acc.rounds[2].trace.generated_query_duration_ns, int64_t{88000000});

  // The performance set restarts the qsl engine: a permutation of 0..127.
  CHECK(head(perf.rounds[0].set.indices, 8) == std::vector<uint32_t>({24, 78, 51, 69, 44, 118, 112, 73}));
  CHECK(head(perf.rounds[0].trace.sample_index, 8) == std::vector<uint32_t>({106, 121, 57, 97, 66, 104, 15, 50}));
  CHECK_EQ(perf.rounds[0].trace.first_query_id, uint64_t{300});
  CHECK_EQ(perf.rounds[0].trace.first_sample_id, uint64_t{300});
  CHECK_EQ(perf.rounds[0].trace.query_count(), uint64_t{101});
  CHECK_EQ(perf.rounds[0].trace.generated_query_duration_ns, int64_t{202000000});
  check_continuity(plan);
}

TEST(plan_accuracy_only_has_only_accuracy_rounds) {
  TestSettings s = submission_run_settings();
  s.mode = Mode::AccuracyOnly;
  const TestPlan plan = loadgen::plan_test(s, 300, 128);
  CHECK_EQ(plan.phases.size(), size_t{1});
  if (plan.phases.empty()) return;
  CHECK(plan.phases[0].kind == SeriesKind::Accuracy);
  CHECK_EQ(plan.phases[0].rounds.size(), size_t{3});
  // Every accuracy sample is logged.
  for (const auto& round : plan.phases[0].rounds)
    for (uint8_t sampled : round.trace.accuracy_log_sampled) CHECK_EQ(sampled, uint8_t{1});
  check_continuity(plan);
}

TEST(plan_performance_uses_first_set_only) {
  TestSettings s = submission_run_settings();
  s.mode = Mode::PerformanceOnly;
  // 1000 samples cut into sets of 128: 8 sets generated, one loaded.
  const TestPlan plan = loadgen::plan_test(s, 1000, 128);
  CHECK_EQ(plan.phases.size(), size_t{1});
  if (plan.phases.empty()) return;
  CHECK_EQ(plan.phases[0].loadable_set_count, uint64_t{1});  // n = min(128, 1000)
  CHECK_EQ(plan.phases[0].rounds.size(), size_t{1});
  CHECK_EQ(plan.phases[0].rounds[0].trace.first_sample_id, uint64_t{0});
  check_continuity(plan);
}

// golden/query_traces/ss_test05.json: AccuracyOnly + test05 -> PerformanceOnly
// with the test05 seeds.
TEST(plan_test05_override) {
  TestSettings s;
  s.scenario = Scenario::SingleStream;
  s.mode = Mode::AccuracyOnly;
  s.single_stream_expected_latency_ns = 500000;
  s.min_duration_ms = 200;
  s.min_query_count = 100;
  s.qsl_rng_seed = 2085463073848966840ull;
  s.sample_index_rng_seed = 2747215439041700203ull;
  s.schedule_rng_seed = 16159082839903944936ull;
  s.test05 = true;
  s.test05_qsl_rng_seed = 7975553102935885558ull;
  s.test05_sample_index_rng_seed = 11403566307062068064ull;
  s.test05_schedule_rng_seed = 15816800565822761601ull;
  const TestPlan plan = loadgen::plan_test(s, 1000, 500);
  CHECK(plan.effective.mode == Mode::PerformanceOnly);
  CHECK_EQ(plan.effective.qsl_rng_seed, uint64_t{7975553102935885558ull});
  CHECK_EQ(plan.effective.sample_index_rng_seed, uint64_t{11403566307062068064ull});
  CHECK_EQ(plan.effective.schedule_rng_seed, uint64_t{15816800565822761601ull});
  CHECK_EQ(plan.phases.size(), size_t{1});
  if (plan.phases.size() != 1 || plan.phases[0].rounds.size() != 1) return;
  CHECK(plan.phases[0].kind == SeriesKind::Performance);
  const auto& round = plan.phases[0].rounds[0];
  CHECK(head(round.set.indices, 8) == std::vector<uint32_t>({47, 148, 53, 483, 397, 150, 283, 21}));
  CHECK(head(round.trace.sample_index, 8) == std::vector<uint32_t>({384, 414, 393, 7, 303, 41, 154, 66}));
  CHECK_EQ(round.trace.query_count(), uint64_t{801});
  CHECK_EQ(round.trace.generated_query_duration_ns, int64_t{400500000});
  // The override is logged as a warning, not an error.
  bool warned = false;
  for (const auto& m : plan.messages) warned = warned || (m.is_warning && !m.is_error);
  CHECK(warned);
}

// spec/20 §8 vector 8: in SubmissionRun the accuracy part consumes seq ids
// 0-99 and the performance part continues the ids and the per-sample stream.
TEST(plan_submission_run_accuracy_log_continues) {
  TestSettings s;
  s.scenario = Scenario::SingleStream;
  s.mode = Mode::SubmissionRun;
  s.qsl_rng_seed = 11;
  s.sample_index_rng_seed = 22;
  s.schedule_rng_seed = 33;
  s.min_duration_ms = 10;
  s.min_query_count = 30;
  s.accuracy_log_probability = 0.3;
  s.accuracy_log_rng_seed = 7;
  GenerateOptions options;
  options.keep_accuracy_log_values = true;
  const TestPlan plan = loadgen::plan_test(s, 100, 20, options);
  CHECK_EQ(plan.phases.size(), size_t{2});
  if (plan.phases.size() != 2 || plan.phases[1].rounds.size() != 1) return;
  CHECK_EQ(plan.phases[0].rounds.size(), size_t{5});
  const auto& perf = plan.phases[1].rounds[0].trace;
  CHECK_EQ(perf.first_sample_id, uint64_t{100});
  std::vector<uint64_t> logged;
  for (size_t i = 0; i < perf.accuracy_log_sampled.size(); ++i)
    if (perf.accuracy_log_sampled[i]) logged.push_back(perf.first_sample_id + i);
  CHECK(logged == std::vector<uint64_t>({100, 102, 109, 111, 118, 121, 122, 123, 127, 128}));
  CHECK_EQ(perf.accuracy_log_value.size(), perf.sample_count());
  check_continuity(plan);
}

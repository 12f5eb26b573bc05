// Loadable sets and query traces against spec/20 §8 and hand-copied excerpts
// of golden/query_traces, perf_sample_sets.json and accuracy_log_sampling.json.
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "check.h"
#include "trace.h"

using loadgen::EffectiveSettings;
using loadgen::GenerateOptions;
using loadgen::LoadableSet;
using loadgen::Mode;
using loadgen::QueryTrace;
using loadgen::Scenario;
using loadgen::SequenceState;
using loadgen::SeriesKind;
using loadgen::TestSettings;

namespace {

constexpr uint64_t kOfficialQslSeed = 2085463073848966840ull;
constexpr uint64_t kOfficialSampleSeed = 2747215439041700203ull;
constexpr uint64_t kOfficialScheduleSeed = 16159082839903944936ull;

TestSettings official(Scenario scenario, Mode mode) {
  TestSettings s;
  s.scenario = scenario;
  s.mode = mode;
  s.qsl_rng_seed = kOfficialQslSeed;
  s.sample_index_rng_seed = kOfficialSampleSeed;
  s.schedule_rng_seed = kOfficialScheduleSeed;
  return s;
}

TestSettings seeded(Scenario scenario, Mode mode, uint64_t qsl, uint64_t sample, uint64_t schedule) {
  TestSettings s;
  s.scenario = scenario;
  s.mode = mode;
  s.qsl_rng_seed = qsl;
  s.sample_index_rng_seed = sample;
  s.schedule_rng_seed = schedule;
  return s;
}

// Compares actual[offset ..] with expected, element by element.
template <typename T, typename U>
void trace_check_range(const std::vector<T>& actual, const std::vector<U>& expected, size_t offset = 0) {
  CHECK(actual.size() >= offset + expected.size());
  if (actual.size() < offset + expected.size()) return;
  for (size_t i = 0; i < expected.size(); ++i) {
    CHECK_EQ(static_cast<int64_t>(actual[offset + i]), static_cast<int64_t>(expected[i]));
  }
}

template <typename T, typename U>
void trace_check_tail(const std::vector<T>& actual, const std::vector<U>& expected) {
  CHECK(actual.size() >= expected.size());
  if (actual.size() >= expected.size()) trace_check_range(actual, expected, actual.size() - expected.size());
}

// Performance phase of one test: first set, one series.
struct PerformanceRun {
  EffectiveSettings effective;
  LoadableSet set;
  QueryTrace trace;
};

PerformanceRun run_performance(const TestSettings& s, uint64_t total, uint64_t pc, SequenceState& seq,
                               const GenerateOptions& options = {}) {
  PerformanceRun run;
  run.effective = loadgen::derive_effective(s, total, pc, nullptr);
  std::vector<LoadableSet> sets =
      loadgen::generate_loadable_sets(run.effective, run.effective.performance_sample_count, total);
  CHECK(!sets.empty());
  if (sets.empty()) return run;
  run.set = sets[0];
  run.trace = loadgen::generate_queries(run.effective, SeriesKind::Performance, run.set, seq, options);
  return run;
}

std::vector<uint64_t> logged_ids(const QueryTrace& t) {
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < t.accuracy_log_sampled.size(); ++i) {
    if (t.accuracy_log_sampled[i]) ids.push_back(t.first_sample_id + i);
  }
  return ids;
}

template <typename F>
bool throws_invalid_argument(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument&) {
    return true;
  }
  return false;
}

}  // namespace

// ---- Loadable sets -------------------------------------------------------

TEST(trace_loadable_sets_performance) {
  // perf_seed0_total100_perf250: the count above the total gives one set of all.
  TestSettings s;
  s.performance_sample_count_override = 250;
  EffectiveSettings e = loadgen::derive_effective(s, 100, 250, nullptr);
  std::vector<LoadableSet> sets = loadgen::generate_loadable_sets(e, e.performance_sample_count, 100);
  CHECK_EQ(sets.size(), 1u);
  CHECK_EQ(sets[0].indices.size(), 100u);
  CHECK_EQ(sets[0].distribution_end, 100u);
  trace_check_range(sets[0].indices, std::vector<int>{27, 64, 57, 53, 56, 60, 89, 37, 26, 34, 74, 96});

  // A performance count of 0 never closes a set: one set holds all.
  e.performance_sample_count = 0;
  sets = loadgen::generate_loadable_sets(e, 10, 100);
  CHECK_EQ(sets.size(), 1u);
  CHECK_EQ(sets[0].distribution_end, 10u);

  // Nothing to load: no sets.
  sets = loadgen::generate_loadable_sets(e, 10, 0);
  CHECK(sets.empty());
}

TEST(trace_loadable_sets_accuracy_rounds) {
  // acc_seed1_total10_perf3.
  TestSettings s = seeded(Scenario::SingleStream, Mode::AccuracyOnly, 1, 0, 0);
  const EffectiveSettings e = loadgen::derive_effective(s, 10, 3, nullptr);
  const std::vector<LoadableSet> sets = loadgen::generate_loadable_sets(e, e.accuracy_sample_count, 10);
  CHECK_EQ(sets.size(), 4u);
  if (sets.size() != 4) return;
  trace_check_range(sets[0].indices, std::vector<int>{9, 0, 2});
  trace_check_range(sets[1].indices, std::vector<int>{5, 7, 4});
  trace_check_range(sets[2].indices, std::vector<int>{6, 3, 1});
  CHECK_EQ(sets[3].indices.size(), 1u);
  CHECK_EQ(sets[3].indices[0], 8u);
  CHECK_EQ(sets[3].distribution_end, 1u);
}

TEST(trace_loadable_sets_multistream_padding) {
  // acc_ms_spq13_seed42_total30_perf12: 12 padding copies; the last set of 6
  // wraps around its own (growing) list.
  TestSettings s = seeded(Scenario::MultiStream, Mode::AccuracyOnly, 42, 0, 0);
  s.multi_stream_samples_per_query = 13;
  const EffectiveSettings e = loadgen::derive_effective(s, 30, 12, nullptr);
  const std::vector<LoadableSet> sets = loadgen::generate_loadable_sets(e, e.accuracy_sample_count, 30);
  CHECK_EQ(sets.size(), 3u);
  if (sets.size() != 3) return;
  trace_check_range(sets[0].indices, std::vector<int>{1,  24, 22, 29, 5,  9,  21, 23, 18, 19, 13, 27,
                                                      1,  24, 22, 29, 5,  9,  21, 23, 18, 19, 13, 27});
  CHECK_EQ(sets[0].indices.size(), 24u);
  CHECK_EQ(sets[0].distribution_end, 12u);
  trace_check_range(sets[2].indices,
                    std::vector<int>{6, 28, 2, 25, 17, 20, 6, 28, 2, 25, 17, 20, 6, 28, 2, 25, 17, 20});
  CHECK_EQ(sets[2].indices.size(), 18u);
  CHECK_EQ(sets[2].distribution_end, 6u);
}

// ---- spec/20 §8 test vectors ---------------------------------------------

TEST(trace_spec_example_1_single_stream) {
  TestSettings s = official(Scenario::SingleStream, Mode::PerformanceOnly);
  s.min_duration_ms = 0;
  s.min_query_count = 16;
  s.single_stream_expected_latency_ns = 1000000;
  SequenceState seq;
  const PerformanceRun r = run_performance(s, 1024, 1024, seq);
  trace_check_range(r.set.indices, std::vector<int>{216, 267, 822, 906, 663, 580, 710, 908, 410, 882, 910, 801});
  CHECK_EQ(r.trace.query_count(), 16u);
  trace_check_range(r.trace.sample_index, std::vector<int>{784, 618, 960, 248, 513, 635, 155, 667, 431, 242, 804,
                                                           751, 434, 156, 303, 782});
  CHECK_EQ(r.trace.sample_count(), 16u);
  CHECK_EQ(r.trace.scheduled_delta_ns[15], 15 * 1000000);
  CHECK_EQ(r.trace.generated_query_duration_ns, 16 * 1000000);
}

TEST(trace_spec_example_2_server) {
  TestSettings s = official(Scenario::Server, Mode::PerformanceOnly);
  s.server_target_qps = 100;
  s.min_duration_ms = 0;
  s.min_query_count = 12;
  SequenceState seq;
  const PerformanceRun r = run_performance(s, 1024, 1024, seq);
  CHECK_EQ(r.trace.query_count(), 12u);
  trace_check_range(r.trace.sample_index, std::vector<int>{784, 618, 960, 248, 513, 635, 155, 667, 431, 242, 804, 751});
  trace_check_range(r.trace.scheduled_delta_ns,
                    std::vector<int64_t>{0, 18436540, 23015776, 35874399, 43004346, 46868412, 69351828, 80267627,
                                         81285096, 95898565, 99112295, 114546934});
  CHECK_EQ(r.trace.generated_query_duration_ns, 118222095);
}

TEST(trace_spec_example_3_single_stream_accuracy) {
  TestSettings s = official(Scenario::SingleStream, Mode::AccuracyOnly);
  const EffectiveSettings e = loadgen::derive_effective(s, 10, 10, nullptr);
  std::vector<LoadableSet> sets = loadgen::generate_loadable_sets(e, e.accuracy_sample_count, 10);
  CHECK_EQ(sets.size(), 1u);
  if (sets.empty()) return;
  trace_check_range(sets[0].indices, std::vector<int>{1, 5, 7, 6, 0, 8, 3, 2, 9, 4});
  SequenceState seq;
  const QueryTrace t = loadgen::generate_queries(e, SeriesKind::Accuracy, sets[0], seq);
  CHECK_EQ(t.query_count(), 10u);
  trace_check_range(t.sample_index, std::vector<int>{2, 5, 3, 8, 7, 9, 0, 1, 6, 4});
  // Accuracy series log every sample.
  CHECK_EQ(logged_ids(t).size(), 10u);
}

TEST(trace_spec_example_4_multistream) {
  TestSettings s = official(Scenario::MultiStream, Mode::PerformanceOnly);
  s.multi_stream_samples_per_query = 8;
  s.min_query_count = 5;
  s.min_duration_ms = 0;
  SequenceState seq;
  const PerformanceRun r = run_performance(s, 1024, 1024, seq);
  CHECK_EQ(r.set.indices.size(), 1031u);
  CHECK_EQ(r.set.distribution_end, 1024u);
  CHECK_EQ(r.trace.samples_per_query, 8u);
  CHECK_EQ(r.trace.query_count(), 5u);
  trace_check_range(r.trace.sample_index,
                    std::vector<int>{678, 266, 573, 278, 241, 816, 958, 576, 935, 222, 123, 954, 24, 488, 1008, 889,
                                     80,  581, 609, 528, 348, 321, 483, 35});
}

TEST(trace_spec_example_5_offline_equal_issue) {
  TestSettings s = official(Scenario::Offline, Mode::PerformanceOnly);
  s.sample_concatenate_permutation = true;
  s.min_query_count = 25;
  s.min_duration_ms = 0;
  SequenceState seq;
  const PerformanceRun r = run_performance(s, 10, 10, seq);
  trace_check_range(r.set.indices, std::vector<int>{1, 5, 7, 6, 0, 8, 3, 2, 9, 4});
  CHECK_EQ(r.effective.samples_per_query, 25u);
  CHECK_EQ(r.trace.query_count(), 1u);
  CHECK_EQ(r.trace.samples_per_query, 30u);
  CHECK_EQ(r.trace.sample_count(), 30u);
  trace_check_range(r.trace.sample_index, std::vector<int>{1, 9, 7, 5, 2, 6, 0, 4, 3, 8, 6, 5, 7, 2, 9,
                                                           1, 0, 3, 4, 8, 4, 6, 1, 7, 0, 5, 8, 3, 9, 2});
}

TEST(trace_spec_example_6_server_equal_issue) {
  TestSettings s = official(Scenario::Server, Mode::PerformanceOnly);
  s.sample_concatenate_permutation = true;
  s.server_target_qps = 1000;
  s.min_duration_ms = 0;
  s.min_query_count = 10;
  SequenceState seq;
  const PerformanceRun r = run_performance(s, 8, 8, seq);
  trace_check_range(r.set.indices, std::vector<int>{1, 5, 7, 6, 0, 4, 3, 2});
  CHECK_EQ(r.trace.query_count(), 16u);
  trace_check_range(r.trace.sample_index, std::vector<int>{0, 5, 7, 4, 2, 1, 6, 3, 0, 5, 4, 3, 1, 6, 7, 2});
  CHECK_EQ(r.trace.generated_query_duration_ns, 13993468);
}

TEST(trace_spec_example_7_accuracy_log_offset) {
  EffectiveSettings e;
  e.accuracy_log_rng_seed = 720381539243781796ull;
  CHECK_EQ(loadgen::accuracy_log_offset(e), 0.49069568815352677);
  // Per-sample values: the default-seeded stream, kept on request.
  TestSettings s = official(Scenario::SingleStream, Mode::PerformanceOnly);
  s.min_duration_ms = 0;
  s.min_query_count = 5;
  SequenceState seq;
  GenerateOptions keep;
  keep.keep_accuracy_log_values = true;
  const PerformanceRun r = run_performance(s, 100, 100, seq, keep);
  CHECK_EQ(r.trace.accuracy_log_value.size(), 5u);
  if (r.trace.accuracy_log_value.size() == 5) {
    CHECK_EQ(r.trace.accuracy_log_value[0], 0.1354770042967805);
    CHECK_EQ(r.trace.accuracy_log_value[1], 0.8350085899945795);
    CHECK_EQ(r.trace.accuracy_log_value[2], 0.96886777112423139);
    CHECK_EQ(r.trace.accuracy_log_value[3], 0.2210340429827049);
    CHECK_EQ(r.trace.accuracy_log_value[4], 0.30816705050700327);
  }
  // Not kept by default.
  SequenceState seq2;
  const PerformanceRun r2 = run_performance(s, 100, 100, seq2);
  CHECK(r2.trace.accuracy_log_value.empty());
  CHECK_EQ(r2.trace.accuracy_log_sampled.size(), 5u);
}

namespace {
TestSettings spec_example_8_settings() {
  TestSettings s = seeded(Scenario::SingleStream, Mode::PerformanceOnly, 11, 22, 33);
  s.min_duration_ms = 10;
  s.min_query_count = 30;
  s.single_stream_expected_latency_ns = 1000000;
  s.accuracy_log_probability = 0.3;
  s.accuracy_log_rng_seed = 7;
  return s;
}
}  // namespace

TEST(trace_spec_example_8_accuracy_log_sampling) {
  TestSettings s = spec_example_8_settings();
  SequenceState seq;
  const PerformanceRun r = run_performance(s, 100, 20, seq);
  trace_check_range(r.set.indices,
                    std::vector<int>{5, 18, 17, 2, 8, 13, 3, 16, 6, 12, 1, 9, 0, 14, 15, 7, 4, 10, 11, 19});
  CHECK_EQ(r.trace.query_count(), 30u);
  trace_check_range(r.trace.sample_index, std::vector<int>{5, 17, 7, 3, 19, 6, 15, 5, 13, 10});
  CHECK_EQ(loadgen::accuracy_log_probability(r.effective), 0.3);
  trace_check_range(logged_ids(r.trace), std::vector<int>{1, 2, 7, 8, 9, 11, 13, 15, 18, 20});
  CHECK_EQ(logged_ids(r.trace).size(), 10u);
  CHECK_EQ(seq.next_sample_id, 30u);
  CHECK_EQ(seq.next_query_id, 30u);

  // Sampling target 5: probability 5 / max(10 * 1, 30 * 1).
  s.accuracy_log_sampling_target = 5;
  SequenceState seq2;
  const PerformanceRun t = run_performance(s, 100, 20, seq2);
  CHECK_EQ(loadgen::accuracy_log_probability(t.effective), 5.0 / 30.0);
  trace_check_range(logged_ids(t.trace), std::vector<int>{1, 13, 18, 20});
  CHECK_EQ(logged_ids(t.trace).size(), 4u);
}

TEST(trace_spec_example_8_submission_run) {
  TestSettings s = spec_example_8_settings();
  s.mode = Mode::SubmissionRun;
  const EffectiveSettings e = loadgen::derive_effective(s, 100, 20, nullptr);
  SequenceState seq;
  // Accuracy part: five sets of 20, ids 0..99, every sample logged.
  const std::vector<LoadableSet> sets = loadgen::generate_loadable_sets(e, e.accuracy_sample_count, 100);
  CHECK_EQ(sets.size(), 5u);
  uint64_t logged = 0;
  for (const LoadableSet& set : sets) {
    const QueryTrace t = loadgen::generate_queries(e, SeriesKind::Accuracy, set, seq);
    logged += logged_ids(t).size();
  }
  CHECK_EQ(logged, 100u);
  CHECK_EQ(seq.next_sample_id, 100u);
  // Performance part continues ids and the per-sample stream.
  const std::vector<LoadableSet> perf = loadgen::generate_loadable_sets(e, e.performance_sample_count, 100);
  const QueryTrace t = loadgen::generate_queries(e, SeriesKind::Performance, perf[0], seq);
  CHECK_EQ(t.first_sample_id, 100u);
  CHECK_EQ(t.first_query_id, 100u);
  trace_check_range(logged_ids(t), std::vector<int>{100, 102, 109, 111, 118, 121, 122, 123, 127, 128});
  CHECK_EQ(logged_ids(t).size(), 10u);
}

// ---- Golden query traces (hand-copied excerpts) --------------------------

TEST(trace_golden_ss_perf_seed0_small) {
  TestSettings s;  // all seeds 0
  s.single_stream_expected_latency_ns = 250000;
  s.min_duration_ms = 100;
  s.min_query_count = 64;
  SequenceState seq;
  const PerformanceRun r = run_performance(s, 100, 50, seq);
  CHECK_EQ(r.set.indices.size(), 50u);
  trace_check_range(r.set.indices, std::vector<int>{27, 30, 1, 17, 9, 11, 4, 37, 26, 34, 24, 18, 21, 20, 36, 8});
  trace_check_tail(r.set.indices, std::vector<int>{6, 22, 33, 35});
  CHECK_EQ(r.trace.query_count(), 801u);
  CHECK_EQ(r.trace.samples_per_query, 1u);
  CHECK_EQ(r.trace.generated_query_duration_ns, 200250000);
  CHECK_EQ(r.trace.first_query_id, 0u);
  CHECK_EQ(r.trace.first_sample_id, 0u);
  trace_check_range(r.trace.sample_index, std::vector<int>{41, 22, 7, 42, 46, 5, 13, 14, 7, 42, 9, 17, 33, 0, 40, 0});
  trace_check_tail(r.trace.sample_index, std::vector<int>{48, 14, 36, 49});
  trace_check_range(r.trace.scheduled_delta_ns, std::vector<int64_t>{0, 250000, 500000, 750000});
  trace_check_tail(r.trace.scheduled_delta_ns, std::vector<int64_t>{199250000, 199500000, 199750000, 200000000});
}

TEST(trace_golden_ms_perf_issue_same) {
  TestSettings s = official(Scenario::MultiStream, Mode::PerformanceOnly);
  s.min_duration_ms = 100;
  s.min_query_count = 30;
  s.performance_issue_same = true;
  s.performance_issue_same_index = 5;
  SequenceState seq;
  const PerformanceRun r = run_performance(s, 1000, 200, seq);
  CHECK_EQ(r.set.indices.size(), 207u);
  CHECK_EQ(r.set.distribution_end, 200u);
  trace_check_range(r.set.indices, std::vector<int>{1, 188, 112, 155, 11, 37, 58, 70, 140, 196, 182, 42, 164});
  trace_check_tail(r.set.indices, std::vector<int>{155, 11, 37, 58});
  CHECK_EQ(r.trace.query_count(), 30u);
  CHECK_EQ(r.trace.samples_per_query, 8u);
  CHECK_EQ(r.trace.generated_query_duration_ns, 240000000);
  const std::vector<int> same_query{37, 58, 70, 140, 196, 182, 42, 164};
  for (size_t q = 0; q < 30; ++q) trace_check_range(r.trace.sample_index, same_query, q * 8);
  trace_check_tail(r.trace.scheduled_delta_ns, std::vector<int64_t>{208000000, 216000000, 224000000, 232000000});
}

TEST(trace_golden_offline_equal_issue) {
  TestSettings s = official(Scenario::Offline, Mode::PerformanceOnly);
  s.offline_expected_qps = 100;
  s.sample_concatenate_permutation = true;
  s.min_duration_ms = 1000;
  s.min_query_count = 1;
  SequenceState seq;
  const PerformanceRun r = run_performance(s, 64, 64, seq);
  CHECK_EQ(r.effective.samples_per_query, 110u);
  CHECK_EQ(r.effective.min_sample_count, 110u);
  trace_check_range(r.set.indices, std::vector<int>{1, 5, 13, 44, 11, 37, 58, 36, 60, 33, 17, 42});
  trace_check_tail(r.set.indices, std::vector<int>{15, 55, 18, 57});
  CHECK_EQ(r.trace.query_count(), 1u);
  CHECK_EQ(r.trace.samples_per_query, 128u);
  CHECK_EQ(r.trace.generated_query_duration_ns, 10000000);  // one 1/100 s period
  CHECK_EQ(r.trace.scheduled_delta_ns[0], 0);
  trace_check_range(r.trace.sample_index, std::vector<int>{18, 39, 26, 42, 24, 50, 38, 61, 12, 4, 2, 31, 11, 0, 56, 19});
  trace_check_tail(r.trace.sample_index, std::vector<int>{33, 44, 10, 54});
}

TEST(trace_golden_server_equal_issue) {
  TestSettings s = official(Scenario::Server, Mode::PerformanceOnly);
  s.server_target_qps = 500;
  s.sample_concatenate_permutation = true;
  s.min_duration_ms = 1000;
  s.min_query_count = 100;
  SequenceState seq;
  const PerformanceRun r = run_performance(s, 64, 64, seq);
  CHECK_EQ(r.trace.query_count(), 512u);  // min_q 100 -> 128, then grown by 64 until t >= 1 s
  CHECK_EQ(r.trace.generated_query_duration_ns, 1060454607);
  trace_check_range(r.trace.sample_index, std::vector<int>{29, 15, 17, 42, 59, 51, 61, 12, 37, 55, 46, 43});
  trace_check_tail(r.trace.sample_index, std::vector<int>{48, 45, 9, 15});
  trace_check_range(r.trace.scheduled_delta_ns,
                    std::vector<int64_t>{0, 3687308, 4603155, 7174879, 8600868, 9373681, 13870364, 16053523});
  trace_check_tail(r.trace.scheduled_delta_ns,
                   std::vector<int64_t>{1057597133, 1058658394, 1059606083, 1060293368});
}

TEST(trace_golden_ms_accuracy_spq13) {
  TestSettings s = seeded(Scenario::MultiStream, Mode::AccuracyOnly, 21, 22, 23);
  s.multi_stream_samples_per_query = 13;
  const EffectiveSettings e = loadgen::derive_effective(s, 250, 100, nullptr);
  const std::vector<LoadableSet> sets = loadgen::generate_loadable_sets(e, e.accuracy_sample_count, 250);
  CHECK_EQ(sets.size(), 3u);
  if (sets.size() != 3) return;
  SequenceState seq;
  std::vector<QueryTrace> traces;
  for (const LoadableSet& set : sets) traces.push_back(loadgen::generate_queries(e, SeriesKind::Accuracy, set, seq));

  CHECK_EQ(sets[0].indices.size(), 112u);
  trace_check_range(sets[0].indices, std::vector<int>{12, 177, 40, 151, 46, 225, 48, 59, 89, 110, 153, 9, 10});
  trace_check_tail(sets[0].indices, std::vector<int>{89, 110, 153, 9});
  CHECK_EQ(traces[0].query_count(), 8u);  // ceil(100 / 13)
  CHECK_EQ(traces[0].generated_query_duration_ns, 64000000);
  trace_check_range(traces[0].sample_index, std::vector<int>{56, 245, 204, 215, 201, 3, 34, 99, 103, 12, 177, 40, 151,
                                                             12, 177, 40, 151, 46, 225, 48, 59, 89, 110, 153, 9, 10});
  trace_check_tail(traces[0].sample_index, std::vector<int>{38, 229, 111, 0});

  CHECK_EQ(traces[1].first_query_id, 8u);
  CHECK_EQ(traces[1].first_sample_id, 104u);
  trace_check_range(traces[1].sample_index, std::vector<int>{69, 211, 240, 188, 244, 209, 139, 33, 63, 86, 4, 242, 172});

  CHECK_EQ(sets[2].indices.size(), 62u);
  CHECK_EQ(sets[2].distribution_end, 50u);
  CHECK_EQ(traces[2].query_count(), 4u);
  CHECK_EQ(traces[2].first_query_id, 16u);
  CHECK_EQ(traces[2].first_sample_id, 208u);
  CHECK_EQ(traces[2].generated_query_duration_ns, 32000000);
  trace_check_range(traces[2].scheduled_delta_ns, std::vector<int64_t>{0, 8000000, 16000000, 24000000});
  trace_check_tail(traces[2].sample_index, std::vector<int>{189, 50, 195, 198});
  for (const QueryTrace& t : traces) CHECK_EQ(logged_ids(t).size(), t.sample_count());
}

// ---- Accuracy-log probability (golden accuracy_log_sampling.json) --------

TEST(trace_accuracy_log_probability_targets) {
  // server_sampling_target: 5000 qps * 200 ms = 1000 expected -> 50 / 1000.
  TestSettings server;
  server.scenario = Scenario::Server;
  server.server_target_qps = 5000;
  server.min_duration_ms = 200;
  server.min_query_count = 100;
  server.accuracy_log_sampling_target = 50;
  server.accuracy_log_rng_seed = 777;
  EffectiveSettings e = loadgen::derive_effective(server, 2000, 512, nullptr);
  CHECK_EQ(loadgen::accuracy_log_probability(e), 0.05);
  CHECK_EQ(loadgen::accuracy_log_offset(e), 0.6464497556799705);

  // offline_sampling_target: max(1000, min_sample_count 1100) -> 55 / 1100.
  TestSettings offline;
  offline.scenario = Scenario::Offline;
  offline.offline_expected_qps = 1000;
  offline.min_duration_ms = 1000;
  offline.min_query_count = 1;
  offline.accuracy_log_sampling_target = 55;
  offline.accuracy_log_rng_seed = 2024;
  e = loadgen::derive_effective(offline, 5000, 1024, nullptr);
  CHECK_EQ(loadgen::accuracy_log_probability(e), 0.05);
  CHECK_EQ(loadgen::accuracy_log_offset(e), 0.7571533905779977);

  // Without a target the configured probability is used.
  offline.accuracy_log_sampling_target = 0;
  offline.accuracy_log_probability = 0.125;
  e = loadgen::derive_effective(offline, 5000, 1024, nullptr);
  CHECK_EQ(loadgen::accuracy_log_probability(e), 0.125);

  // The decision wraps value + offset into [0, 1).
  CHECK(loadgen::accuracy_log_decision(0.5, 0.25, 0.75));
  CHECK(!loadgen::accuracy_log_decision(0.5, 0.25, 0.7));
  CHECK(loadgen::accuracy_log_decision(0.75, 0.5, 0.25));  // 1.25 -> 0.25
  CHECK(!loadgen::accuracy_log_decision(0.1, 0.2, 0.0));
}

// ---- Guards against the reference's hangs and crashes (spec/60 §2) -------

TEST(trace_rejects_inputs_the_reference_cannot_handle) {
  TestSettings s;
  s.min_duration_ms = 0;
  s.min_query_count = 0;
  EffectiveSettings e = loadgen::derive_effective(s, 10, 10, nullptr);
  std::vector<LoadableSet> sets = loadgen::generate_loadable_sets(e, 10, 10);
  SequenceState seq;
  // Zero queries: the reference reads query -1.
  CHECK(throws_invalid_argument([&] { loadgen::generate_queries(e, SeriesKind::Performance, sets[0], seq); }));
  // Nothing consumed on failure before creation.
  CHECK_EQ(seq.next_query_id, 0u);

  // Empty loaded set.
  e.min_query_count = 5;
  LoadableSet empty;
  CHECK(throws_invalid_argument([&] { loadgen::generate_queries(e, SeriesKind::Performance, empty, seq); }));

  // Period truncating to 0 ns with a duration: endless loop in the reference.
  TestSettings tiny;
  tiny.single_stream_expected_latency_ns = 0.5;
  tiny.min_duration_ms = 1;
  e = loadgen::derive_effective(tiny, 10, 10, nullptr);
  sets = loadgen::generate_loadable_sets(e, 10, 10);
  CHECK(throws_invalid_argument([&] { loadgen::generate_queries(e, SeriesKind::Performance, sets[0], seq); }));

  // performance_issue_same_index outside the loaded set.
  TestSettings same;
  same.performance_issue_same = true;
  same.performance_issue_same_index = 10;
  same.min_duration_ms = 0;
  e = loadgen::derive_effective(same, 10, 10, nullptr);
  sets = loadgen::generate_loadable_sets(e, 10, 10);
  CHECK(throws_invalid_argument([&] { loadgen::generate_queries(e, SeriesKind::Performance, sets[0], seq); }));

  // Server rate 0.
  TestSettings server;
  server.scenario = Scenario::Server;
  server.server_target_qps = 0;
  e = loadgen::derive_effective(server, 10, 10, nullptr);
  sets = loadgen::generate_loadable_sets(e, 10, 10);
  CHECK(throws_invalid_argument([&] { loadgen::generate_queries(e, SeriesKind::Performance, sets[0], seq); }));

  // MultiStream unique + equal issue: min_q 3 is padded to |L| = 13 but only
  // 3 unique starts exist (out-of-range read in the reference). The throw comes
  // after 3 queries were built; the test's sequence must stay untouched.
  TestSettings unique;
  unique.scenario = Scenario::MultiStream;
  unique.multi_stream_samples_per_query = 4;
  unique.performance_issue_unique = true;
  unique.sample_concatenate_permutation = true;
  e = loadgen::derive_effective(unique, 10, 10, nullptr);
  sets = loadgen::generate_loadable_sets(e, 10, 10);
  CHECK_EQ(sets[0].indices.size(), 13u);
  SequenceState before;
  before.next_query_id = 7;
  before.next_sample_id = 70;
  SequenceState after = before;
  CHECK(throws_invalid_argument([&] { loadgen::generate_queries(e, SeriesKind::Performance, sets[0], after); }));
  CHECK_EQ(after.next_query_id, 7u);
  CHECK_EQ(after.next_sample_id, 70u);
  CHECK_EQ(after.accuracy_log_rng(), before.accuracy_log_rng());

  // MultiStream with 0 samples per query.
  TestSettings ms;
  ms.scenario = Scenario::MultiStream;
  ms.multi_stream_samples_per_query = 0;
  e = loadgen::derive_effective(ms, 10, 10, nullptr);
  CHECK(throws_invalid_argument([&] { loadgen::generate_loadable_sets(e, 10, 10); }));
}

// ---- Large sets: bounded, and stopped on request ---------------------------

TEST(trace_loadable_sets_refuse_more_than_the_limit_before_allocating) {
  TestSettings s;
  s.scenario = Scenario::Offline;
  const EffectiveSettings e = loadgen::derive_effective(s, 4294967295u, 4294967295u, nullptr);
  CHECK_EQ(loadgen::max_loaded_samples(), uint64_t{100000000});
  // 2^32 - 1 indices would be 17 GB: refused at once.
  CHECK(throws_invalid_argument([&] { loadgen::generate_loadable_sets(e, 4294967295u, 4294967295u); }));
  CHECK(throws_invalid_argument(
      [&] { loadgen::generate_loadable_sets(e, loadgen::max_loaded_samples() + 1, 4294967295u); }));
}

TEST(trace_generation_stops_when_its_flag_is_set) {
  TestSettings s;
  s.scenario = Scenario::Offline;
  s.min_duration_ms = 0;
  s.performance_issue_unique = true;  // the query holds the whole set
  const uint64_t n = 3000000;
  const EffectiveSettings e = loadgen::derive_effective(s, n, n, nullptr);
  std::atomic<bool> stop{true};
  bool stopped = false;
  try {
    loadgen::generate_loadable_sets(e, n, n, &stop);
  } catch (const loadgen::GenerationStopped&) {
    stopped = true;
  }
  CHECK(stopped);

  stop = false;
  const std::vector<LoadableSet> sets = loadgen::generate_loadable_sets(e, n, n, &stop);
  CHECK_EQ(sets.size(), size_t{1});
  // The same set with and without a flag that is never set.
  CHECK(loadgen::generate_loadable_sets(e, n, n)[0].indices == sets[0].indices);

  SequenceState seq;
  seq.next_query_id = 3;
  GenerateOptions options;
  options.stop = &stop;
  stop = true;
  stopped = false;
  try {
    loadgen::generate_queries(e, SeriesKind::Performance, sets[0], seq, options);
  } catch (const loadgen::GenerationStopped&) {
    stopped = true;
  }
  CHECK(stopped);
  CHECK_EQ(seq.next_query_id, 3u);  // a stopped series consumes nothing
  CHECK_EQ(seq.next_sample_id, 0u);
}

TEST(trace_shuffle_stops_between_blocks) {
  // A stopped shuffle returns false; one never stopped matches the plain one.
  std::vector<uint32_t> a(1000000), b(1000000);
  for (uint32_t i = 0; i < a.size(); ++i) a[i] = b[i] = i;
  loadgen::Mt19937 g1(7), g2(7);
  std::atomic<bool> never{false};
  CHECK(loadgen::shuffle(a.data(), a.size(), g1, &never));
  CHECK(loadgen::shuffle(b.data(), b.size(), g2));
  CHECK(a == b);
  std::atomic<bool> stop{true};
  CHECK(!loadgen::shuffle(a.data(), a.size(), g1, &stop));
  // Small sets (the two-swaps-per-draw branch) finish regardless: microseconds.
  CHECK(loadgen::shuffle(a.data(), 1000, g1, &stop));
}

// Results, validity, early stopping and the summary/detail text, checked
// against cases of golden/results_math.json. The latency arrays are rebuilt
// from each case's documented "formula" / "token_rule" and checked against the
// golden arrays (length, sum, first three and last values).
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "check.h"
#include "format.h"
#include "results.h"

using namespace loadgen;

namespace {

using Entries = std::vector<std::pair<std::string, std::string>>;

// latency[i] = base + ((i*mult + add) % mod) * step + (spike_every > 0 && i % spike_every == 0 ? spike : 0)
struct Formula {
  int64_t base, mult, add, mod, step, spike_every, spike;
};

std::vector<int64_t> generate_latencies(const Formula& f, int64_t n) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) {
    v.push_back(f.base + ((i * f.mult + f.add) % f.mod) * f.step +
                (f.spike_every > 0 && i % f.spike_every == 0 ? f.spike : 0));
  }
  return v;
}

// MultiStream: a query's latency is the max over its samples q*spq .. q*spq+spq-1.
std::vector<int64_t> query_maxima(const std::vector<int64_t>& samples, size_t spq) {
  std::vector<int64_t> q;
  for (size_t i = 0; i + spq <= samples.size(); i += spq)
    q.push_back(*std::max_element(samples.begin() + static_cast<std::ptrdiff_t>(i),
                                  samples.begin() + static_cast<std::ptrdiff_t>(i + spq)));
  return q;
}

// tokens[i] = 2 + (i*37 % 300); non-Offline: first_token[i] = latency[i]/5 + (i*13 % 17)*1000,
// tpot[i] = (latency[i] - first_token[i]) / (tokens[i]-1).
void apply_token_rule(SeriesResult* raw, bool with_first_token) {
  const auto& lat = raw->sample_latencies_ns;
  for (size_t i = 0; i < lat.size(); ++i) {
    const int64_t k = static_cast<int64_t>(i);
    const int64_t tokens = 2 + (k * 37 % 300);
    raw->tokens_per_sample.push_back(tokens);
    if (!with_first_token) continue;
    const int64_t ttft = lat[i] / 5 + (k * 13 % 17) * 1000;
    raw->first_token_latencies_ns.push_back(ttft);
    raw->time_per_output_token_ns.push_back((lat[i] - ttft) / (tokens - 1));
  }
}

bool array_matches(const std::vector<int64_t>& v, size_t length, int64_t sum, std::initializer_list<int64_t> ends) {
  if (v.size() != length) return false;
  if (length == 0) return ends.size() == 0;
  int64_t total = 0;
  for (int64_t x : v) total += x;
  const std::vector<int64_t> e(ends);
  return total == sum && e.size() == 4 && v[0] == e[0] && v[1] == e[1] && v[2] == e[2] && v.back() == e[3];
}

bool percentiles_match(const PercentileLatency (&p)[6], std::initializer_list<int64_t> sample,
                       std::initializer_list<int64_t> query) {
  const std::vector<int64_t> s(sample), q(query);
  bool ok = true;
  for (int i = 0; i < 6; ++i) {
    ok = ok && p[i].percentile == kReportedPercentiles[i] && p[i].sample_latency == s[static_cast<size_t>(i)] &&
         p[i].query_latency == q[static_cast<size_t>(i)];
  }
  return ok;
}

bool flags_match(const PerformanceSummary& s, bool duration, bool queries, bool samples, bool perf, bool early,
                 bool valid) {
  return s.min_duration_met == duration && s.min_queries_met == queries && s.min_samples_met == samples &&
         s.perf_constraints_met == perf && s.early_stopping_met == early && s.result_valid == valid;
}

bool entries_match(const Entries& got, const Entries& expected) {
  bool ok = got.size() == expected.size();
  for (size_t i = 0; i < std::min(got.size(), expected.size()); ++i) {
    if (got[i] != expected[i]) {
      std::cerr << "  detail entry " << i << ": got {" << got[i].first << ", " << got[i].second << "} expected {"
                << expected[i].first << ", " << expected[i].second << "}\n";
      ok = false;
    }
  }
  return ok;
}

// The golden cases' effective settings share these values; each case sets the rest.
EffectiveSettings base_effective(Scenario scenario) {
  EffectiveSettings e;
  e.scenario = scenario;
  e.mode = Mode::PerformanceOnly;
  e.samples_per_query = 1;
  e.target_qps = 1000;
  e.target_latency_ns = 0;
  e.max_async_queries = 1;
  e.max_duration_ms = 0;
  e.min_query_count = 100;
  e.max_query_count = 0;
  e.min_sample_count = 100;
  e.performance_sample_count = 1024;
  e.accuracy_sample_count = 1024;
  e.server_ttft_latency = 100000000;
  e.server_tpot_latency = 100000000;
  return e;
}

}  // namespace

// golden/results_math.json "ss_valid_p90": SingleStream, 5000 queries, 90th percentile, valid run
TEST(results_golden_ss_valid_p90) {
  const Formula formula{1000000, 7919, 0, 1000, 1000, 97, 30000000};
  SeriesResult raw;
  raw.sample_latencies_ns = generate_latencies(formula, 5000);
  CHECK(array_matches(raw.sample_latencies_ns, 5000, 9057500000, {31000000, 1919000, 1838000, 1081000}));
  raw.queries_issued = 5000;
  raw.max_latency_s = 0.031864;
  raw.final_query_scheduled_time_s = 9.066417;
  raw.final_query_issued_time_s = 9.066417;
  raw.final_query_all_samples_done_time_s = 9.067498;

  EffectiveSettings e = base_effective(Scenario::SingleStream);
  e.target_latency_percentile = 0.9;
  e.target_duration_ms = 5000;
  e.min_duration_ms = 5000;
  const PerformanceSummary s = summarize(e, "GoldenSUT", raw);

  CHECK_EQ(s.sample_count, uint64_t(5000));
  CHECK_EQ(s.query_count, uint64_t(5000));
  CHECK_EQ(s.overlatency_query_count, uint64_t(0));
  CHECK_EQ(s.sample_latency_min, int64_t(1000000));
  CHECK_EQ(s.sample_latency_max, int64_t(31864000));
  CHECK_EQ(s.sample_latency_mean, int64_t(1811500));
  CHECK_EQ(s.query_latency_min, int64_t(0));
  CHECK_EQ(s.query_latency_max, int64_t(0));
  CHECK_EQ(s.query_latency_mean, int64_t(0));
  CHECK_EQ(s.target_latency_percentile.sample_latency, int64_t(1910000));
  CHECK_EQ(s.target_latency_percentile.query_latency, int64_t(0));
  CHECK(percentiles_match(s.latency_percentiles, {1506000, 1910000, 1960000, 1980000, 31002000, 31860000}, {0, 0, 0, 0, 0, 0}));
  CHECK_EQ(s.early_stopping_latency_ss, int64_t(1920000));
  CHECK_EQ(s.early_stopping_latency_ms, int64_t(31289000));
  CHECK(flags_match(s, true, true, true, true, true, true));
  CHECK_EQ(s.early_stopping_recommendation, std::string(" * Processed at least 64 queries (5000).\n * Would discard 449 highest latency queries.\n * Early stopping 90.0th percentile estimate: 1920000\n * Early stopping 99.0th percentile estimate: 31289000"));
  CHECK_EQ(s.early_stopping_ttft_recommendation, std::string(""));
  CHECK_EQ(s.early_stopping_tpot_recommendation, std::string(""));
  CHECK_EQ(s.min_duration_recommendation, std::string(""));
  CHECK_EQ(s.perf_constraints_recommendation, std::string(""));
  CHECK_EQ(s.qps_with_loadgen_overhead, 551.3754772144277);
  CHECK_EQ(s.qps_without_loadgen_overhead, 552.0287054926856);

  CHECK_EQ(format_summary_results(s, Mode::PerformanceOnly) + format_summary_footer(0, 0), std::string(R"txt(================================================
MLPerf Results Summary
================================================
SUT name : GoldenSUT
Scenario : SingleStream
Mode     : PerformanceOnly
90.0th percentile latency (ns) : 1910000
Result is : VALID
  Min duration satisfied : Yes
  Min queries satisfied : Yes
  Early stopping satisfied: Yes
Early Stopping Result:
 * Processed at least 64 queries (5000).
 * Would discard 449 highest latency queries.
 * Early stopping 90.0th percentile estimate: 1920000
 * Early stopping 99.0th percentile estimate: 31289000

================================================
Additional Stats
================================================
QPS w/ loadgen overhead         : 551.38
QPS w/o loadgen overhead        : 552.03

Min latency (ns)                : 1000000
Max latency (ns)                : 31864000
Mean latency (ns)               : 1811500
50.00 percentile latency (ns)   : 1506000
90.00 percentile latency (ns)   : 1910000
95.00 percentile latency (ns)   : 1960000
97.00 percentile latency (ns)   : 1980000
99.00 percentile latency (ns)   : 31002000
99.90 percentile latency (ns)   : 31860000

================================================
Test Parameters Used
================================================
samples_per_query : 1
target_qps : 1000
target_latency (ns): 0
max_async_queries : 1
min_duration (ms): 5000
max_duration (ms): 0
min_query_count : 100
max_query_count : 0
qsl_rng_seed : 0
sample_index_rng_seed : 0
schedule_rng_seed : 0
accuracy_log_rng_seed : 0
accuracy_log_probability : 0
accuracy_log_sampling_target : 0
print_timestamps : 0
performance_issue_unique : 0
performance_issue_same : 0
performance_issue_same_index : 0
performance_sample_count : 1024
accuracy_sample_count : 1024

No warnings encountered during test.

No errors encountered during test.
)txt"));

  const Entries expected_detail = {
      {"result_validity", R"("VALID")"},
      {"result_min_duration_met", R"(true)"},
      {"result_min_queries_met", R"(true)"},
      {"early_stopping_met", R"(true)"},
      {"early_stopping_result", R"(" * Processed at least 64 queries (5000).  * Would discard 449 highest latency queries.  * Early stopping 90.0th percentile estimate: 1920000  * Early stopping 99.0th percentile estimate: 31289000")"},
      {"result_query_count", R"(5000)"},
      {"result_qps_with_loadgen_overhead", R"(551.375)"},
      {"result_qps_without_loadgen_overhead", R"(552.029)"},
      {"early_stopping_latency_ss", R"(1920000)"},
      {"early_stopping_latency_ms", R"(31289000)"},
      {"result_min_latency_ns", R"(1000000)"},
      {"result_max_latency_ns", R"(31864000)"},
      {"result_mean_latency_ns", R"(1811500)"},
      {"result_50.00_percentile_latency_ns", R"(1506000)"},
      {"result_90.00_percentile_latency_ns", R"(1910000)"},
      {"result_95.00_percentile_latency_ns", R"(1960000)"},
      {"result_97.00_percentile_latency_ns", R"(1980000)"},
      {"result_99.00_percentile_latency_ns", R"(31002000)"},
      {"result_99.90_percentile_latency_ns", R"(31860000)"},
      {"num_errors", R"(0)"},
  };
  CHECK(entries_match(detail_result_entries(s, 0), expected_detail));
}

// golden/results_math.json "ms_spq8_p99": MultiStream, 8 samples/query, 700 queries, 99th percentile of query latency
TEST(results_golden_ms_spq8_p99) {
  const Formula formula{1000000, 7919, 0, 1000, 1000, 97, 30000000};
  SeriesResult raw;
  raw.sample_latencies_ns = generate_latencies(formula, 5600);
  CHECK(array_matches(raw.sample_latencies_ns, 5600, 10137800000, {31000000, 1919000, 1838000, 1481000}));
  raw.query_latencies_ns = query_maxima(raw.sample_latencies_ns, 8);
  CHECK(array_matches(raw.query_latencies_ns, 700, 3030879000, {31000000, 1947000, 1704000, 1967000}));
  raw.queries_issued = 700;
  raw.max_latency_s = 0.031865;
  raw.final_query_scheduled_time_s = 3.031009;
  raw.final_query_issued_time_s = 3.031009;
  raw.final_query_all_samples_done_time_s = 3.032976;

  EffectiveSettings e = base_effective(Scenario::MultiStream);
  e.samples_per_query = 8;
  e.target_qps = 125;
  e.target_latency_percentile = 0.99;
  e.target_duration_ms = 1000;
  e.min_duration_ms = 1000;
  e.min_query_count = 662;
  e.min_sample_count = 5296;
  const PerformanceSummary s = summarize(e, "GoldenSUT", raw);

  CHECK_EQ(s.sample_count, uint64_t(5600));
  CHECK_EQ(s.query_count, uint64_t(700));
  CHECK_EQ(s.overlatency_query_count, uint64_t(0));
  CHECK_EQ(s.sample_latency_min, int64_t(1000000));
  CHECK_EQ(s.sample_latency_max, int64_t(31865000));
  CHECK_EQ(s.sample_latency_mean, int64_t(1810321));
  CHECK_EQ(s.query_latency_min, int64_t(1568000));
  CHECK_EQ(s.query_latency_max, int64_t(31865000));
  CHECK_EQ(s.query_latency_mean, int64_t(4329827));
  CHECK_EQ(s.target_latency_percentile.sample_latency, int64_t(31002000));
  CHECK_EQ(s.target_latency_percentile.query_latency, int64_t(31859000));
  CHECK(percentiles_match(s.latency_percentiles, {1506000, 1910000, 1960000, 1980000, 31002000, 31860000}, {1943000, 1997000, 31291000, 31575000, 31859000, 31865000}));
  CHECK_EQ(s.early_stopping_latency_ss, int64_t(0));
  CHECK_EQ(s.early_stopping_latency_ms, int64_t(31865000));
  CHECK(flags_match(s, true, true, true, true, true, true));
  CHECK_EQ(s.early_stopping_recommendation, std::string(" * Processed at least 662 queries (700).\n * Would discard 0 highest latency queries.\n * Early stopping 99.0th percentile estimate: 31865000"));
  CHECK_EQ(s.early_stopping_ttft_recommendation, std::string(""));
  CHECK_EQ(s.early_stopping_tpot_recommendation, std::string(""));
  CHECK_EQ(s.min_duration_recommendation, std::string(""));
  CHECK_EQ(s.perf_constraints_recommendation, std::string(""));

  CHECK_EQ(format_summary_results(s, Mode::PerformanceOnly) + format_summary_footer(0, 0), std::string(R"txt(================================================
MLPerf Results Summary
================================================
SUT name : GoldenSUT
Scenario : MultiStream
Mode     : PerformanceOnly
99.0th percentile latency (ns) : 31859000
Result is : VALID
  Min duration satisfied : Yes
  Min queries satisfied : Yes
  Early stopping satisfied: Yes
Early Stopping Result:
 * Processed at least 662 queries (700).
 * Would discard 0 highest latency queries.
 * Early stopping 99.0th percentile estimate: 31865000

================================================
Additional Stats
================================================
Per-query latency:  
Min latency (ns)                : 1568000
Max latency (ns)                : 31865000
Mean latency (ns)               : 4329827
50.00 percentile latency (ns)   : 1943000
90.00 percentile latency (ns)   : 1997000
95.00 percentile latency (ns)   : 31291000
97.00 percentile latency (ns)   : 31575000
99.00 percentile latency (ns)   : 31859000
99.90 percentile latency (ns)   : 31865000

================================================
Test Parameters Used
================================================
samples_per_query : 8
target_qps : 125
target_latency (ns): 0
max_async_queries : 1
min_duration (ms): 1000
max_duration (ms): 0
min_query_count : 662
max_query_count : 0
qsl_rng_seed : 0
sample_index_rng_seed : 0
schedule_rng_seed : 0
accuracy_log_rng_seed : 0
accuracy_log_probability : 0
accuracy_log_sampling_target : 0
print_timestamps : 0
performance_issue_unique : 0
performance_issue_same : 0
performance_issue_same_index : 0
performance_sample_count : 1024
accuracy_sample_count : 1024

No warnings encountered during test.

No errors encountered during test.
)txt"));

  const Entries expected_detail = {
      {"result_validity", R"("VALID")"},
      {"result_min_duration_met", R"(true)"},
      {"result_min_queries_met", R"(true)"},
      {"early_stopping_met", R"(true)"},
      {"early_stopping_result", R"(" * Processed at least 662 queries (700).  * Would discard 0 highest latency queries.  * Early stopping 99.0th percentile estimate: 31865000")"},
      {"result_query_count", R"(700)"},
      {"result_min_query_latency_ns", R"(1568000)"},
      {"result_max_query_latency_ns", R"(31865000)"},
      {"result_mean_query_latency_ns", R"(4329827)"},
      {"result_50.00_percentile_per_query_latency_ns", R"(1943000)"},
      {"result_90.00_percentile_per_query_latency_ns", R"(1997000)"},
      {"result_95.00_percentile_per_query_latency_ns", R"(31291000)"},
      {"result_97.00_percentile_per_query_latency_ns", R"(31575000)"},
      {"result_99.00_percentile_per_query_latency_ns", R"(31859000)"},
      {"result_99.90_percentile_per_query_latency_ns", R"(31865000)"},
      {"early_stopping_latency_ms", R"(31865000)"},
      {"result_min_latency_ns", R"(1000000)"},
      {"result_max_latency_ns", R"(31865000)"},
      {"result_mean_latency_ns", R"(1810321)"},
      {"result_50.00_percentile_latency_ns", R"(1506000)"},
      {"result_90.00_percentile_latency_ns", R"(1910000)"},
      {"result_95.00_percentile_latency_ns", R"(1960000)"},
      {"result_97.00_percentile_latency_ns", R"(1980000)"},
      {"result_99.00_percentile_latency_ns", R"(31002000)"},
      {"result_99.90_percentile_latency_ns", R"(31860000)"},
      {"num_errors", R"(0)"},
  };
  CHECK(entries_match(detail_result_entries(s, 0), expected_detail));
}

// golden/results_math.json "server_invalid": Server, 3000 queries, 1.5 ms target: many over-latency queries
TEST(results_golden_server_invalid) {
  const Formula formula{1000000, 7919, 0, 1000, 1000, 97, 30000000};
  SeriesResult raw;
  raw.sample_latencies_ns = generate_latencies(formula, 3000);
  CHECK(array_matches(raw.sample_latencies_ns, 3000, 5428500000, {31000000, 1919000, 1838000, 1081000}));
  raw.queries_issued = 3000;
  raw.max_latency_s = 0.031861;
  raw.final_query_scheduled_time_s = 29.99;
  raw.final_query_issued_time_s = 29.990005;
  raw.final_query_all_samples_done_time_s = 29.991081;

  EffectiveSettings e = base_effective(Scenario::Server);
  e.target_qps = 100;
  e.target_latency_ns = 1500000;
  e.target_latency_percentile = 0.99;
  e.max_async_queries = 0;
  e.target_duration_ms = 10000;
  e.min_duration_ms = 10000;
  const PerformanceSummary s = summarize(e, "GoldenSUT", raw);

  CHECK_EQ(s.sample_count, uint64_t(3000));
  CHECK_EQ(s.query_count, uint64_t(3000));
  CHECK_EQ(s.overlatency_query_count, uint64_t(1516));
  CHECK_EQ(s.sample_latency_min, int64_t(1000000));
  CHECK_EQ(s.sample_latency_max, int64_t(31861000));
  CHECK_EQ(s.sample_latency_mean, int64_t(1809500));
  CHECK_EQ(s.query_latency_min, int64_t(0));
  CHECK_EQ(s.query_latency_max, int64_t(0));
  CHECK_EQ(s.query_latency_mean, int64_t(0));
  CHECK_EQ(s.target_latency_percentile.sample_latency, int64_t(31001000));
  CHECK_EQ(s.target_latency_percentile.query_latency, int64_t(0));
  CHECK(percentiles_match(s.latency_percentiles, {1506000, 1910000, 1960000, 1980000, 31001000, 31859000}, {0, 0, 0, 0, 0, 0}));
  CHECK_EQ(s.early_stopping_latency_ss, int64_t(0));
  CHECK_EQ(s.early_stopping_latency_ms, int64_t(0));
  CHECK(flags_match(s, true, true, true, false, false, false));
  CHECK_EQ(s.early_stopping_recommendation, std::string(" * Run unsuccessful.\n * Processed 3000 queries.\n * Would need to run at least 157861 more queries,\n with the run being successful if every additional\n query were under latency."));
  CHECK_EQ(s.early_stopping_ttft_recommendation, std::string(""));
  CHECK_EQ(s.early_stopping_tpot_recommendation, std::string(""));
  CHECK_EQ(s.min_duration_recommendation, std::string(""));
  CHECK_EQ(s.perf_constraints_recommendation, std::string("Reduce target QPS to improve latency."));
  CHECK_EQ(s.scheduled_samples_per_sec, 100.0);
  CHECK_EQ(s.completed_samples_per_sec, 99.99639559507708);

  CHECK_EQ(format_summary_results(s, Mode::PerformanceOnly) + format_summary_footer(0, 0), std::string(R"txt(================================================
MLPerf Results Summary
================================================
SUT name : GoldenSUT
Scenario : Server
Mode     : PerformanceOnly
Completed samples per second    : 100.00
Result is : INVALID
  Performance constraints satisfied : NO
  Min duration satisfied : Yes
  Min queries satisfied : Yes
  Early stopping satisfied: NO
Recommendations:
 * Reduce target QPS to improve latency.
Early Stopping Result:
 * Run unsuccessful.
 * Processed 3000 queries.
 * Would need to run at least 157861 more queries,
 with the run being successful if every additional
 query were under latency.

================================================
Additional Stats
================================================
Scheduled samples per second : 100.00
Min latency (ns)                : 1000000
Max latency (ns)                : 31861000
Mean latency (ns)               : 1809500
50.00 percentile latency (ns)   : 1506000
90.00 percentile latency (ns)   : 1910000
95.00 percentile latency (ns)   : 1960000
97.00 percentile latency (ns)   : 1980000
99.00 percentile latency (ns)   : 31001000
99.90 percentile latency (ns)   : 31859000

================================================
Test Parameters Used
================================================
samples_per_query : 1
target_qps : 100
target_latency (ns): 1500000
max_async_queries : 0
min_duration (ms): 10000
max_duration (ms): 0
min_query_count : 100
max_query_count : 0
qsl_rng_seed : 0
sample_index_rng_seed : 0
schedule_rng_seed : 0
accuracy_log_rng_seed : 0
accuracy_log_probability : 0
accuracy_log_sampling_target : 0
print_timestamps : 0
performance_issue_unique : 0
performance_issue_same : 0
performance_issue_same_index : 0
performance_sample_count : 1024
accuracy_sample_count : 1024

No warnings encountered during test.

No errors encountered during test.
)txt"));

  const Entries expected_detail = {
      {"result_validity", R"("INVALID")"},
      {"result_perf_constraints_met", R"(false)"},
      {"result_min_duration_met", R"(true)"},
      {"result_min_queries_met", R"(true)"},
      {"early_stopping_met", R"(false)"},
      {"result_invalid_reason", R"("Reduce target QPS to improve latency. ")"},
      {"early_stopping_result", R"(" * Run unsuccessful.  * Processed 3000 queries.  * Would need to run at least 157861 more queries,  with the run being successful if every additional  query were under latency.")"},
      {"result_query_count", R"(3000)"},
      {"result_overlatency_query_count", R"(1516)"},
      {"result_scheduled_samples_per_sec", R"(100)"},
      {"result_completed_samples_per_sec", R"(99.9964)"},
      {"result_min_latency_ns", R"(1000000)"},
      {"result_max_latency_ns", R"(31861000)"},
      {"result_mean_latency_ns", R"(1809500)"},
      {"result_50.00_percentile_latency_ns", R"(1506000)"},
      {"result_90.00_percentile_latency_ns", R"(1910000)"},
      {"result_95.00_percentile_latency_ns", R"(1960000)"},
      {"result_97.00_percentile_latency_ns", R"(1980000)"},
      {"result_99.00_percentile_latency_ns", R"(31001000)"},
      {"result_99.90_percentile_latency_ns", R"(31859000)"},
      {"num_errors", R"(0)"},
  };
  CHECK(entries_match(detail_result_entries(s, 0), expected_detail));
}

// golden/results_math.json "server_tokens": Server with use_token_latencies (TTFT 2 ms, TPOT 0.2 ms targets)
TEST(results_golden_server_tokens) {
  const Formula formula{1000000, 7919, 0, 1000, 1000, 97, 30000000};
  SeriesResult raw;
  raw.sample_latencies_ns = generate_latencies(formula, 2000);
  CHECK(array_matches(raw.sample_latencies_ns, 2000, 3629000000, {31000000, 1919000, 1838000, 1081000}));
  apply_token_rule(&raw, true);
  CHECK(array_matches(raw.tokens_per_sample, 2000, 302900, {2, 39, 76, 165}));
  CHECK(array_matches(raw.first_token_latencies_ns, 2000, 741798000, {6200000, 396800, 376600, 227200}));
  CHECK(array_matches(raw.time_per_output_token_ns, 2000, 76667592, {24800000, 40057, 19485, 5206}));
  raw.queries_issued = 2000;
  raw.max_latency_s = 0.03186;
  raw.final_query_scheduled_time_s = 199.9;
  raw.final_query_issued_time_s = 199.900005;
  raw.final_query_all_samples_done_time_s = 199.901081;

  EffectiveSettings e = base_effective(Scenario::Server);
  e.target_qps = 10;
  e.target_latency_percentile = 0.99;
  e.max_async_queries = 0;
  e.target_duration_ms = 1000;
  e.min_duration_ms = 1000;
  e.use_token_latencies = true;
  e.server_ttft_latency = 2000000;
  e.server_tpot_latency = 200000;
  const PerformanceSummary s = summarize(e, "GoldenSUT", raw);

  CHECK_EQ(s.sample_count, uint64_t(2000));
  CHECK_EQ(s.query_count, uint64_t(2000));
  CHECK_EQ(s.overlatency_query_count, uint64_t(2000));
  CHECK_EQ(s.sample_latency_min, int64_t(1000000));
  CHECK_EQ(s.sample_latency_max, int64_t(31860000));
  CHECK_EQ(s.sample_latency_mean, int64_t(1814500));
  CHECK_EQ(s.query_latency_min, int64_t(0));
  CHECK_EQ(s.query_latency_max, int64_t(0));
  CHECK_EQ(s.query_latency_mean, int64_t(0));
  CHECK_EQ(s.target_latency_percentile.sample_latency, int64_t(31001000));
  CHECK_EQ(s.target_latency_percentile.query_latency, int64_t(0));
  CHECK(percentiles_match(s.latency_percentiles, {1506000, 1910000, 1960000, 1980000, 31001000, 31859000}, {0, 0, 0, 0, 0, 0}));
  CHECK_EQ(s.early_stopping_latency_ss, int64_t(0));
  CHECK_EQ(s.early_stopping_latency_ms, int64_t(0));
  CHECK(flags_match(s, true, true, true, false, false, false));
  CHECK_EQ(s.early_stopping_recommendation, std::string(""));
  CHECK_EQ(s.early_stopping_ttft_recommendation, std::string(""));
  CHECK_EQ(s.early_stopping_tpot_recommendation, std::string(" * Run unsuccessful.\n * Processed 2000 queries.\n * Would need to run at least 3962 more queries,\n with the run being successful if every additional\n query were under latency."));
  CHECK_EQ(s.min_duration_recommendation, std::string(""));
  CHECK_EQ(s.perf_constraints_recommendation, std::string("TTFT constrain not met: Reduce target QPS to improve latency.\n * TPOT constrain not met: Reduce target QPS to improve latency."));
  CHECK_EQ(s.scheduled_samples_per_sec, 10.0);
  CHECK_EQ(s.completed_samples_per_sec, 9.999945923253911);
  CHECK_EQ(s.token_count, int64_t(302900));
  CHECK_EQ(s.overlatency_first_token_count, uint64_t(2000));
  CHECK_EQ(s.first_token_latency_min, int64_t(200600));
  CHECK_EQ(s.first_token_latency_max, int64_t(6381000));
  CHECK_EQ(s.first_token_latency_mean, int64_t(370899));
  CHECK_EQ(s.time_per_output_token_min, int64_t(2678));
  CHECK_EQ(s.time_per_output_token_max, int64_t(24800000));
  CHECK_EQ(s.time_per_output_token_mean, int64_t(38333));
  CHECK_EQ(s.token_target_latency_percentile.sample_latency, int64_t(6204200));
  CHECK_EQ(s.target_tpot_percentile.sample_latency, int64_t(365733));
  CHECK(percentiles_match(s.token_latency_percentiles, {309200, 390200, 399800, 405000, 6204200, 6376800}, {0, 0, 0, 0, 0, 0}));
  CHECK(percentiles_match(s.tpot_percentiles, {8074, 43677, 92272, 149644, 365733, 1429000}, {0, 0, 0, 0, 0, 0}));

  CHECK_EQ(format_summary_results(s, Mode::PerformanceOnly) + format_summary_footer(0, 0), std::string(R"txt(================================================
MLPerf Results Summary
================================================
SUT name : GoldenSUT
Scenario : Server
Mode     : PerformanceOnly
Completed samples per second    : 10.00
Completed tokens per second: 1515.25
Result is : INVALID
  Performance constraints satisfied : NO
  Min duration satisfied : Yes
  Min queries satisfied : Yes
  Early stopping satisfied: NO
Recommendations:
 * TTFT constrain not met: Reduce target QPS to improve latency.
 * TPOT constrain not met: Reduce target QPS to improve latency.
TTFT Early Stopping Result:

TPOT Early Stopping Result:
 * Run unsuccessful.
 * Processed 2000 queries.
 * Would need to run at least 3962 more queries,
 with the run being successful if every additional
 query were under latency.

================================================
Additional Stats
================================================
Scheduled samples per second : 10.00
Min latency (ns)                : 1000000
Max latency (ns)                : 31860000
Mean latency (ns)               : 1814500
50.00 percentile latency (ns)   : 1506000
90.00 percentile latency (ns)   : 1910000
95.00 percentile latency (ns)   : 1960000
97.00 percentile latency (ns)   : 1980000
99.00 percentile latency (ns)   : 31001000
99.90 percentile latency (ns)   : 31859000

Completed tokens per second                 : 1515.25
Min First Token latency (ns)                : 200600
Max First Token latency (ns)                : 6381000
Mean First Token latency (ns)               : 370899
50.00 percentile first token latency (ns)   : 309200
90.00 percentile first token latency (ns)   : 390200
95.00 percentile first token latency (ns)   : 399800
97.00 percentile first token latency (ns)   : 405000
99.00 percentile first token latency (ns)   : 6204200
99.90 percentile first token latency (ns)   : 6376800

Min Time per Output Token (ns)                : 2678
Max Time per Output Token (ns)                : 24800000
Mean Time per Output Token (ns)               : 38333
50.00 percentile time to output token (ns)   : 8074
90.00 percentile time to output token (ns)   : 43677
95.00 percentile time to output token (ns)   : 92272
97.00 percentile time to output token (ns)   : 149644
99.00 percentile time to output token (ns)   : 365733
99.90 percentile time to output token (ns)   : 1429000

================================================
Test Parameters Used
================================================
samples_per_query : 1
target_qps : 10
ttft_latency (ns): 2000000
tpot_latency (ns): 200000
max_async_queries : 0
min_duration (ms): 1000
max_duration (ms): 0
min_query_count : 100
max_query_count : 0
qsl_rng_seed : 0
sample_index_rng_seed : 0
schedule_rng_seed : 0
accuracy_log_rng_seed : 0
accuracy_log_probability : 0
accuracy_log_sampling_target : 0
print_timestamps : 0
performance_issue_unique : 0
performance_issue_same : 0
performance_issue_same_index : 0
performance_sample_count : 1024
accuracy_sample_count : 1024

No warnings encountered during test.

No errors encountered during test.
)txt"));

  const Entries expected_detail = {
      {"result_validity", R"("INVALID")"},
      {"result_perf_constraints_met", R"(false)"},
      {"result_min_duration_met", R"(true)"},
      {"result_min_queries_met", R"(true)"},
      {"early_stopping_met", R"(false)"},
      {"result_invalid_reason", R"("TTFT constrain not met: Reduce target QPS to improve latency.  * TPOT constrain not met: Reduce target QPS to improve latency. ")"},
      {"early_stopping_ttft_result", R"("")"},
      {"early_stopping_tpot_result", R"(" * Run unsuccessful.  * Processed 2000 queries.  * Would need to run at least 3962 more queries,  with the run being successful if every additional  query were under latency.")"},
      {"result_query_count", R"(2000)"},
      {"result_overlatency_query_count", R"(2000)"},
      {"result_scheduled_samples_per_sec", R"(10)"},
      {"result_completed_samples_per_sec", R"(9.99995)"},
      {"result_min_latency_ns", R"(1000000)"},
      {"result_max_latency_ns", R"(31860000)"},
      {"result_mean_latency_ns", R"(1814500)"},
      {"result_50.00_percentile_latency_ns", R"(1506000)"},
      {"result_90.00_percentile_latency_ns", R"(1910000)"},
      {"result_95.00_percentile_latency_ns", R"(1960000)"},
      {"result_97.00_percentile_latency_ns", R"(1980000)"},
      {"result_99.00_percentile_latency_ns", R"(31001000)"},
      {"result_99.90_percentile_latency_ns", R"(31859000)"},
      {"result_first_token_min_latency_ns", R"(200600)"},
      {"result_first_token_max_latency_ns", R"(6381000)"},
      {"result_first_token_mean_latency_ns", R"(370899)"},
      {"result_first_token_50.00_percentile_latency_ns", R"(309200)"},
      {"result_first_token_90.00_percentile_latency_ns", R"(390200)"},
      {"result_first_token_95.00_percentile_latency_ns", R"(399800)"},
      {"result_first_token_97.00_percentile_latency_ns", R"(405000)"},
      {"result_first_token_99.00_percentile_latency_ns", R"(6204200)"},
      {"result_first_token_99.90_percentile_latency_ns", R"(6376800)"},
      {"result_token_throughput_with_loadgen_overhead", R"(1515.26)"},
      {"result_token_throughput", R"(8.34665e-05)"},
      {"result_time_per_output_token_50.00_percentile_ns", R"(8074)"},
      {"result_time_per_output_token_90.00_percentile_ns", R"(43677)"},
      {"result_time_per_output_token_95.00_percentile_ns", R"(92272)"},
      {"result_time_per_output_token_97.00_percentile_ns", R"(149644)"},
      {"result_time_per_output_token_99.00_percentile_ns", R"(365733)"},
      {"result_time_per_output_token_99.90_percentile_ns", R"(1429000)"},
      {"result_time_to_output_token_min", R"(2678)"},
      {"result_time_to_output_token_max", R"(24800000)"},
      {"result_time_to_output_token_mean", R"(38333)"},
      {"result_completed_tokens_per_second", R"(1515.25)"},
      {"num_errors", R"(0)"},
  };
  CHECK(entries_match(detail_result_entries(s, 0), expected_detail));
}

// golden/results_math.json "offline_min_duration_fail": Offline, min duration not met and min sample count not met
TEST(results_golden_offline_min_duration_fail) {
  const Formula formula{1000000, 7919, 0, 1000, 1000, 97, 30000000};
  SeriesResult raw;
  raw.sample_latencies_ns = generate_latencies(formula, 3000);
  CHECK(array_matches(raw.sample_latencies_ns, 3000, 5428500000, {31000000, 1919000, 1838000, 1081000}));
  raw.queries_issued = 1;
  raw.max_latency_s = 0.031861;
  raw.final_query_scheduled_time_s = 0.0;
  raw.final_query_issued_time_s = 1e-06;
  raw.final_query_all_samples_done_time_s = 0.031861;

  EffectiveSettings e = base_effective(Scenario::Offline);
  e.samples_per_query = 1100;
  e.target_latency_percentile = 0.99;
  e.target_duration_ms = 0;
  e.min_duration_ms = 1000;
  e.min_query_count = 1;
  e.min_sample_count = 1100;
  const PerformanceSummary s = summarize(e, "GoldenSUT", raw);

  CHECK_EQ(s.sample_count, uint64_t(3000));
  CHECK_EQ(s.query_count, uint64_t(1));
  CHECK_EQ(s.overlatency_query_count, uint64_t(0));
  CHECK_EQ(s.sample_latency_min, int64_t(1000000));
  CHECK_EQ(s.sample_latency_max, int64_t(31861000));
  CHECK_EQ(s.sample_latency_mean, int64_t(1809500));
  CHECK_EQ(s.query_latency_min, int64_t(0));
  CHECK_EQ(s.query_latency_max, int64_t(0));
  CHECK_EQ(s.query_latency_mean, int64_t(0));
  CHECK_EQ(s.target_latency_percentile.sample_latency, int64_t(31001000));
  CHECK_EQ(s.target_latency_percentile.query_latency, int64_t(0));
  CHECK(percentiles_match(s.latency_percentiles, {1506000, 1910000, 1960000, 1980000, 31001000, 31859000}, {0, 0, 0, 0, 0, 0}));
  CHECK_EQ(s.early_stopping_latency_ss, int64_t(0));
  CHECK_EQ(s.early_stopping_latency_ms, int64_t(0));
  CHECK(flags_match(s, false, true, true, true, true, false));
  CHECK_EQ(s.early_stopping_recommendation, std::string(""));
  CHECK_EQ(s.early_stopping_ttft_recommendation, std::string(""));
  CHECK_EQ(s.early_stopping_tpot_recommendation, std::string(""));
  CHECK_EQ(s.min_duration_recommendation, std::string("Increase expected QPS so the loadgen pre-generates a larger (coalesced) query."));
  CHECK_EQ(s.perf_constraints_recommendation, std::string(""));
  CHECK_EQ(s.samples_per_second, 94159.00317001977);

  CHECK_EQ(format_summary_results(s, Mode::PerformanceOnly) + format_summary_footer(0, 0), std::string(R"txt(================================================
MLPerf Results Summary
================================================
SUT name : GoldenSUT
Scenario : Offline
Mode     : PerformanceOnly
Samples per second: 94159
Result is : INVALID
  Min duration satisfied : NO
  Min queries satisfied : Yes
  Early stopping satisfied: Yes
Recommendations:
 * Increase expected QPS so the loadgen pre-generates a larger (coalesced) query.

================================================
Additional Stats
================================================
Min latency (ns)                : 1000000
Max latency (ns)                : 31861000
Mean latency (ns)               : 1809500
50.00 percentile latency (ns)   : 1506000
90.00 percentile latency (ns)   : 1910000
95.00 percentile latency (ns)   : 1960000
97.00 percentile latency (ns)   : 1980000
99.00 percentile latency (ns)   : 31001000
99.90 percentile latency (ns)   : 31859000

================================================
Test Parameters Used
================================================
samples_per_query : 1100
target_qps : 1000
target_latency (ns): 0
max_async_queries : 1
min_duration (ms): 1000
max_duration (ms): 0
min_query_count : 1
max_query_count : 0
qsl_rng_seed : 0
sample_index_rng_seed : 0
schedule_rng_seed : 0
accuracy_log_rng_seed : 0
accuracy_log_probability : 0
accuracy_log_sampling_target : 0
print_timestamps : 0
performance_issue_unique : 0
performance_issue_same : 0
performance_issue_same_index : 0
performance_sample_count : 1024
accuracy_sample_count : 1024

No warnings encountered during test.

No errors encountered during test.
)txt"));

  const Entries expected_detail = {
      {"result_validity", R"("INVALID")"},
      {"result_min_duration_met", R"(false)"},
      {"result_min_queries_met", R"(true)"},
      {"early_stopping_met", R"(true)"},
      {"result_invalid_reason", R"("Increase expected QPS so the loadgen pre-generates a larger (coalesced) query. ")"},
      {"early_stopping_result", R"("")"},
      {"result_query_count", R"(1)"},
      {"result_samples_per_second", R"(94159)"},
      {"result_min_latency_ns", R"(1000000)"},
      {"result_max_latency_ns", R"(31861000)"},
      {"result_mean_latency_ns", R"(1809500)"},
      {"result_50.00_percentile_latency_ns", R"(1506000)"},
      {"result_90.00_percentile_latency_ns", R"(1910000)"},
      {"result_95.00_percentile_latency_ns", R"(1960000)"},
      {"result_97.00_percentile_latency_ns", R"(1980000)"},
      {"result_99.00_percentile_latency_ns", R"(31001000)"},
      {"result_99.90_percentile_latency_ns", R"(31859000)"},
      {"num_errors", R"(0)"},
  };
  CHECK(entries_match(detail_result_entries(s, 0), expected_detail));
}

// golden/results_math.json "ss_tokens": SingleStream with use_token_latencies
TEST(results_golden_ss_tokens) {
  const Formula formula{1000000, 7919, 0, 1000, 1000, 97, 30000000};
  SeriesResult raw;
  raw.sample_latencies_ns = generate_latencies(formula, 1500);
  CHECK(array_matches(raw.sample_latencies_ns, 1500, 2729750000, {31000000, 1919000, 1838000, 1581000}));
  apply_token_rule(&raw, true);
  CHECK(array_matches(raw.tokens_per_sample, 1500, 227250, {2, 39, 76, 265}));
  CHECK(array_matches(raw.first_token_latencies_ns, 1500, 557945000, {6200000, 396800, 376600, 321200}));
  CHECK(array_matches(raw.time_per_output_token_ns, 1500, 62813640, {24800000, 40057, 19485, 4771}));
  raw.queries_issued = 1500;
  raw.max_latency_s = 0.031859;
  raw.final_query_scheduled_time_s = 2.731167;
  raw.final_query_issued_time_s = 2.731167;
  raw.final_query_all_samples_done_time_s = 2.732748;

  EffectiveSettings e = base_effective(Scenario::SingleStream);
  e.target_latency_percentile = 0.9;
  e.target_duration_ms = 1000;
  e.min_duration_ms = 1000;
  e.use_token_latencies = true;
  const PerformanceSummary s = summarize(e, "GoldenSUT", raw);

  CHECK_EQ(s.sample_count, uint64_t(1500));
  CHECK_EQ(s.query_count, uint64_t(1500));
  CHECK_EQ(s.overlatency_query_count, uint64_t(0));
  CHECK_EQ(s.sample_latency_min, int64_t(1000000));
  CHECK_EQ(s.sample_latency_max, int64_t(31859000));
  CHECK_EQ(s.sample_latency_mean, int64_t(1819833));
  CHECK_EQ(s.query_latency_min, int64_t(0));
  CHECK_EQ(s.query_latency_max, int64_t(0));
  CHECK_EQ(s.query_latency_mean, int64_t(0));
  CHECK_EQ(s.target_latency_percentile.sample_latency, int64_t(1910000));
  CHECK_EQ(s.target_latency_percentile.query_latency, int64_t(0));
  CHECK(percentiles_match(s.latency_percentiles, {1508000, 1910000, 1959000, 1980000, 31001000, 31858000}, {0, 0, 0, 0, 0, 0}));
  CHECK_EQ(s.early_stopping_latency_ss, int64_t(393800));
  CHECK_EQ(s.early_stopping_latency_ms, int64_t(6326400));
  CHECK(flags_match(s, true, true, true, true, true, true));
  CHECK_EQ(s.early_stopping_recommendation, std::string(""));
  CHECK_EQ(s.early_stopping_ttft_recommendation, std::string(" * Processed at least 64 queries (1500).\n * Would discard 122 highest latency queries.\n * Early stopping 90.0th percentile estimate: 393800\n * Early stopping 99.0th percentile estimate: 6326400"));
  CHECK_EQ(s.early_stopping_tpot_recommendation, std::string(" * Processed at least 64 queries (1500).\n * Would discard 122 highest latency queries.\n * Early stopping 90.0th percentile estimate: 53376\n * Early stopping 99.0th percentile estimate: 750800"));
  CHECK_EQ(s.min_duration_recommendation, std::string(""));
  CHECK_EQ(s.perf_constraints_recommendation, std::string(""));
  CHECK_EQ(s.qps_with_loadgen_overhead, 548.8496309453066);
  CHECK_EQ(s.qps_without_loadgen_overhead, 549.5009706934648);
  CHECK_EQ(s.token_count, int64_t(227250));
  CHECK_EQ(s.overlatency_first_token_count, uint64_t(0));
  CHECK_EQ(s.first_token_latency_min, int64_t(200600));
  CHECK_EQ(s.first_token_latency_max, int64_t(6376800));
  CHECK_EQ(s.first_token_latency_mean, int64_t(371963));
  CHECK_EQ(s.time_per_output_token_min, int64_t(2678));
  CHECK_EQ(s.time_per_output_token_max, int64_t(24800000));
  CHECK_EQ(s.time_per_output_token_mean, int64_t(41875));
  CHECK_EQ(s.token_target_latency_percentile.sample_latency, int64_t(390400));
  CHECK_EQ(s.target_tpot_percentile.sample_latency, int64_t(43677));
  CHECK(percentiles_match(s.token_latency_percentiles, {309800, 390400, 399800, 405000, 6204200, 6372600}, {0, 0, 0, 0, 0, 0}));
  CHECK(percentiles_match(s.tpot_percentiles, {8083, 43677, 93784, 141940, 334733, 1429000}, {0, 0, 0, 0, 0, 0}));

  CHECK_EQ(format_summary_results(s, Mode::PerformanceOnly) + format_summary_footer(0, 0), std::string(R"txt(================================================
MLPerf Results Summary
================================================
SUT name : GoldenSUT
Scenario : SingleStream
Mode     : PerformanceOnly
90.0th percentile latency (ns) : 1910000
90.0th first token percentile latency (ns) : 390400
Result is : VALID
  Min duration satisfied : Yes
  Min queries satisfied : Yes
  Early stopping satisfied: Yes
TTFT Early Stopping Result:
 * Processed at least 64 queries (1500).
 * Would discard 122 highest latency queries.
 * Early stopping 90.0th percentile estimate: 393800
 * Early stopping 99.0th percentile estimate: 6326400
TPOT Early Stopping Result:
 * Processed at least 64 queries (1500).
 * Would discard 122 highest latency queries.
 * Early stopping 90.0th percentile estimate: 53376
 * Early stopping 99.0th percentile estimate: 750800

================================================
Additional Stats
================================================
QPS w/ loadgen overhead         : 548.85
QPS w/o loadgen overhead        : 549.50

Min latency (ns)                : 1000000
Max latency (ns)                : 31859000
Mean latency (ns)               : 1819833
50.00 percentile latency (ns)   : 1508000
90.00 percentile latency (ns)   : 1910000
95.00 percentile latency (ns)   : 1959000
97.00 percentile latency (ns)   : 1980000
99.00 percentile latency (ns)   : 31001000
99.90 percentile latency (ns)   : 31858000

TPS w/ loadgen overhead         : 83206.19
TPS w/o loadgen overhead        : 83249.40
Min First Token latency (ns)                : 200600
Max First Token latency (ns)                : 6376800
Mean First Token latency (ns)               : 371963
50.00 percentile first token latency (ns)   : 309800
90.00 percentile first token latency (ns)   : 390400
95.00 percentile first token latency (ns)   : 399800
97.00 percentile first token latency (ns)   : 405000
99.00 percentile first token latency (ns)   : 6204200
99.90 percentile first token latency (ns)   : 6372600

Min Time per Output Token (ns)                : 2678
Max Time per Output Token (ns)                : 24800000
Mean Time per Output Token (ns)               : 41875
50.00 percentile time to output token (ns)   : 8083
90.00 percentile time to output token (ns)   : 43677
95.00 percentile time to output token (ns)   : 93784
97.00 percentile time to output token (ns)   : 141940
99.00 percentile time to output token (ns)   : 334733
99.90 percentile time to output token (ns)   : 1429000

================================================
Test Parameters Used
================================================
samples_per_query : 1
target_qps : 1000
ttft_latency (ns): 100000000
tpot_latency (ns): 100000000
max_async_queries : 1
min_duration (ms): 1000
max_duration (ms): 0
min_query_count : 100
max_query_count : 0
qsl_rng_seed : 0
sample_index_rng_seed : 0
schedule_rng_seed : 0
accuracy_log_rng_seed : 0
accuracy_log_probability : 0
accuracy_log_sampling_target : 0
print_timestamps : 0
performance_issue_unique : 0
performance_issue_same : 0
performance_issue_same_index : 0
performance_sample_count : 1024
accuracy_sample_count : 1024

No warnings encountered during test.

No errors encountered during test.
)txt"));

  const Entries expected_detail = {
      {"result_validity", R"("VALID")"},
      {"result_min_duration_met", R"(true)"},
      {"result_min_queries_met", R"(true)"},
      {"early_stopping_met", R"(true)"},
      {"early_stopping_ttft_result", R"(" * Processed at least 64 queries (1500).  * Would discard 122 highest latency queries.  * Early stopping 90.0th percentile estimate: 393800  * Early stopping 99.0th percentile estimate: 6326400")"},
      {"early_stopping_tpot_result", R"(" * Processed at least 64 queries (1500).  * Would discard 122 highest latency queries.  * Early stopping 90.0th percentile estimate: 53376  * Early stopping 99.0th percentile estimate: 750800")"},
      {"result_query_count", R"(1500)"},
      {"result_qps_with_loadgen_overhead", R"(548.85)"},
      {"result_qps_without_loadgen_overhead", R"(549.501)"},
      {"early_stopping_latency_ss", R"(393800)"},
      {"early_stopping_latency_ms", R"(6326400)"},
      {"result_min_latency_ns", R"(1000000)"},
      {"result_max_latency_ns", R"(31859000)"},
      {"result_mean_latency_ns", R"(1819833)"},
      {"result_50.00_percentile_latency_ns", R"(1508000)"},
      {"result_90.00_percentile_latency_ns", R"(1910000)"},
      {"result_95.00_percentile_latency_ns", R"(1959000)"},
      {"result_97.00_percentile_latency_ns", R"(1980000)"},
      {"result_99.00_percentile_latency_ns", R"(31001000)"},
      {"result_99.90_percentile_latency_ns", R"(31858000)"},
      {"result_first_token_min_latency_ns", R"(200600)"},
      {"result_first_token_max_latency_ns", R"(6376800)"},
      {"result_first_token_mean_latency_ns", R"(371963)"},
      {"result_first_token_50.00_percentile_latency_ns", R"(309800)"},
      {"result_first_token_90.00_percentile_latency_ns", R"(390400)"},
      {"result_first_token_95.00_percentile_latency_ns", R"(399800)"},
      {"result_first_token_97.00_percentile_latency_ns", R"(405000)"},
      {"result_first_token_99.00_percentile_latency_ns", R"(6204200)"},
      {"result_first_token_99.90_percentile_latency_ns", R"(6372600)"},
      {"result_token_throughput_with_loadgen_overhead", R"(83206.2)"},
      {"result_token_throughput", R"(8.32494e-05)"},
      {"result_time_per_output_token_50.00_percentile_ns", R"(8083)"},
      {"result_time_per_output_token_90.00_percentile_ns", R"(43677)"},
      {"result_time_per_output_token_95.00_percentile_ns", R"(93784)"},
      {"result_time_per_output_token_97.00_percentile_ns", R"(141940)"},
      {"result_time_per_output_token_99.00_percentile_ns", R"(334733)"},
      {"result_time_per_output_token_99.90_percentile_ns", R"(1429000)"},
      {"result_time_to_output_token_min", R"(2678)"},
      {"result_time_to_output_token_max", R"(24800000)"},
      {"result_time_to_output_token_mean", R"(41875)"},
      {"result_completed_tokens_per_second", R"(83158.1)"},
      {"num_errors", R"(0)"},
  };
  CHECK(entries_match(detail_result_entries(s, 0), expected_detail));
}

TEST(results_multistream_per_query_line_has_two_trailing_spaces) {
  // Guards the raw-string expectation above against whitespace trimming.
  SeriesResult raw;
  raw.sample_latencies_ns = {5, 6, 7, 8};
  raw.query_latencies_ns = {6, 8};
  raw.queries_issued = 2;
  EffectiveSettings e = base_effective(Scenario::MultiStream);
  e.samples_per_query = 2;
  e.target_latency_percentile = 0.99;
  const PerformanceSummary s = summarize(e, "x", raw);
  CHECK(format_summary_results(s, Mode::PerformanceOnly).find("\nPer-query latency:  \nMin latency (ns)  ") !=
        std::string::npos);
  CHECK_EQ(s.query_latency_mean, int64_t(7));
  CHECK_EQ(s.target_latency_percentile.query_latency, int64_t(8));  // index size_t(2 * 0.99) = 1
}

TEST(results_empty_series_keeps_zero_stats) {
  SeriesResult raw;
  raw.queries_issued = 0;
  raw.final_query_issued_time_s = 1.0;
  EffectiveSettings e = base_effective(Scenario::SingleStream);
  e.target_latency_percentile = 0.9;
  const PerformanceSummary s = summarize(e, "x", raw);
  CHECK_EQ(s.sample_count, uint64_t(0));
  CHECK_EQ(s.query_count, uint64_t(0));  // set after the reference's early return
  CHECK_EQ(s.sample_latency_min, int64_t(0));
  CHECK_EQ(s.sample_latency_mean, int64_t(0));
  CHECK(!s.early_stopping_met);
  CHECK(!s.result_valid);
  // sample_count - 1 wraps to 2^64 - 1; a zero mean gives inf.
  CHECK_EQ(s.qps_with_loadgen_overhead, 18446744073709551615.0);
  CHECK(std::isinf(s.qps_without_loadgen_overhead));
  const std::string text = format_summary_results(s, Mode::PerformanceOnly);
  CHECK(text.find("QPS w/o loadgen overhead        : inf\n") != std::string::npos);
  CHECK(!detail_result_entries(s, 0).empty());

  // The other scenarios, with and without token arrays, must not crash either.
  for (Scenario sc : {Scenario::MultiStream, Scenario::Server, Scenario::Offline}) {
    EffectiveSettings t = base_effective(sc);
    t.target_latency_percentile = 0.99;
    t.use_token_latencies = true;
    SeriesResult r;
    r.queries_issued = 700;  // enough for an estimate, but no latencies to read
    const PerformanceSummary ts = summarize(t, "x", r);
    CHECK_EQ(ts.sample_count, uint64_t(0));
    CHECK(!format_summary_results(ts, Mode::PerformanceOnly).empty());
  }
}

TEST(results_missing_latencies_sort_first) {
  SeriesResult raw;
  raw.sample_latencies_ns = {300, kMissingLatency, 100, 200};
  raw.queries_issued = 4;
  EffectiveSettings e = base_effective(Scenario::Server);
  e.target_latency_ns = 150;
  e.target_latency_percentile = 0.5;
  const PerformanceSummary s = summarize(e, "x", raw);
  CHECK_EQ(s.sample_latency_min, kMissingLatency);
  CHECK_EQ(s.sample_latency_max, int64_t(300));
  CHECK_EQ(s.target_latency_percentile.sample_latency, int64_t(200));  // sorted INT64_MIN, 100, 200, 300; index 2
  CHECK_EQ(s.overlatency_query_count, uint64_t(2));
  // The reference divides the wrapped int64 sum by a size_t: unsigned division.
  const uint64_t sum = uint64_t(600) + static_cast<uint64_t>(kMissingLatency);
  CHECK_EQ(s.sample_latency_mean, static_cast<int64_t>(sum / 4));
}

TEST(results_server_token_recommendations) {
  SeriesResult raw;
  raw.sample_latencies_ns = {10, 10, 10, 10};
  raw.first_token_latencies_ns = {1, 1, 1, 1};
  raw.time_per_output_token_ns = {9, 9, 9, 9};
  raw.tokens_per_sample = {3, kMissingLatency, 4, 5};
  raw.queries_issued = 4;
  raw.final_query_scheduled_time_s = 100;
  EffectiveSettings e = base_effective(Scenario::Server);
  e.target_latency_percentile = 0.5;
  e.use_token_latencies = true;
  e.server_ttft_latency = 5;
  e.server_tpot_latency = 5;  // only TPOT fails
  const PerformanceSummary s = summarize(e, "x", raw);
  CHECK_EQ(s.token_count, int64_t(12));
  CHECK(!s.perf_constraints_met);
  CHECK_EQ(s.perf_constraints_recommendation, std::string("TPOT constrain not met: Reduce target QPS to improve latency."));
  // TPOT early stopping fails (4 over-latency), so TTFT is not evaluated.
  CHECK(!s.early_stopping_met);
  CHECK_EQ(s.early_stopping_ttft_recommendation, std::string(""));
  CHECK(s.early_stopping_tpot_recommendation.rfind(" * Run unsuccessful.\n", 0) == 0);
}

TEST(results_summary_parameters_and_footer) {
  SeriesResult raw;
  raw.sample_latencies_ns = {1000, 2000};
  raw.queries_issued = 1;
  raw.max_latency_s = 0.002;
  EffectiveSettings e = base_effective(Scenario::Offline);
  e.target_latency_percentile = 0.99;
  e.samples_per_query = 2;
  e.min_query_count = 1;
  e.min_sample_count = 2;
  e.target_qps = 1e6;
  e.qsl_rng_seed = 18446744073709551615ull;
  e.accuracy_log_probability = 0.5;
  e.print_timestamps = true;
  e.sample_concatenate_permutation = true;
  const PerformanceSummary s = summarize(e, "x", raw);
  const std::string text = format_summary_results(s, Mode::SubmissionRun);
  CHECK(text.find("Mode     : SubmissionRun\n") != std::string::npos);
  CHECK(text.find("Samples per second: 1000\n") != std::string::npos);
  CHECK(text.find("\ntarget_qps : 1e+06\n") != std::string::npos);
  CHECK(text.find("\nqsl_rng_seed : 18446744073709551615\n") != std::string::npos);
  CHECK(text.find("\naccuracy_log_probability : 0.5\n") != std::string::npos);
  CHECK(text.find("\nprint_timestamps : 1\n") != std::string::npos);
  const std::string warning =
      "accuracy_sample_count : 1024\n"
      "WARNING: sample_concatenate_permutation was set to true. \n"
      "Generated samples per query might be different as the one in the setting.\n"
      "Check the generated_samples_per_query line in the detailed log for the real\n"
      "samples_per_query value\n";
  CHECK(text.size() >= warning.size() && text.compare(text.size() - warning.size(), warning.size(), warning) == 0);

  CHECK_EQ(format_summary_footer(0, 0),
           std::string("\nNo warnings encountered during test.\n\nNo errors encountered during test.\n"));
  CHECK_EQ(format_summary_footer(1, 1),
           std::string("\n1 warning encountered. See detailed log.\n\n1 ERROR encountered. See detailed log.\n"));
  CHECK_EQ(format_summary_footer(3, 12),
           std::string("\n3 warnings encountered. See detailed log.\n\n12 ERRORS encountered. See detailed log.\n"));
  const Entries d = detail_result_entries(s, 7);
  CHECK(!d.empty() && d.back() == std::make_pair(std::string("num_errors"), std::string("7")));
}

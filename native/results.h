// Results of a performance series: statistics, validity checks, early
// stopping, and the summary/detail text (spec/40, spec/50 §3, §4.2).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "early_stopping.h"
#include "settings.h"

namespace loadgen {

constexpr int64_t kMissingLatency = std::numeric_limits<int64_t>::min();

// What one performance series produced (spec/40 §1). Times in seconds are
// double(ns) / 1e9 relative to the start of issuing.
struct SeriesResult {
  std::vector<int64_t> sample_latencies_ns;  // sample-id order; kMissingLatency = never completed
  std::vector<int64_t> query_latencies_ns;   // MultiStream only, query order
  uint64_t queries_issued = 0;
  // Samples issued (min sample count is judged on them); 0: the size of
  // sample_latencies_ns, which in the reference holds every issued sample.
  uint64_t samples_issued = 0;
  double max_latency_s = 0;
  double final_query_scheduled_time_s = 0;
  double final_query_issued_time_s = 0;
  double final_query_all_samples_done_time_s = 0;
  // Token latencies (use_token_latencies), sample-id order; empty when unused.
  std::vector<int64_t> first_token_latencies_ns;
  std::vector<int64_t> time_per_output_token_ns;
  std::vector<int64_t> tokens_per_sample;
};

struct PercentileLatency {
  double percentile = 0;
  int64_t sample_latency = 0;
  int64_t query_latency = 0;
};

// The six reported percentiles, in order.
constexpr double kReportedPercentiles[6] = {0.50, 0.90, 0.95, 0.97, 0.99, 0.999};

// The reference's PerformanceSummary after ProcessLatencies / early stopping /
// the validity checks. Field names follow golden/results_math.json "outputs".
struct PerformanceSummary {
  std::string sut_name;
  EffectiveSettings settings;
  SeriesResult raw;

  uint64_t sample_count = 0;
  // Recorded query latencies (MultiStream) and first-token latencies (tokens):
  // the raw arrays are released once everything reported is computed.
  uint64_t query_latency_count = 0;
  uint64_t first_token_latency_count = 0;
  uint64_t query_count = 0;
  uint64_t overlatency_query_count = 0;
  int64_t sample_latency_min = 0, sample_latency_max = 0, sample_latency_mean = 0;
  int64_t query_latency_min = 0, query_latency_max = 0, query_latency_mean = 0;
  PercentileLatency target_latency_percentile;
  PercentileLatency latency_percentiles[6];
  int64_t early_stopping_latency_ss = 0;
  int64_t early_stopping_latency_ms = 0;

  bool min_duration_met = false;
  bool min_queries_met = false;  // MinQueriesMet only; the reported flag is min_queries_met && min_samples_met
  bool min_samples_met = false;
  bool perf_constraints_met = false;
  bool early_stopping_met = false;
  bool result_valid = false;

  std::string early_stopping_recommendation;       // non-token
  std::string early_stopping_ttft_recommendation;  // token mode
  std::string early_stopping_tpot_recommendation;  // token mode
  std::string min_duration_recommendation;
  std::string perf_constraints_recommendation;

  // Rates (only the ones of the scenario are meaningful).
  double qps_with_loadgen_overhead = 0;
  double qps_without_loadgen_overhead = 0;
  double scheduled_samples_per_sec = 0;
  double completed_samples_per_sec = 0;
  double samples_per_second = 0;

  // Token rates (spec/40 §6); only the ones of the scenario/mode are set.
  double tokens_per_second = 0;                     // Offline: token_count / max_latency
  double completed_tokens_per_second = 0;           // non-Offline: token_count / final_query_all_samples_done_time
  double tps_with_loadgen_overhead = 0;             // non-Offline: token_count / final_query_issued_time
  double tps_without_loadgen_overhead = 0;          // SS summary: token_count / ((mean_ns / 1e9) * sample_count)
  double token_throughput = 0;                      // detail: token_count / (mean_ns * sample_count), ns (sic)
  double inferred_tokens_per_second = 0;            // Offline, infer_token_latencies
  double inferred_completed_tokens_per_second = 0;  // Server, infer_token_latencies

  // Token statistics.
  int64_t token_count = 0;
  uint64_t overlatency_first_token_count = 0;
  int64_t first_token_latency_min = 0, first_token_latency_max = 0, first_token_latency_mean = 0;
  int64_t time_per_output_token_min = 0, time_per_output_token_max = 0, time_per_output_token_mean = 0;
  PercentileLatency token_target_latency_percentile;  // TTFT at the target percentile
  PercentileLatency target_tpot_percentile;
  PercentileLatency token_latency_percentiles[6];     // TTFT
  PercentileLatency tpot_percentiles[6];

  // Goodput (loadgen's own figure, Server token runs only): of the issued
  // samples, those that succeeded with TTFT <= server_ttft_latency and TPOT
  // <= server_tpot_latency (2+ output tokens). Failed, incomplete and
  // one-token samples are not within. Both 0 elsewhere.
  uint64_t goodput_samples = 0;
  uint64_t goodput_issued_samples = 0;
};

// The Server early-stopping verdict (spec/40 §5.2) for `n` queries issued of
// which `t` were over the latency bound, at percentile `p`: true when met,
// with the reference's recommendation text. Also what `loadgen stats` asks.
bool server_early_stopping(MinPassingFinder& finder, int64_t n, int64_t t, double p, std::string* recommendation);

// Computes every statistic, the early-stopping verdicts and the validity of a
// performance series exactly as the reference (spec/40 §2-§8).
PerformanceSummary summarize(const EffectiveSettings& settings, const std::string& sut_name,
                             SeriesResult raw);

// An INVALID reason as a sentence: trailing blanks dropped, a period added
// unless it ends in '.', '!' or '?'. Every place that lists or joins reasons
// (summary, detail log, the JS result) writes them so: each a sentence,
// joined by one space, never run together.
std::string as_sentence(std::string reason);

// The summary file's results part: from the first "====" line through the
// "Test Parameters Used" block (and the sample_concatenate_permutation
// warning lines), each line ending in '\n'. `mode` is the Mode line's value
// (the test's requested mode, e.g. SubmissionRun). `extra_reasons`: why the
// result is INVALID beyond the reference's checks (RunOutcome), listed first
// under "Recommendations:", one sentence each.
std::string format_summary_results(const PerformanceSummary& summary, Mode mode,
                                   const std::vector<std::string>& extra_reasons = {});

// The footer appended when logging stops (spec/50 §3), starting with "\n".
std::string format_summary_footer(uint64_t warning_count, uint64_t error_count);

// The detail log's result entries in the reference's order: {key, value_text}
// where value_text is exactly what follows "value": (spec/50 §4.2).
// `num_errors` is the error count logged so far (the final num_errors entry).
// `extra_reasons` follow the reference's in result_invalid_reason, every
// reason then a sentence and all joined by one space.
std::vector<std::pair<std::string, std::string>> detail_result_entries(
    const PerformanceSummary& summary, uint64_t num_errors, const std::vector<std::string>& extra_reasons = {});

}  // namespace loadgen

// Results of a performance series (spec/40 §2-§8), reproducing the
// reference's arithmetic; their summary and detail-log text is results_text.cc.
#include "results.h"

#include <algorithm>
#include <string>

#include "early_stopping.h"
#include "format.h"

namespace loadgen {

namespace {

// Server performance-constraint texts where there is nothing to compare
// (the reference has none: it compares 0 read from an empty array).
const char* const kNothingMeasured = "No sample completed successfully, so no latency was measured.";
const char* const kNoFirstTokenMeasured = "TTFT constrain not met: no first-token latency was measured.";
const char* const kNoTpotMeasured =
    "TPOT constrain not met: no time per output token was measured (no successful sample reported 2 or more "
    "output tokens).";

// The reference indexes with size_t(double(count) * p).
size_t percentile_index(size_t count, double p) {
  return static_cast<size_t>(static_cast<double>(count) * p);
}

// Reads a sorted array at an index; the reference would read out of range
// when an array is shorter than the count it indexes with, here 0.
int64_t at_or_zero(const std::vector<int64_t>& v, size_t i) { return i < v.size() ? v[i] : 0; }

// The reference sums in int64 and divides by a size_t, so the (wrapped) sum is
// divided as unsigned; reproduced with defined unsigned arithmetic.
int64_t integer_mean(const std::vector<int64_t>& v, size_t divisor) {
  uint64_t sum = 0;
  for (int64_t x : v) sum += static_cast<uint64_t>(x);
  if (divisor == 0) return 0;
  return static_cast<int64_t>(sum / divisor);
}

// Stats of one sorted array: min, max and the percentile values.
void fill_percentiles(const std::vector<int64_t>& sorted, size_t count, PercentileLatency* target,
                      PercentileLatency* six, bool query_field) {
  auto value = [&](double p) { return at_or_zero(sorted, percentile_index(count, p)); };
  (query_field ? target->query_latency : target->sample_latency) = value(target->percentile);
  for (int i = 0; i < 6; ++i) (query_field ? six[i].query_latency : six[i].sample_latency) = value(six[i].percentile);
}

// ProcessTokenLatencies (spec/40 §3).
void process_token_latencies(PerformanceSummary& s) {
  constexpr int64_t kInvalidTokens = kMissingLatency;
  s.token_count = 0;
  for (int64_t n : s.raw.tokens_per_sample) {
    if (n == kInvalidTokens || n <= 0) continue;
    // Saturates: a SUT's absurd counts must not wrap the total negative.
    s.token_count = n > INT64_MAX - s.token_count ? INT64_MAX : s.token_count + n;
  }
  auto& ttft = s.raw.first_token_latencies_ns;
  auto& tpot = s.raw.time_per_output_token_ns;
  s.first_token_latency_count = ttft.size();
  if (ttft.empty()) return;
  // Each array's mean and percentiles are over its own entries. The
  // reference divides both means by the sample count and indexes both with
  // it (60 §3.15); its arrays hold one entry per sample, so wherever its
  // figures are right (every golden case) the two agree. Here a sample with
  // fewer than 2 output tokens has no TPOT: dividing or indexing by the
  // sample count would pull the mean towards 0 and read past the array (0).
  s.first_token_latency_mean = integer_mean(ttft, ttft.size());
  s.time_per_output_token_mean = integer_mean(tpot, tpot.size());
  std::sort(ttft.begin(), ttft.end());
  std::sort(tpot.begin(), tpot.end());

  fill_percentiles(ttft, ttft.size(), &s.token_target_latency_percentile, s.token_latency_percentiles, false);
  s.first_token_latency_min = ttft.front();
  s.first_token_latency_max = ttft.back();
  // No TPOT (no successful sample reported 2+ tokens): its figures stay 0,
  // and a Server run's TPOT constraint is not met (perf_constraints_met).
  fill_percentiles(tpot, tpot.size(), &s.target_tpot_percentile, s.tpot_percentiles, false);
  if (!tpot.empty()) {
    s.time_per_output_token_min = tpot.front();
    s.time_per_output_token_max = tpot.back();
  }
  if (s.settings.scenario == Scenario::Server) {
    // Computed by the reference but never reported.
    const int64_t bound = s.settings.target_latency_ns;
    s.overlatency_first_token_count =
        static_cast<uint64_t>(std::count_if(ttft.begin(), ttft.end(), [&](int64_t l) { return l > bound; }));
  }
}

// ProcessLatencies (spec/40 §2).
void process_latencies(PerformanceSummary& s) {
  // The issued queries are counted whether or not any completed (the
  // reference sets it only for a non-empty array, which always is there).
  s.query_count = s.raw.queries_issued;
  auto& lat = s.raw.sample_latencies_ns;
  // No successful sample: every latency statistic (and the token ones) stays
  // 0, the reference's rule for an empty array (spec/40 §2); the rates are
  // 0 too (compute_rates) and nothing is VALID (failures, perf constraints).
  if (lat.empty()) return;
  s.sample_count = lat.size();
  s.sample_latency_mean = integer_mean(lat, s.sample_count);
  // INT64_MIN markers of missing samples sort first, as in the reference.
  std::sort(lat.begin(), lat.end());
  fill_percentiles(lat, s.sample_count, &s.target_latency_percentile, s.latency_percentiles, false);
  s.sample_latency_min = lat.front();
  s.sample_latency_max = lat.back();

  if (s.settings.scenario == Scenario::Server) {
    // The reference counts latencies >= target + 1, i.e. > target.
    const int64_t bound = s.settings.target_latency_ns;
    s.overlatency_query_count =
        static_cast<uint64_t>(std::count_if(lat.begin(), lat.end(), [&](int64_t l) { return l > bound; }));
  }
  if (s.settings.use_token_latencies) process_token_latencies(s);
  if (s.settings.scenario != Scenario::MultiStream) return;

  auto& q = s.raw.query_latencies_ns;
  // Over the recorded query latencies. The reference divides and indexes by
  // queries_issued, the same count when every query completed (the golden
  // cases); a query with a failed sample has no latency here, and counting
  // it would pull the mean down and read the top percentiles past the end.
  const size_t query_count = q.size();
  s.query_latency_count = q.size();
  std::sort(q.begin(), q.end());
  s.query_latency_mean = integer_mean(q, query_count);
  if (!q.empty()) {
    s.query_latency_min = q.front();
    s.query_latency_max = q.back();
  }
  fill_percentiles(q, query_count, &s.target_latency_percentile, s.latency_percentiles, true);
}

// The SingleStream/MultiStream estimate loop: t is one less than the first
// i >= 2 with n < h(i) + i.
int64_t discard_count(MinPassingFinder& finder, int64_t n, double p) {
  int64_t t = 1;
  for (int64_t i = 2; i < n + 1; ++i) {
    const int64_t h = finder.min_passing(i, p);
    if (n < h + i) {
      t = i - 1;
      break;
    }
  }
  return t;
}

int64_t estimate_at(const std::vector<int64_t>& sorted, int64_t n, int64_t t) {
  const int64_t i = n - t;
  return i >= 0 ? at_or_zero(sorted, static_cast<size_t>(i)) : 0;
}

}  // namespace

bool server_early_stopping(MinPassingFinder& finder, int64_t n, int64_t t, double p, std::string* recommendation) {
  const int64_t h = finder.min_passing(t, p);
  if (n >= h + t) {
    *recommendation = " * Run successful.";
    return true;
  }
  *recommendation = " * Run unsuccessful.\n * Processed " + std::to_string(n) +
                    " queries.\n * Would need to run at least " + std::to_string(h + t - n) +
                    " more queries,\n with the run being successful if every additional\n query were under latency.";
  return false;
}

namespace {

// EarlyStopping (spec/40 §5.2) over a sorted latency array. One finder per
// evaluation, as the reference. Sets the summary's estimate fields like the
// reference does (the last evaluation wins).
bool early_stopping(PerformanceSummary& s, const std::vector<int64_t>& sorted, int64_t bound,
                    std::string* recommendation) {
  recommendation->clear();
  MinPassingFinder finder;
  // N: the queries with a latency in the array. The reference uses
  // queries_issued, the same number when every query completed (the golden
  // cases); counting failed or missing ones would estimate from latencies
  // that do not exist (0 past the array's end) and pass a run where nothing
  // completed ("Processed 985 queries", estimate 0, "Run successful").
  const int64_t n = static_cast<int64_t>(std::min<uint64_t>(s.raw.queries_issued, sorted.size()));
  const double p = s.target_latency_percentile.percentile;
  switch (s.settings.scenario) {
    case Scenario::SingleStream:
    case Scenario::MultiStream: {
      const int64_t h_min = finder.min_passing(1, p);
      if (n < h_min + 1) {
        *recommendation = " * Only processed " + std::to_string(n) + " queries.\n * Need to process at least " +
                          std::to_string(h_min + 1) + " queries for early stopping.";
        return false;
      }
      const int64_t t = discard_count(finder, n, p);
      const int64_t estimate = estimate_at(sorted, n, t);
      *recommendation = " * Processed at least " + std::to_string(h_min + 1) + " queries (" + std::to_string(n) +
                        ").\n * Would discard " + std::to_string(t - 1) +
                        " highest latency queries.\n * Early stopping " + format_percentile_one_decimal(p) +
                        "th percentile estimate: " + std::to_string(estimate);
      if (s.settings.scenario == Scenario::MultiStream) {
        s.early_stopping_latency_ms = estimate;
        return true;
      }
      s.early_stopping_latency_ss = estimate;
      // SingleStream also estimates the 99th percentile (MultiStream inference).
      const double p99 = 0.99;
      const int64_t h99 = finder.min_passing(1, p99);
      if (n < h99 + 1) {
        *recommendation += "\n * Not enough queries processed for " + format_percentile_one_decimal(p99) +
                           "th percentile\n early stopping estimate (would need to process at\n least " +
                           std::to_string(h99 + 1) + " total queries).";
      } else {
        const int64_t t99 = discard_count(finder, n, p99);
        const int64_t estimate99 = estimate_at(sorted, n, t99);
        *recommendation += "\n * Early stopping " + format_percentile_one_decimal(p99) +
                           "th percentile estimate: " + std::to_string(estimate99);
        s.early_stopping_latency_ms = estimate99;
      }
      return true;
    }
    case Scenario::Server: {
      const int64_t t = std::count_if(sorted.begin(), sorted.end(), [&](int64_t l) { return l > bound; });
      return server_early_stopping(finder, n, t, p, recommendation);
    }
    case Scenario::Offline:
      break;
  }
  return true;
}

bool min_duration_met(const PerformanceSummary& s, std::string* recommendation) {
  recommendation->clear();
  const double min_duration_s = static_cast<double>(s.settings.min_duration_ms) / 1000.0;
  bool met = false;
  switch (s.settings.scenario) {
    case Scenario::Offline:
      // The reference's max latency is when the query's last sample
      // completed; its failed samples ran that long too (a run whose every
      // sample failed after the min duration lasted it). The same number
      // wherever every sample succeeded (the golden cases).
      met = std::max(s.raw.max_latency_s, s.raw.final_query_all_samples_done_time_s) >= min_duration_s;
      break;
    case Scenario::Server:
      met = s.raw.final_query_scheduled_time_s >= min_duration_s;
      break;
    case Scenario::SingleStream:
    case Scenario::MultiStream:
      met = s.raw.final_query_issued_time_s >= min_duration_s;
      break;
  }
  if (met) return true;
  switch (s.settings.scenario) {
    case Scenario::SingleStream:
    case Scenario::MultiStream:
      *recommendation = "Decrease the expected latency so the loadgen pre-generates more queries.";
      break;
    case Scenario::Server:
      *recommendation = "Increase the target QPS so the loadgen pre-generates more queries.";
      break;
    case Scenario::Offline:
      *recommendation = "Increase expected QPS so the loadgen pre-generates a larger (coalesced) query.";
      break;
  }
  return false;
}

bool perf_constraints_met(const PerformanceSummary& s, std::string* recommendation) {
  recommendation->clear();
  // A constraint on a latency nobody measured is not met: the reference
  // reads 0 from an empty array and says "Yes" for a Server run where every
  // request failed (and FindPeakPerformance would search upwards from it).
  // SingleStream, MultiStream and Offline have no constraint of their own
  // (the summary has no line for it), but result.checks says "met" there
  // too: with nothing measured it says not met, naming why.
  if (s.sample_count == 0) {
    *recommendation = kNothingMeasured;
    return false;
  }
  if (s.settings.scenario != Scenario::Server) return true;
  bool met = true;
  if (!s.settings.use_token_latencies) {
    if (s.target_latency_percentile.sample_latency > s.settings.target_latency_ns) {
      *recommendation = "Reduce target QPS to improve latency.";
      met = false;
    }
    return met;
  }
  if (s.raw.first_token_latencies_ns.empty()) {
    *recommendation = kNoFirstTokenMeasured;
    met = false;
  } else if (s.token_target_latency_percentile.sample_latency > s.settings.server_ttft_latency) {
    *recommendation = "TTFT constrain not met: Reduce target QPS to improve latency.";
    met = false;
  }
  const bool no_tpot = s.raw.time_per_output_token_ns.empty();
  if (no_tpot || s.target_tpot_percentile.sample_latency > s.settings.server_tpot_latency) {
    const std::string text = no_tpot ? kNoTpotMeasured : "TPOT constrain not met: Reduce target QPS to improve latency.";
    if (recommendation->empty()) {
      *recommendation = text;
    } else {
      recommendation->append("\n * " + text);
    }
    met = false;
  }
  return met;
}

// A rate: `count` per second over `seconds`. 0 when nothing was counted or
// no time was measured to count it in (zero successful samples, a zero
// duration): the reference's formulas then give nan (0/0), inf (x/0) or,
// for sample_count - 1 with no samples, 2^64-1 / t (about 1.8e19 "samples
// per second"). Positive inputs give the reference's value bit for bit.
double rate(double count, double seconds) { return count > 0 && seconds > 0 ? count / seconds : 0; }

void compute_rates(PerformanceSummary& s) {
  const auto& r = s.raw;
  // sample_count - 1 (the intervals between samples): the reference computes
  // it in unsigned arithmetic, which wraps with zero samples; here 0.
  const double count_minus_one = s.sample_count == 0 ? 0 : static_cast<double>(s.sample_count - 1);
  const double count = static_cast<double>(s.sample_count);
  const double tokens = static_cast<double>(s.token_count);
  const double mean_s = static_cast<double>(s.sample_latency_mean) / 1e9;
  switch (s.settings.scenario) {
    case Scenario::SingleStream:
      s.qps_with_loadgen_overhead = rate(count_minus_one, r.final_query_issued_time_s);
      // 1 / mean latency: 0 with no sample (or a mean of 0 ns, nothing to divide by).
      s.qps_without_loadgen_overhead = rate(1, mean_s);
      break;
    case Scenario::MultiStream:
      break;
    case Scenario::Server:
      s.scheduled_samples_per_sec = rate(count_minus_one, r.final_query_scheduled_time_s);
      s.completed_samples_per_sec = rate(count_minus_one, r.final_query_all_samples_done_time_s);
      break;
    case Scenario::Offline:
      s.samples_per_second = rate(count, r.max_latency_s);
      break;
  }
  if (s.settings.use_token_latencies) {
    if (s.settings.scenario == Scenario::Offline) {
      s.tokens_per_second = rate(tokens, r.max_latency_s);
    } else {
      s.completed_tokens_per_second = rate(tokens, r.final_query_all_samples_done_time_s);
      s.tps_with_loadgen_overhead = rate(tokens, r.final_query_issued_time_s);
      s.tps_without_loadgen_overhead = rate(tokens, mean_s * count);
      // The reference divides by an integer product in ns (not seconds).
      s.token_throughput =
          rate(tokens, static_cast<double>(static_cast<uint64_t>(s.sample_latency_mean) * s.sample_count));
    }
  }
  if (s.settings.infer_token_latencies) {
    const uint64_t factor = static_cast<uint64_t>(s.settings.token_latency_scaling_factor);
    if (s.settings.scenario == Scenario::Offline) {
      s.inferred_tokens_per_second = rate(static_cast<double>(factor * s.sample_count), r.max_latency_s);
    } else if (s.settings.scenario == Scenario::Server) {
      const uint64_t intervals = s.sample_count == 0 ? 0 : s.sample_count - 1;
      s.inferred_completed_tokens_per_second =
          rate(static_cast<double>(factor * intervals), r.final_query_all_samples_done_time_s);
    }
  }
}

}  // namespace

PerformanceSummary summarize(const EffectiveSettings& settings, const std::string& sut_name, SeriesResult raw) {
  PerformanceSummary s;
  s.sut_name = sut_name;
  s.settings = settings;
  s.raw = std::move(raw);
  const double p = settings.target_latency_percentile;
  s.target_latency_percentile.percentile = p;
  s.token_target_latency_percentile.percentile = p;
  s.target_tpot_percentile.percentile = p;
  for (int i = 0; i < 6; ++i) {
    s.latency_percentiles[i].percentile = kReportedPercentiles[i];
    s.token_latency_percentiles[i].percentile = kReportedPercentiles[i];
    s.tpot_percentiles[i].percentile = kReportedPercentiles[i];
  }

  process_latencies(s);

  s.min_duration_met = min_duration_met(s, &s.min_duration_recommendation);
  s.min_queries_met = s.raw.queries_issued >= settings.min_query_count;
  // On the issued samples, as the reference (its array holds every issued
  // sample): a run whose samples failed issued enough, it did not exit early.
  const uint64_t samples_issued = s.raw.samples_issued != 0 ? s.raw.samples_issued : s.sample_count;
  s.min_samples_met = samples_issued >= settings.min_sample_count;
  s.perf_constraints_met = perf_constraints_met(s, &s.perf_constraints_recommendation);

  if (!settings.use_token_latencies) {
    const auto& arr =
        settings.scenario == Scenario::MultiStream ? s.raw.query_latencies_ns : s.raw.sample_latencies_ns;
    s.early_stopping_met = early_stopping(s, arr, settings.target_latency_ns, &s.early_stopping_recommendation);
  } else {
    // TPOT first, TTFT only if TPOT passed; MultiStream uses the query
    // latencies for both (spec/40 §5.3).
    const bool ms = settings.scenario == Scenario::MultiStream;
    const auto& tpot = ms ? s.raw.query_latencies_ns : s.raw.time_per_output_token_ns;
    const auto& ttft = ms ? s.raw.query_latencies_ns : s.raw.first_token_latencies_ns;
    s.early_stopping_met =
        early_stopping(s, tpot, settings.server_tpot_latency, &s.early_stopping_tpot_recommendation) &&
        early_stopping(s, ttft, settings.server_ttft_latency, &s.early_stopping_ttft_recommendation);
  }

  s.result_valid = s.min_duration_met && s.min_queries_met && s.min_samples_met && s.perf_constraints_met &&
                   s.early_stopping_met;
  compute_rates(s);
  return s;
}

}  // namespace loadgen

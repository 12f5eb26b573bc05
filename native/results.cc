// Results of a performance series (spec/40 §2-§8) and their summary/detail
// text (spec/50 §3, §4.2), reproducing the reference's arithmetic and text.
#include "results.h"

#include <algorithm>
#include <string>

#include "early_stopping.h"
#include "format.h"

namespace loadgen {

namespace {

const char* const kSeparator = "================================================";
const char* const kMinQueriesText = "The test exited early, before enough queries were issued.";
const char* const kMinQueriesSeeLog = "   See the detailed log for why this may have occurred.";

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
    if (n != kInvalidTokens) s.token_count += n;
  }
  auto& ttft = s.raw.first_token_latencies_ns;
  auto& tpot = s.raw.time_per_output_token_ns;
  s.first_token_latency_count = ttft.size();
  if (ttft.empty()) return;
  // Both means divide by the sample count, not the array sizes (60 §3.15).
  s.first_token_latency_mean = integer_mean(ttft, s.sample_count);
  s.time_per_output_token_mean = integer_mean(tpot, s.sample_count);
  std::sort(ttft.begin(), ttft.end());
  std::sort(tpot.begin(), tpot.end());

  fill_percentiles(ttft, s.sample_count, &s.token_target_latency_percentile, s.token_latency_percentiles, false);
  s.first_token_latency_min = ttft.front();
  s.first_token_latency_max = ttft.back();
  fill_percentiles(tpot, s.sample_count, &s.target_tpot_percentile, s.tpot_percentiles, false);
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
  auto& lat = s.raw.sample_latencies_ns;
  if (lat.empty()) return;
  s.sample_count = lat.size();
  s.sample_latency_mean = integer_mean(lat, s.sample_count);
  // INT64_MIN markers of missing samples sort first, as in the reference.
  std::sort(lat.begin(), lat.end());
  fill_percentiles(lat, s.sample_count, &s.target_latency_percentile, s.latency_percentiles, false);
  s.sample_latency_min = lat.front();
  s.sample_latency_max = lat.back();
  s.query_count = s.raw.queries_issued;

  if (s.settings.scenario == Scenario::Server) {
    // The reference counts latencies >= target + 1, i.e. > target.
    const int64_t bound = s.settings.target_latency_ns;
    s.overlatency_query_count =
        static_cast<uint64_t>(std::count_if(lat.begin(), lat.end(), [&](int64_t l) { return l > bound; }));
  }
  if (s.settings.use_token_latencies) process_token_latencies(s);
  if (s.settings.scenario != Scenario::MultiStream) return;

  auto& q = s.raw.query_latencies_ns;
  const size_t query_count = static_cast<size_t>(s.raw.queries_issued);
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

// EarlyStopping (spec/40 §5.2) over a sorted latency array. One finder per
// evaluation, as the reference. Sets the summary's estimate fields like the
// reference does (the last evaluation wins).
bool early_stopping(PerformanceSummary& s, const std::vector<int64_t>& sorted, int64_t bound,
                    std::string* recommendation) {
  recommendation->clear();
  MinPassingFinder finder;
  const int64_t n = static_cast<int64_t>(s.raw.queries_issued);
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
      met = s.raw.max_latency_s >= min_duration_s;
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
  if (s.settings.scenario != Scenario::Server) return true;
  bool met = true;
  if (!s.settings.use_token_latencies) {
    if (s.target_latency_percentile.sample_latency > s.settings.target_latency_ns) {
      *recommendation = "Reduce target QPS to improve latency.";
      met = false;
    }
    return met;
  }
  if (s.token_target_latency_percentile.sample_latency > s.settings.server_ttft_latency) {
    *recommendation = "TTFT constrain not met: Reduce target QPS to improve latency.";
    met = false;
  }
  if (s.target_tpot_percentile.sample_latency > s.settings.server_tpot_latency) {
    if (recommendation->empty()) {
      *recommendation = "TPOT constrain not met: Reduce target QPS to improve latency.";
    } else {
      recommendation->append("\n * TPOT constrain not met: Reduce target QPS to improve latency.");
    }
    met = false;
  }
  return met;
}

void compute_rates(PerformanceSummary& s) {
  const auto& r = s.raw;
  // sample_count - 1 in unsigned arithmetic (wraps with zero samples).
  const double count_minus_one = static_cast<double>(s.sample_count - 1);
  const double count = static_cast<double>(s.sample_count);
  const double tokens = static_cast<double>(s.token_count);
  switch (s.settings.scenario) {
    case Scenario::SingleStream:
      s.qps_with_loadgen_overhead = count_minus_one / r.final_query_issued_time_s;
      s.qps_without_loadgen_overhead = 1 / (static_cast<double>(s.sample_latency_mean) / 1e9);
      break;
    case Scenario::MultiStream:
      break;
    case Scenario::Server:
      s.scheduled_samples_per_sec = count_minus_one / r.final_query_scheduled_time_s;
      s.completed_samples_per_sec = count_minus_one / r.final_query_all_samples_done_time_s;
      break;
    case Scenario::Offline:
      s.samples_per_second = count / r.max_latency_s;
      break;
  }
  if (s.settings.use_token_latencies) {
    if (s.settings.scenario == Scenario::Offline) {
      s.tokens_per_second = tokens / r.max_latency_s;
    } else {
      s.completed_tokens_per_second = tokens / r.final_query_all_samples_done_time_s;
      s.tps_with_loadgen_overhead = tokens / r.final_query_issued_time_s;
      s.tps_without_loadgen_overhead = tokens / ((static_cast<double>(s.sample_latency_mean) / 1e9) * count);
      // The reference divides by an integer product in ns (not seconds).
      s.token_throughput =
          tokens / static_cast<double>(static_cast<uint64_t>(s.sample_latency_mean) * s.sample_count);
    }
  }
  if (s.settings.infer_token_latencies) {
    const uint64_t factor = static_cast<uint64_t>(s.settings.token_latency_scaling_factor);
    if (s.settings.scenario == Scenario::Offline) {
      s.inferred_tokens_per_second = static_cast<double>(factor * s.sample_count) / r.max_latency_s;
    } else if (s.settings.scenario == Scenario::Server) {
      s.inferred_completed_tokens_per_second =
          static_cast<double>(factor * (s.sample_count - 1)) / r.final_query_all_samples_done_time_s;
    }
  }
}

// Line builders.
std::string line(const std::string& label, const std::string& value) { return label + value + "\n"; }
std::string line_i(const std::string& label, int64_t v) { return line(label, std::to_string(v)); }
std::string line_u(const std::string& label, uint64_t v) { return line(label, std::to_string(v)); }
std::string yes_no(bool b) { return b ? "Yes" : "NO"; }

std::string quoted(std::string text) {
  // The detail logger writes strings unescaped, newlines turned into spaces.
  std::replace(text.begin(), text.end(), '\n', ' ');
  return "\"" + text + "\"";
}
std::string bool_text(bool b) { return b ? "true" : "false"; }

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
  s.min_samples_met = s.sample_count >= settings.min_sample_count;
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

std::string format_summary_results(const PerformanceSummary& s, Mode mode) {
  const EffectiveSettings& st = s.settings;
  const Scenario sc = st.scenario;
  const bool tokens = st.use_token_latencies;
  std::string out;
  out += std::string(kSeparator) + "\nMLPerf Results Summary\n" + kSeparator + "\n";
  out += line("SUT name : ", s.sut_name);
  out += line("Scenario : ", to_string(sc));
  out += line("Mode     : ", to_string(mode));

  const std::string target_label = format_percentile_one_decimal(s.target_latency_percentile.percentile);
  switch (sc) {
    case Scenario::SingleStream:
      out += line_i(target_label + "th percentile latency (ns) : ", s.target_latency_percentile.sample_latency);
      break;
    case Scenario::MultiStream:
      out += line_i(target_label + "th percentile latency (ns) : ", s.target_latency_percentile.query_latency);
      break;
    case Scenario::Server:
      out += line("Completed samples per second    : ", format_fixed(s.completed_samples_per_sec, 2));
      break;
    case Scenario::Offline:
      out += line("Samples per second: ", format_double(s.samples_per_second));
      break;
  }
  if (tokens) {
    switch (sc) {
      case Scenario::SingleStream:
      case Scenario::MultiStream:
        out += line_i(format_percentile_one_decimal(s.token_target_latency_percentile.percentile) +
                          "th first token percentile latency (ns) : ",
                      s.token_target_latency_percentile.sample_latency);
        break;
      case Scenario::Offline:
        out += line("Tokens per second: ", format_double(s.tokens_per_second));
        break;
      case Scenario::Server:
        out += line("Completed tokens per second: ", format_fixed(s.completed_tokens_per_second, 2));
        break;
    }
  }
  if (st.infer_token_latencies) {
    if (sc == Scenario::Offline) {
      out += line("Tokens per second (inferred): ", format_double(s.inferred_tokens_per_second));
    } else if (sc == Scenario::Server) {
      out += line("Completed tokens per second (inferred): ", format_fixed(s.inferred_completed_tokens_per_second, 2));
    }
  }

  const bool min_queries = s.min_queries_met && s.min_samples_met;
  out += line("Result is : ", s.result_valid ? "VALID" : "INVALID");
  if (sc == Scenario::Server) out += line("  Performance constraints satisfied : ", yes_no(s.perf_constraints_met));
  out += line("  Min duration satisfied : ", yes_no(s.min_duration_met));
  out += line("  Min queries satisfied : ", yes_no(min_queries));
  out += line("  Early stopping satisfied: ", yes_no(s.early_stopping_met));
  if (!s.result_valid) {
    out += "Recommendations:\n";
    if (!s.perf_constraints_met) out += " * " + s.perf_constraints_recommendation + "\n";
    if (!s.min_duration_met) out += " * " + s.min_duration_recommendation + "\n";
    if (!min_queries) out += std::string(" * ") + kMinQueriesText + "\n" + kMinQueriesSeeLog + "\n";
  }
  if (sc != Scenario::Offline) {
    if (!tokens) {
      out += "Early Stopping Result:\n" + s.early_stopping_recommendation + "\n";
    } else {
      out += "TTFT Early Stopping Result:\n" + s.early_stopping_ttft_recommendation + "\n";
      out += "TPOT Early Stopping Result:\n" + s.early_stopping_tpot_recommendation + "\n";
    }
  }

  out += std::string("\n") + kSeparator + "\nAdditional Stats\n" + kSeparator + "\n";
  if (sc == Scenario::SingleStream) {
    out += line("QPS w/ loadgen overhead         : ", format_fixed(s.qps_with_loadgen_overhead, 2));
    out += line("QPS w/o loadgen overhead        : ", format_fixed(s.qps_without_loadgen_overhead, 2));
    out += "\n";
  } else if (sc == Scenario::Server) {
    out += line("Scheduled samples per second : ", format_fixed(s.scheduled_samples_per_sec, 2));
  } else if (sc == Scenario::MultiStream) {
    out += "Per-query latency:  \n";
    out += line_i("Min latency (ns)                : ", s.query_latency_min);
    out += line_i("Max latency (ns)                : ", s.query_latency_max);
    out += line_i("Mean latency (ns)               : ", s.query_latency_mean);
    for (const auto& lp : s.latency_percentiles)
      out += line_i(format_percentile_label(lp.percentile) + " percentile latency (ns)   : ", lp.query_latency);
  }
  if (sc != Scenario::MultiStream) {
    out += line_i("Min latency (ns)                : ", s.sample_latency_min);
    out += line_i("Max latency (ns)                : ", s.sample_latency_max);
    out += line_i("Mean latency (ns)               : ", s.sample_latency_mean);
    for (const auto& lp : s.latency_percentiles)
      out += line_i(format_percentile_label(lp.percentile) + " percentile latency (ns)   : ", lp.sample_latency);
  }
  if (tokens) {
    out += "\n";
    if (sc == Scenario::SingleStream) {
      out += line("TPS w/ loadgen overhead         : ", format_fixed(s.tps_with_loadgen_overhead, 2));
      out += line("TPS w/o loadgen overhead        : ", format_fixed(s.tps_without_loadgen_overhead, 2));
    } else if (sc == Scenario::Server) {
      out += line("Completed tokens per second                 : ", format_fixed(s.completed_tokens_per_second, 2));
    }
    if (sc != Scenario::Offline) {
      out += line_i("Min First Token latency (ns)                : ", s.first_token_latency_min);
      out += line_i("Max First Token latency (ns)                : ", s.first_token_latency_max);
      out += line_i("Mean First Token latency (ns)               : ", s.first_token_latency_mean);
      for (const auto& lp : s.token_latency_percentiles)
        out += line_i(format_percentile_label(lp.percentile) + " percentile first token latency (ns)   : ",
                      lp.sample_latency);
      out += "\n";
      out += line_i("Min Time per Output Token (ns)                : ", s.time_per_output_token_min);
      out += line_i("Max Time per Output Token (ns)                : ", s.time_per_output_token_max);
      out += line_i("Mean Time per Output Token (ns)               : ", s.time_per_output_token_mean);
      for (const auto& lp : s.tpot_percentiles)
        out += line_i(format_percentile_label(lp.percentile) + " percentile time to output token (ns)   : ",
                      lp.sample_latency);
    }
  }

  out += std::string("\n") + kSeparator + "\nTest Parameters Used\n" + kSeparator + "\n";
  out += line_u("samples_per_query : ", st.samples_per_query);
  out += line("target_qps : ", format_double(st.target_qps));
  if (!tokens) {
    out += line_i("target_latency (ns): ", st.target_latency_ns);
  } else {
    out += line_i("ttft_latency (ns): ", st.server_ttft_latency);
    out += line_i("tpot_latency (ns): ", st.server_tpot_latency);
  }
  out += line_u("max_async_queries : ", st.max_async_queries);
  out += line_u("min_duration (ms): ", st.min_duration_ms);
  out += line_u("max_duration (ms): ", st.max_duration_ms);
  out += line_u("min_query_count : ", st.min_query_count);
  out += line_u("max_query_count : ", st.max_query_count);
  out += line_u("qsl_rng_seed : ", st.qsl_rng_seed);
  out += line_u("sample_index_rng_seed : ", st.sample_index_rng_seed);
  out += line_u("schedule_rng_seed : ", st.schedule_rng_seed);
  out += line_u("accuracy_log_rng_seed : ", st.accuracy_log_rng_seed);
  out += line("accuracy_log_probability : ", format_double(st.accuracy_log_probability));
  out += line_u("accuracy_log_sampling_target : ", st.accuracy_log_sampling_target);
  out += line_i("print_timestamps : ", st.print_timestamps ? 1 : 0);
  out += line_i("performance_issue_unique : ", st.performance_issue_unique ? 1 : 0);
  out += line_i("performance_issue_same : ", st.performance_issue_same ? 1 : 0);
  out += line_u("performance_issue_same_index : ", st.performance_issue_same_index);
  out += line_u("performance_sample_count : ", st.performance_sample_count);
  out += line_u("accuracy_sample_count : ", st.accuracy_sample_count);
  if (st.sample_concatenate_permutation) {
    // The first line's trailing space is the reference's.
    out +=
        "WARNING: sample_concatenate_permutation was set to true. \n"
        "Generated samples per query might be different as the one in the setting.\n"
        "Check the generated_samples_per_query line in the detailed log for the real\n"
        "samples_per_query value\n";
  }
  return out;
}

std::string format_summary_footer(uint64_t warning_count, uint64_t error_count) {
  std::string out = "\n";
  if (warning_count == 0) {
    out += "No warnings encountered during test.\n";
  } else if (warning_count == 1) {
    out += "1 warning encountered. See detailed log.\n";
  } else {
    out += std::to_string(warning_count) + " warnings encountered. See detailed log.\n";
  }
  out += "\n";
  if (error_count == 0) {
    out += "No errors encountered during test.\n";
  } else if (error_count == 1) {
    out += "1 ERROR encountered. See detailed log.\n";
  } else {
    out += std::to_string(error_count) + " ERRORS encountered. See detailed log.\n";
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> detail_result_entries(const PerformanceSummary& s,
                                                                       uint64_t num_errors) {
  const EffectiveSettings& st = s.settings;
  const Scenario sc = st.scenario;
  std::vector<std::pair<std::string, std::string>> e;
  auto add = [&](const std::string& key, const std::string& value) { e.emplace_back(key, value); };
  auto add_i = [&](const std::string& key, int64_t v) { add(key, std::to_string(v)); };
  auto add_u = [&](const std::string& key, uint64_t v) { add(key, std::to_string(v)); };
  auto add_d = [&](const std::string& key, double v) { add(key, format_double(v)); };

  const bool min_queries = s.min_queries_met && s.min_samples_met;
  add("result_validity", quoted(s.result_valid ? "VALID" : "INVALID"));
  if (sc == Scenario::Server) add("result_perf_constraints_met", bool_text(s.perf_constraints_met));
  add("result_min_duration_met", bool_text(s.min_duration_met));
  add("result_min_queries_met", bool_text(min_queries));
  add("early_stopping_met", bool_text(s.early_stopping_met));
  if (!s.result_valid) {
    std::string reason;
    if (!s.perf_constraints_met) reason += s.perf_constraints_recommendation + " ";
    if (!s.min_duration_met) reason += s.min_duration_recommendation + " ";
    if (!min_queries) reason += kMinQueriesText;
    add("result_invalid_reason", quoted(reason));
  }
  if (!st.use_token_latencies) {
    add("early_stopping_result", quoted(s.early_stopping_recommendation));
  } else {
    add("early_stopping_ttft_result", quoted(s.early_stopping_ttft_recommendation));
    add("early_stopping_tpot_result", quoted(s.early_stopping_tpot_recommendation));
  }
  add_u("result_query_count", s.query_count);
  if (sc == Scenario::Server) add_u("result_overlatency_query_count", s.overlatency_query_count);

  switch (sc) {
    case Scenario::SingleStream:
      add_d("result_qps_with_loadgen_overhead", s.qps_with_loadgen_overhead);
      add_d("result_qps_without_loadgen_overhead", s.qps_without_loadgen_overhead);
      add_i("early_stopping_latency_ss", s.early_stopping_latency_ss);
      add_i("early_stopping_latency_ms", s.early_stopping_latency_ms);
      break;
    case Scenario::MultiStream:
      add_i("result_min_query_latency_ns", s.query_latency_min);
      add_i("result_max_query_latency_ns", s.query_latency_max);
      add_i("result_mean_query_latency_ns", s.query_latency_mean);
      for (const auto& lp : s.latency_percentiles)
        add_i("result_" + format_percentile_label(lp.percentile) + "_percentile_per_query_latency_ns",
              lp.query_latency);
      add_i("early_stopping_latency_ms", s.early_stopping_latency_ms);
      break;
    case Scenario::Server:
      add_d("result_scheduled_samples_per_sec", s.scheduled_samples_per_sec);
      add_d("result_completed_samples_per_sec", s.completed_samples_per_sec);
      break;
    case Scenario::Offline:
      add_d("result_samples_per_second", s.samples_per_second);
      break;
  }

  add_i("result_min_latency_ns", s.sample_latency_min);
  add_i("result_max_latency_ns", s.sample_latency_max);
  add_i("result_mean_latency_ns", s.sample_latency_mean);
  for (const auto& lp : s.latency_percentiles)
    add_i("result_" + format_percentile_label(lp.percentile) + "_percentile_latency_ns", lp.sample_latency);

  if (st.use_token_latencies) {
    if (sc == Scenario::Offline) {
      add_d("result_tokens_per_second", s.tokens_per_second);
    } else {
      add_i("result_first_token_min_latency_ns", s.first_token_latency_min);
      add_i("result_first_token_max_latency_ns", s.first_token_latency_max);
      add_i("result_first_token_mean_latency_ns", s.first_token_latency_mean);
      for (const auto& lp : s.token_latency_percentiles)
        add_i("result_first_token_" + format_percentile_label(lp.percentile) + "_percentile_latency_ns",
              lp.sample_latency);
      add_d("result_token_throughput_with_loadgen_overhead", s.tps_with_loadgen_overhead);
      add_d("result_token_throughput", s.token_throughput);
      for (const auto& lp : s.tpot_percentiles)
        add_i("result_time_per_output_token_" + format_percentile_label(lp.percentile) + "_percentile_ns",
              lp.sample_latency);
      add_i("result_time_to_output_token_min", s.time_per_output_token_min);
      add_i("result_time_to_output_token_max", s.time_per_output_token_max);
      add_i("result_time_to_output_token_mean", s.time_per_output_token_mean);
      add_d("result_completed_tokens_per_second", s.completed_tokens_per_second);
    }
  }
  if (st.infer_token_latencies) {
    if (sc == Scenario::Server) {
      add_d("result_inferred_completed_tokens_per_second", s.inferred_completed_tokens_per_second);
    } else if (sc == Scenario::Offline) {
      add_d("result_inferred_tokens_per_second", s.inferred_tokens_per_second);
    }
  }
  add_u("num_errors", num_errors);
  return e;
}

}  // namespace loadgen

// The summary and detail-log text of a performance series' results (spec/50
// §3, §4.2), the reference's layout line for line; the arithmetic is results.cc.
#include <algorithm>
#include <string>

#include "detail_log.h"
#include "format.h"
#include "results.h"
#include "user_text.h"

namespace loadgen {

namespace {

const char* const kSeparator = "================================================";
const char* const kMinQueriesText = "The test exited early, before enough queries were issued.";
const char* const kMinQueriesSeeLog = "   See the detailed log for why this may have occurred.";

// Line builders.
std::string line(const std::string& label, const std::string& value) { return label + value + "\n"; }
std::string line_i(const std::string& label, int64_t v) { return line(label, std::to_string(v)); }
std::string line_u(const std::string& label, uint64_t v) { return line(label, std::to_string(v)); }
std::string yes_no(bool b) { return b ? "Yes" : "NO"; }

std::string quoted(std::string text) {
  // The reference writes strings unescaped, newlines turned into spaces; its
  // own texts need no escaping, so escaping (for the SUT's text in extra
  // reasons) changes none of them.
  std::replace(text.begin(), text.end(), '\n', ' ');
  return DetailLog::quote(text);
}
std::string bool_text(bool b) { return b ? "true" : "false"; }

}  // namespace

std::string as_sentence(std::string reason) {
  while (!reason.empty() && (reason.back() == ' ' || reason.back() == '\n')) reason.pop_back();
  if (!reason.empty() && reason.back() != '.' && reason.back() != '!' && reason.back() != '?') reason += '.';
  return reason;
}

std::string format_summary_results(const PerformanceSummary& s, Mode mode, const std::vector<std::string>& extra_reasons) {
  const EffectiveSettings& st = s.settings;
  const Scenario sc = st.scenario;
  const bool tokens = st.use_token_latencies;
  std::string out;
  out += std::string(kSeparator) + "\nMLPerf Results Summary\n" + kSeparator + "\n";
  // Escaped: a newline in the name would start a line of its own (a forged verdict).
  out += line("SUT name : ", escape_control_characters(s.sut_name));
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
    // Escaped: a reason may carry a SUT's or a caller's text.
    for (const auto& reason : extra_reasons) out += " * " + escape_control_characters(as_sentence(reason)) + "\n";
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
                                                                       uint64_t num_errors,
                                                                       const std::vector<std::string>& extra_reasons) {
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
    // The reference's text exactly (each part and a space, the min-queries
    // sentence without one) when it is all; with reasons of ours, every
    // reason a sentence, joined by one space ("...were issued. 21 samples
    // failed (http_status 21).", never "...were issued.21 samples failed").
    std::string reason;
    if (!s.perf_constraints_met) reason += s.perf_constraints_recommendation + " ";
    if (!s.min_duration_met) reason += s.min_duration_recommendation + " ";
    if (!min_queries) reason += kMinQueriesText;
    for (const auto& extra : extra_reasons) {
      reason = as_sentence(std::move(reason));
      reason += (reason.empty() ? "" : " ") + as_sentence(extra);
    }
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

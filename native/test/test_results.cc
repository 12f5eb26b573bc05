// Results, validity, early stopping and the summary/detail text. Every case
// of golden/results_math.json is read at test time (golden.h) and checked
// field by field as the JS conformance runner does: settings -> effective
// settings, `input` -> summarize() -> `outputs`, `summary_text` and
// `detail_log`. Then our own edge cases, which the vectors do not hold.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <iostream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "check.h"
#include "detail_log.h"
#include "format.h"
#include "golden.h"
#include "json.h"
#include "results.h"
#include "settings.h"
#include "test_util.h"

using namespace loadgen;
using loadgen_test::Json;

namespace {

using Entries = std::vector<std::pair<std::string, std::string>>;

// Our edge cases start from the effective settings the golden cases share.
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

// ---- golden fields by name ---------------------------------------------------
// The vectors name the reference's fields, which are our member names. Each
// visitor calls `f(member)` for the member named `key`; false when none is.
// (A field table per struct, once the core has one, replaces these lists.)

#define LG_FIELD(name)  \
  if (key == #name) {   \
    f(s.name);          \
    return true;        \
  }

template <class Settings, class F>
bool visit_test_setting(Settings& s, const std::string& key, F&& f) {
  LG_FIELD(scenario) LG_FIELD(mode)
  LG_FIELD(single_stream_expected_latency_ns) LG_FIELD(single_stream_target_latency_percentile)
  LG_FIELD(multi_stream_expected_latency_ns) LG_FIELD(multi_stream_target_latency_percentile)
  LG_FIELD(multi_stream_samples_per_query)
  LG_FIELD(server_target_qps) LG_FIELD(server_target_latency_ns) LG_FIELD(server_target_latency_percentile)
  LG_FIELD(server_coalesce_queries) LG_FIELD(server_find_peak_qps_decimals_of_precision)
  LG_FIELD(server_find_peak_qps_boundary_step_size) LG_FIELD(server_max_async_queries)
  LG_FIELD(server_num_issue_query_threads) LG_FIELD(offline_expected_qps) LG_FIELD(sample_concatenate_permutation)
  LG_FIELD(min_duration_ms) LG_FIELD(max_duration_ms) LG_FIELD(min_query_count) LG_FIELD(max_query_count)
  LG_FIELD(qsl_rng_seed) LG_FIELD(sample_index_rng_seed) LG_FIELD(schedule_rng_seed) LG_FIELD(accuracy_log_rng_seed)
  LG_FIELD(accuracy_log_probability) LG_FIELD(accuracy_log_sampling_target)
  LG_FIELD(test05) LG_FIELD(test05_qsl_rng_seed) LG_FIELD(test05_sample_index_rng_seed)
  LG_FIELD(test05_schedule_rng_seed) LG_FIELD(print_timestamps)
  LG_FIELD(performance_issue_unique) LG_FIELD(performance_issue_same) LG_FIELD(performance_issue_same_index)
  LG_FIELD(performance_sample_count_override) LG_FIELD(accuracy_sample_count_override)
  LG_FIELD(use_token_latencies) LG_FIELD(server_ttft_latency) LG_FIELD(server_tpot_latency)
  LG_FIELD(infer_token_latencies) LG_FIELD(token_latency_scaling_factor)
  return false;
}

template <class Settings, class F>
bool visit_effective(Settings& s, const std::string& key, F&& f) {
  LG_FIELD(scenario) LG_FIELD(mode) LG_FIELD(samples_per_query) LG_FIELD(target_qps)
  LG_FIELD(target_latency_ns) LG_FIELD(target_latency_percentile) LG_FIELD(max_async_queries)
  LG_FIELD(target_duration_ms) LG_FIELD(min_duration_ms) LG_FIELD(max_duration_ms)
  LG_FIELD(min_query_count) LG_FIELD(max_query_count) LG_FIELD(min_sample_count)
  LG_FIELD(qsl_rng_seed) LG_FIELD(sample_index_rng_seed) LG_FIELD(schedule_rng_seed) LG_FIELD(accuracy_log_rng_seed)
  LG_FIELD(accuracy_log_probability) LG_FIELD(accuracy_log_sampling_target) LG_FIELD(print_timestamps)
  LG_FIELD(performance_issue_unique) LG_FIELD(performance_issue_same) LG_FIELD(performance_issue_same_index)
  LG_FIELD(performance_sample_count) LG_FIELD(accuracy_sample_count) LG_FIELD(sample_concatenate_permutation)
  LG_FIELD(use_token_latencies) LG_FIELD(server_ttft_latency) LG_FIELD(server_tpot_latency)
  LG_FIELD(infer_token_latencies) LG_FIELD(token_latency_scaling_factor)
  LG_FIELD(server_find_peak_qps_decimals_of_precision) LG_FIELD(server_find_peak_qps_boundary_step_size)
  return false;
}

// The summary's fields under golden "outputs" names.
template <class F>
bool visit_output(const PerformanceSummary& s, const std::string& key, F&& f) {
  LG_FIELD(sample_count) LG_FIELD(query_count) LG_FIELD(overlatency_query_count)
  LG_FIELD(sample_latency_min) LG_FIELD(sample_latency_max) LG_FIELD(sample_latency_mean)
  LG_FIELD(query_latency_min) LG_FIELD(query_latency_max) LG_FIELD(query_latency_mean)
  LG_FIELD(target_latency_percentile) LG_FIELD(latency_percentiles)
  LG_FIELD(early_stopping_latency_ss) LG_FIELD(early_stopping_latency_ms)
  LG_FIELD(min_duration_met) LG_FIELD(min_queries_met) LG_FIELD(min_samples_met) LG_FIELD(perf_constraints_met)
  LG_FIELD(early_stopping_met) LG_FIELD(result_valid)
  LG_FIELD(early_stopping_recommendation) LG_FIELD(early_stopping_ttft_recommendation)
  LG_FIELD(early_stopping_tpot_recommendation) LG_FIELD(min_duration_recommendation)
  LG_FIELD(perf_constraints_recommendation)
  LG_FIELD(qps_with_loadgen_overhead) LG_FIELD(qps_without_loadgen_overhead)
  LG_FIELD(scheduled_samples_per_sec) LG_FIELD(completed_samples_per_sec) LG_FIELD(samples_per_second)
  LG_FIELD(token_count) LG_FIELD(overlatency_first_token_count)
  LG_FIELD(first_token_latency_min) LG_FIELD(first_token_latency_max) LG_FIELD(first_token_latency_mean)
  LG_FIELD(time_per_output_token_min) LG_FIELD(time_per_output_token_max) LG_FIELD(time_per_output_token_mean)
  LG_FIELD(token_target_latency_percentile) LG_FIELD(target_tpot_percentile)
  LG_FIELD(token_latency_percentiles) LG_FIELD(tpot_percentiles)
  return false;
}

#undef LG_FIELD

// ---- reading a golden value into a field, comparing a field with one ----------

void assign(bool& m, const Json& v) { m = v.as_bool(); }
void assign(int& m, const Json& v) { m = static_cast<int>(v.as_int64()); }
void assign(uint64_t& m, const Json& v) { m = v.as_uint64(); }
void assign(double& m, const Json& v) { m = v.as_double(); }
template <class Enum>
void assign_enum(Enum& m, const Json& v, std::initializer_list<Enum> values) {
  for (Enum e : values) {
    if (v.as_string() == to_string(e)) {
      m = e;
      return;
    }
  }
  throw std::runtime_error("unknown value " + v.describe());
}
void assign(Scenario& m, const Json& v) {
  assign_enum(m, v, {Scenario::SingleStream, Scenario::MultiStream, Scenario::Server, Scenario::Offline});
}
void assign(Mode& m, const Json& v) {
  assign_enum(m, v, {Mode::SubmissionRun, Mode::AccuracyOnly, Mode::PerformanceOnly, Mode::FindPeakPerformance});
}

template <class T>
std::string mismatch(const Json& expected, const T& got) {
  std::ostringstream os;
  os.precision(17);
  os << "expected " << expected.describe() << ", got " << got;
  return os.str();
}

// "" when `got` equals the golden value exactly, else what differs.
std::string difference(bool got, const Json& v) { return v.as_bool() == got ? "" : mismatch(v, got ? "true" : "false"); }
std::string difference(int got, const Json& v) { return v.as_int64() == got ? "" : mismatch(v, got); }
std::string difference(int64_t got, const Json& v) { return v.as_int64() == got ? "" : mismatch(v, got); }
std::string difference(uint64_t got, const Json& v) { return v.as_uint64() == got ? "" : mismatch(v, got); }
std::string difference(double got, const Json& v) { return v.as_double() == got ? "" : mismatch(v, got); }
std::string difference(const std::string& got, const Json& v) {
  return v.as_string() == got ? "" : mismatch(v, "\"" + got + "\"");
}
std::string difference(Scenario got, const Json& v) { return v.as_string() == to_string(got) ? "" : mismatch(v, to_string(got)); }
std::string difference(Mode got, const Json& v) { return v.as_string() == to_string(got) ? "" : mismatch(v, to_string(got)); }
std::string difference(const PercentileLatency& got, const Json& v) {
  for (const auto& [key, value] : v.members()) {
    std::string d;
    if (key == "percentile") d = difference(got.percentile, value);
    else if (key == "sample_latency") d = difference(got.sample_latency, value);
    else if (key == "query_latency") d = difference(got.query_latency, value);
    else d = "no such field";
    if (!d.empty()) return key + ": " + d;
  }
  return "";
}
std::string difference(const PercentileLatency (&got)[6], const Json& v) {
  if (v.items().size() != 6) return "expected " + std::to_string(v.items().size()) + " percentiles, got 6";
  for (size_t i = 0; i < 6; ++i) {
    const std::string d = difference(got[i], v.items()[i]);
    if (!d.empty()) return "[" + std::to_string(i) + "]." + d;
  }
  return "";
}

// Checks every member of the golden object `expected` against the field of
// that name (`visit` as above); a name with no field is a failure too.
template <class Visit>
void check_members(const std::string& where, const std::string& prefix, const Json& expected, Visit&& visit) {
  for (const auto& [key, value] : expected.members()) {
    std::string d;
    const bool known = visit(key, [&](const auto& member) { d = difference(member, value); });
    loadgen_test::check_no_difference(where, known ? (d.empty() ? "" : prefix + key + ": " + d)
                                                   : prefix + key + ": no such field here");
  }
}

// The first line where two texts differ, or "".
std::string text_difference(const std::string& expected, const std::string& got) {
  if (expected == got) return "";
  std::istringstream e(expected), g(got);
  std::string el, gl;
  for (int line = 1;; ++line) {
    const bool has_e = static_cast<bool>(std::getline(e, el));
    const bool has_g = static_cast<bool>(std::getline(g, gl));
    if (!has_e && !has_g) return "texts differ in their line ends";
    if (!has_e || !has_g || el != gl) {
      return "line " + std::to_string(line) + ": expected \"" + (has_e ? el : "<end>") + "\", got \"" +
             (has_g ? gl : "<end>") + "\"";
    }
  }
}

std::vector<int64_t> int_array(const Json& v) {
  std::vector<int64_t> out;
  out.reserve(v.items().size());
  for (const Json& x : v.items()) out.push_back(x.as_int64());
  return out;
}

// One results_math case, the way the JS conformance runner checks it.
void check_results_case(const Json& c, const std::string& where) {
  TestSettings settings;
  for (const auto& [key, value] : c.at("settings").members()) {
    const bool known = visit_test_setting(settings, key, [&](auto& member) { assign(member, value); });
    if (!known) loadgen_test::check_no_difference(where, "settings." + key + ": not a TestSettings field");
  }
  const Json& qsl = c.at("qsl");
  const EffectiveSettings effective = derive_effective(settings, qsl.at("total_sample_count").as_uint64(),
                                                       qsl.at("performance_sample_count").as_uint64(), nullptr);
  check_members(where, "effective.", c.at("effective"),
                [&](const std::string& key, auto&& f) { return visit_effective(effective, key, f); });

  const Json& in = c.at("input");
  SeriesResult raw;
  raw.sample_latencies_ns = int_array(in.at("sample_latencies_ns"));
  const std::pair<const char*, std::vector<int64_t>*> optional_arrays[] = {
      {"query_latencies_ns", &raw.query_latencies_ns},
      {"tokens_per_sample", &raw.tokens_per_sample},
      {"first_token_latencies_ns", &raw.first_token_latencies_ns},
      {"time_per_output_token_ns", &raw.time_per_output_token_ns},
  };
  for (const auto& [name, array] : optional_arrays) {
    const Json* v = in.find(name);
    if (v != nullptr && !v->is_null()) *array = int_array(*v);
  }
  raw.queries_issued = in.at("queries_issued").as_uint64();
  raw.max_latency_s = in.at("max_latency_s").as_double();
  raw.final_query_scheduled_time_s = in.at("final_query_scheduled_time_s").as_double();
  raw.final_query_issued_time_s = in.at("final_query_issued_time_s").as_double();
  raw.final_query_all_samples_done_time_s = in.at("final_query_all_samples_done_time_s").as_double();

  // The SUT name is not a field of the case: the summary's header holds it.
  const std::string& summary_text = c.at("summary_text").as_string();
  const std::string sut_key = "SUT name : ";
  const size_t at = summary_text.find(sut_key);
  const std::string sut_name = at == std::string::npos
                                   ? "GoldenSUT"
                                   : summary_text.substr(at + sut_key.size(),
                                                         summary_text.find('\n', at) - at - sut_key.size());
  const PerformanceSummary s = summarize(effective, sut_name, std::move(raw));

  check_members(where, "outputs.", c.at("outputs"),
                [&](const std::string& key, auto&& f) { return visit_output(s, key, f); });
  const std::string text = format_summary_results(s, settings.mode) + format_summary_footer(0, 0);
  const std::string text_diff = text_difference(summary_text, text);
  loadgen_test::check_no_difference(where, text_diff.empty() ? "" : "summary_text " + text_diff);

  const Entries detail = detail_result_entries(s, 0);
  const auto& expected = c.at("detail_log").items();
  for (size_t i = 0; i < std::max(detail.size(), expected.size()); ++i) {
    const std::string e = i < expected.size()
                              ? expected[i].at("key").as_string() + " = " + expected[i].at("value_text").as_string()
                              : "<none>";
    const std::string g = i < detail.size() ? detail[i].first + " = " + detail[i].second : "<none>";
    if (e != g) {
      loadgen_test::check_no_difference(where, "detail_log[" + std::to_string(i) + "]: expected " + e + ", got " + g);
      break;
    }
  }
}

}  // namespace

TEST(results_math_golden_cases) {
  Json golden;
  if (!loadgen_test::load_golden("results_math.json", &golden)) return;
  const auto& cases = golden.at("cases").items();
  CHECK(!cases.empty());
  for (size_t i = 0; i < cases.size(); ++i) {
    const Json* id = cases[i].find("id");
    const std::string where =
        "results_math.json#" + (id != nullptr ? id->as_string() : "cases[" + std::to_string(i) + "]");
    loadgen_test::golden_case(where, [&] { check_results_case(cases[i], where); });
  }
  std::cout << "golden results_math.json: " << cases.size() << " cases\n";
}

TEST(results_multistream_per_query_line_has_two_trailing_spaces) {
  // The golden MultiStream summaries hold this line; it must keep its trailing spaces.
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

// Every number in a summary text: none may be inf/nan, none negative
// unless the line is one of the reference's own signed figures (none are,
// once nothing impossible enters the arrays).
void check_summary_numbers_possible(const std::string& text) {
  static const std::regex not_finite("(^|[^A-Za-z])-?(inf|nan)([^A-Za-z]|$)", std::regex::icase);
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const bool bad = std::regex_search(line, not_finite) || line.find(": -") != std::string::npos;
    if (bad) std::cerr << "  impossible: " << line << "\n";
    CHECK(!bad);
  }
}

// Every detail entry's value is JSON (a string, a bool or a finite number),
// and no rate is negative.
void check_detail_entries_json(const Entries& entries) {
  for (const auto& e : entries) {
    const std::string& v = e.second;
    const bool ok = (!v.empty() && v.front() == '"') || v == "true" || v == "false" || DetailLog::is_json_number(v);
    if (!ok) std::cerr << "  not JSON: " << e.first << " = " << v << "\n";
    CHECK(ok);
    if (DetailLog::is_json_number(v)) CHECK(std::strtod(v.c_str(), nullptr) >= 0);
  }
}

// Every rate a summary can carry.
std::vector<double> rates_of(const PerformanceSummary& s) {
  return {s.qps_with_loadgen_overhead,  s.qps_without_loadgen_overhead, s.scheduled_samples_per_sec,
          s.completed_samples_per_sec,  s.samples_per_second,           s.tokens_per_second,
          s.completed_tokens_per_second, s.tps_with_loadgen_overhead,   s.tps_without_loadgen_overhead,
          s.token_throughput,            s.inferred_tokens_per_second,  s.inferred_completed_tokens_per_second};
}

// Zero successful samples (every request failed): the reference's formulas
// give 2^64-1 / t "samples per second", inf and nan (which the detail log
// wrote as `inf`/`-nan`, not JSON), "Performance constraints satisfied: Yes"
// and an early-stopping pass over latencies that do not exist.
TEST(results_zero_samples_give_zero_rates_and_no_pass) {
  for (Scenario sc : {Scenario::SingleStream, Scenario::MultiStream, Scenario::Server, Scenario::Offline}) {
    for (bool tokens : {false, true}) {
      EffectiveSettings e = base_effective(sc);
      e.target_latency_percentile = 0.9;
      if (sc == Scenario::Offline) e.min_query_count = 1;
      e.use_token_latencies = tokens;
      e.infer_token_latencies = !tokens;
      e.token_latency_scaling_factor = 10;
      e.target_latency_ns = 1000000;
      SeriesResult raw;
      raw.queries_issued = sc == Scenario::Offline ? 1 : 985;  // plenty for an estimate
      raw.samples_issued = 985;
      raw.final_query_scheduled_time_s = 2.5;
      raw.final_query_issued_time_s = 2.5;
      raw.final_query_all_samples_done_time_s = 2.6;
      const PerformanceSummary s = summarize(e, "x", raw);
      CHECK_EQ(s.sample_count, uint64_t(0));
      CHECK_EQ(s.query_count, raw.queries_issued);  // issued, whether or not any completed
      for (double r : rates_of(s)) CHECK_EQ(r, 0.0);
      CHECK_EQ(s.sample_latency_min, int64_t(0));
      CHECK_EQ(s.first_token_latency_min, int64_t(0));
      CHECK_EQ(s.time_per_output_token_min, int64_t(0));
      // Offline has no check that needs a latency; a run's failed or missing
      // samples make it INVALID with their own reason (RunOutcome).
      if (sc != Scenario::Offline) CHECK(!s.result_valid);
      // Enough was issued: the run did not "exit early".
      CHECK(s.min_queries_met && s.min_samples_met);
      if (sc != Scenario::Offline) {
        CHECK(!s.early_stopping_met);
        CHECK_EQ(s.early_stopping_latency_ss, int64_t(0));
        CHECK_EQ(s.early_stopping_latency_ms, int64_t(0));
      }
      if (sc == Scenario::Server) {
        CHECK(!s.perf_constraints_met);
        CHECK_EQ(s.perf_constraints_recommendation,
                 std::string("No sample completed successfully, so no latency was measured."));
        const std::string& es = tokens ? s.early_stopping_tpot_recommendation : s.early_stopping_recommendation;
        CHECK(es.find(" * Processed 0 queries.") != std::string::npos);
      } else if (sc != Scenario::Offline) {
        const std::string& es = tokens ? s.early_stopping_tpot_recommendation : s.early_stopping_recommendation;
        CHECK(es.rfind(" * Only processed 0 queries.", 0) == 0);
      }
      const std::string text = format_summary_results(s, Mode::PerformanceOnly);
      check_summary_numbers_possible(text);
      if (sc == Scenario::Server) {
        CHECK(text.find("Completed samples per second    : 0.00\n") != std::string::npos);
        CHECK(text.find("  Performance constraints satisfied : NO\n") != std::string::npos);
      }
      if (sc == Scenario::Offline) CHECK(text.find("Samples per second: 0\n") != std::string::npos);
      CHECK(text.find("  Min queries satisfied : Yes\n") != std::string::npos);
      check_detail_entries_json(detail_result_entries(s, 0, {"985 samples failed (http_status 985)"}));
    }
  }
  // Nothing issued at all (summarize on an empty input) is as quiet.
  SeriesResult none;
  const PerformanceSummary s = summarize(base_effective(Scenario::SingleStream), "x", none);
  for (double r : rates_of(s)) CHECK_EQ(r, 0.0);
  CHECK(!s.result_valid);
  check_summary_numbers_possible(format_summary_results(s, Mode::PerformanceOnly));
}

// One sample, or a duration of 0 s: rates over no interval are 0, not 0/0.
TEST(results_one_sample_and_zero_duration_give_finite_rates) {
  for (Scenario sc : {Scenario::SingleStream, Scenario::Server, Scenario::Offline}) {
    for (const std::vector<int64_t>& latencies : {std::vector<int64_t>{0}, std::vector<int64_t>{0, 0, 0}}) {
      EffectiveSettings e = base_effective(sc);
      e.target_latency_percentile = 0.9;
      e.use_token_latencies = true;
      e.infer_token_latencies = true;
      e.token_latency_scaling_factor = 3;
      SeriesResult raw;
      raw.sample_latencies_ns = latencies;
      raw.first_token_latencies_ns = std::vector<int64_t>(latencies.size(), 0);
      raw.time_per_output_token_ns = std::vector<int64_t>(latencies.size(), 0);
      raw.tokens_per_sample = std::vector<int64_t>(latencies.size(), 5);
      raw.queries_issued = sc == Scenario::Offline ? 1 : latencies.size();
      // Everything at the start: a zero duration and a zero mean latency.
      const PerformanceSummary s = summarize(e, "x", raw);
      for (double r : rates_of(s)) {
        CHECK(std::isfinite(r));
        CHECK_EQ(r, 0.0);
      }
      check_summary_numbers_possible(format_summary_results(s, Mode::PerformanceOnly));
      check_detail_entries_json(detail_result_entries(s, 0));
    }
  }
  // One SingleStream sample over a real duration: no interval between two
  // samples, so 0 queries per second with overhead; 1 / latency without.
  EffectiveSettings e = base_effective(Scenario::SingleStream);
  e.target_latency_percentile = 0.9;
  SeriesResult raw;
  raw.sample_latencies_ns = {2000000};
  raw.queries_issued = 1;
  raw.final_query_issued_time_s = 0.001;
  const PerformanceSummary s = summarize(e, "x", raw);
  CHECK_EQ(s.qps_with_loadgen_overhead, 0.0);
  CHECK_EQ(s.qps_without_loadgen_overhead, 500.0);
}

// TPOT has an entry only for samples with 2+ tokens (series_results): its
// mean and percentiles are over those, not pulled to 0 by the sample count.
TEST(results_token_statistics_over_their_own_entries) {
  EffectiveSettings e = base_effective(Scenario::Server);
  e.target_latency_percentile = 0.99;
  e.use_token_latencies = true;
  SeriesResult raw;
  raw.sample_latencies_ns = {100, 100, 100, 100};
  raw.first_token_latencies_ns = {10, 20, 30, 40};
  raw.time_per_output_token_ns = {50};  // three samples had fewer than 2 tokens
  raw.tokens_per_sample = {0, 0, 0, 3};
  raw.queries_issued = 4;
  raw.final_query_scheduled_time_s = 1;
  raw.final_query_all_samples_done_time_s = 1;
  const PerformanceSummary s = summarize(e, "x", raw);
  CHECK_EQ(s.time_per_output_token_mean, int64_t(50));
  CHECK_EQ(s.target_tpot_percentile.sample_latency, int64_t(50));
  for (const auto& p : s.tpot_percentiles) CHECK_EQ(p.sample_latency, int64_t(50));
  CHECK_EQ(s.first_token_latency_mean, int64_t(25));
  CHECK_EQ(s.token_count, int64_t(3));
  // No TPOT at all: the Server TPOT constraint is not met (nothing measured).
  raw.time_per_output_token_ns.clear();
  const PerformanceSummary none = summarize(e, "x", raw);
  CHECK(!none.perf_constraints_met);
  CHECK(none.perf_constraints_recommendation.find("TPOT constrain not met: no time per output token was measured") == 0);
  // Absurd token counts saturate instead of wrapping the total negative.
  raw.tokens_per_sample = {INT64_MAX, INT64_MAX, 5, 1};
  CHECK_EQ(summarize(e, "x", raw).token_count, INT64_MAX);
}

// MultiStream with a failed query: its query has no latency, and the
// percentiles come from the recorded ones (not 0 read past the array).
TEST(results_multistream_percentiles_over_recorded_queries) {
  EffectiveSettings e = base_effective(Scenario::MultiStream);
  e.target_latency_percentile = 0.99;
  e.samples_per_query = 2;
  SeriesResult raw;
  for (int q = 0; q < 99; ++q) {
    raw.query_latencies_ns.push_back(1000 + q);
    raw.sample_latencies_ns.push_back(1000 + q);
    raw.sample_latencies_ns.push_back(900 + q);
  }
  raw.queries_issued = 100;
  raw.samples_issued = 200;
  const PerformanceSummary s = summarize(e, "x", raw);
  CHECK_EQ(s.target_latency_percentile.query_latency, int64_t(1098));
  for (const auto& p : s.latency_percentiles) CHECK(p.query_latency >= 1000);
  CHECK_EQ(s.query_latency_mean, int64_t(1049));
}

// The reasons are sentences joined by one space: the reference's text, then ours.
TEST(results_invalid_reasons_are_separate_sentences) {
  EffectiveSettings e = base_effective(Scenario::Offline);
  e.target_latency_percentile = 0.9;
  e.min_sample_count = 100;
  e.min_duration_ms = 0;
  SeriesResult raw;
  raw.sample_latencies_ns = {5};
  raw.queries_issued = 1;
  raw.max_latency_s = 1;
  const PerformanceSummary s = summarize(e, "x", raw);
  CHECK(!s.min_samples_met);
  const std::vector<std::string> extra = {"interrupted by SIGINT", "21 samples failed (http_status 21)"};
  std::string reason;
  for (const auto& entry : detail_result_entries(s, 0, extra)) {
    if (entry.first == "result_invalid_reason") reason = entry.second;
  }
  CHECK_EQ(reason, std::string("\"The test exited early, before enough queries were issued. interrupted by SIGINT. 21 "
                               "samples failed (http_status 21).\""));
  // Without reasons of ours the reference's text stays exactly its own.
  for (const auto& entry : detail_result_entries(s, 0)) {
    if (entry.first == "result_invalid_reason") {
      CHECK_EQ(entry.second, std::string("\"The test exited early, before enough queries were issued.\""));
    }
  }
  const std::string text = format_summary_results(s, Mode::PerformanceOnly, {"a\nforged line", "done!"});
  CHECK(text.find("Recommendations:\n * a\\nforged line.\n * done!\n * The test exited early") != std::string::npos);
  CHECK_EQ(as_sentence("x  "), std::string("x."));
  CHECK_EQ(as_sentence(""), std::string(""));
}

// The detail log writes no non-JSON value, whatever a caller formats.
TEST(results_detail_log_refuses_non_json_numbers) {
  CHECK(DetailLog::is_json_number("0"));
  CHECK(DetailLog::is_json_number("-0"));
  CHECK(DetailLog::is_json_number("1.49031e+07"));
  CHECK(DetailLog::is_json_number("7.28067e-05"));
  CHECK(DetailLog::is_json_number("-12"));
  for (const char* bad : {"inf", "-inf", "nan", "-nan", "", "1.", ".5", "01", "1e", "+1", "0x10", "1 "}) {
    CHECK(!DetailLog::is_json_number(bad));
  }
  const std::string path = loadgen_test::temp_outdir("detail_non_finite") + "/detail.txt";
  {
    DetailLog log;
    CHECK(log.open(path, 0, false));
    log.add("result_samples_per_second", format_double(std::nan("")), false, false, "test", 1);
    log.add("result_qps_without_loadgen_overhead", format_double(INFINITY), false, false, "test", 2);
    log.add("ok", format_double(2.5), false, false, "test", 3);
    log.add("text", DetailLog::quote("inf"), false, false, "test", 4);
    log.add("list", DetailLog::integer_list({1, 2}), false, false, "test", 5);
  }
  const std::string text = loadgen_test::read_file(path);
  std::istringstream lines(text);
  std::string line;
  size_t n = 0;
  while (std::getline(lines, line)) {
    CHECK(line.rfind(":::MLLOG ", 0) == 0);
    loadgen_test::parse_json(line.substr(9));  // throws on anything not JSON
    ++n;
  }
  CHECK_EQ(n, size_t{5});
  CHECK(text.find("\"value\": null") != std::string::npos);
  CHECK(text.find("\"value\": 2.5,") != std::string::npos);
  CHECK(text.find("\"value\": \"inf\"") != std::string::npos);
}

TEST(results_detail_log_index_list_written_in_pieces) {
  // 100000 indices span several 64 KiB pieces; the line is the one
  // integer_list() gives, key and value alike.
  std::vector<uint32_t> values(100000);
  for (uint32_t i = 0; i < values.size(); ++i) values[i] = 4294967295u - i * 7919u;
  const std::string path = loadgen_test::temp_outdir("detail_index_list") + "/detail.txt";
  std::atomic<bool> stop{false};
  {
    DetailLog log;
    CHECK(log.open(path, 0, false));
    CHECK_EQ(log.add_index_list("loaded_qsl_set", values.data(), values.size(), &stop, "test", 1), values.size());
    CHECK_EQ(log.add_index_list("loaded_qsl_set", values.data(), 0, &stop, "test", 2), size_t{0});
    stop = true;
    // Stopped: the list ends after its first piece, its line still JSON.
    const size_t cut = log.add_index_list("loaded_qsl_set", values.data(), values.size(), &stop, "test", 3);
    CHECK(cut > 1000 && cut < values.size());
  }
  std::istringstream lines(loadgen_test::read_file(path));
  std::string line;
  std::vector<std::string> texts;
  std::vector<size_t> lengths;
  while (std::getline(lines, line)) {
    CHECK(line.rfind(":::MLLOG {\"key\": \"loaded_qsl_set\", \"value\": [", 0) == 0);
    const loadgen_test::Json entry = loadgen_test::parse_json(line.substr(9));
    lengths.push_back(entry.at("value").items().size());
    texts.push_back(line);
  }
  CHECK_EQ(texts.size(), size_t{3});
  if (texts.size() != 3) return;
  CHECK(texts[0].find("\"value\": " + DetailLog::integer_list(values) + ", \"time_ms\": ") != std::string::npos);
  CHECK(texts[1].find("\"value\": [], \"time_ms\": ") != std::string::npos);
  CHECK_EQ(lengths[0], values.size());
  CHECK(lengths[2] > 1000 && lengths[2] < values.size());
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

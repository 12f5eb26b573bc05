// Results, validity, early stopping and the summary/detail text. Every case
// of golden/results_math.json is read at test time (golden.h) and checked
// field by field as the JS conformance runner does: settings -> effective
// settings, `input` -> summarize() -> `outputs`, `summary_text` and
// `detail_log`. Then our own edge cases, which the vectors do not hold.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "check.h"
#include "format.h"
#include "golden.h"
#include "results.h"
#include "settings.h"

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

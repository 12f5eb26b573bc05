// FromConfig grammar, lookup, application order and the built-in mlperf.conf
// (spec/10 §4-§5, spec/60 §3.12), plus golden settings_derivation cases.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "check.h"
#include "config.h"
#include "settings.h"
#include "settings_log.h"

using loadgen::ConfigLoader;
using loadgen::EffectiveSettings;
using loadgen::LogMessage;
using loadgen::Mode;
using loadgen::Scenario;
using loadgen::TestSettings;

namespace {

// The small system config used by the golden settings_derivation cases.
const char kGoldenMlperfConf[] =
    "# golden vectors: a small system-wide config written for these tests\n"
    "*.*.qsl_rng_seed = 111\n*.*.sample_index_rng_seed = 222\n*.*.schedule_rng_seed = 333\n"
    "*.*.accuracy_log_probability = 5\n*.*.test05_qsl_rng_seed = 444\n"
    "*.*.test05_sample_index_rng_seed = 555\n*.*.test05_schedule_rng_seed = 666\n\n"
    "*.SingleStream.target_latency_percentile = 90\n*.SingleStream.min_duration = 600000\n"
    "*.SingleStream.target_latency = 10\n*.MultiStream.target_latency_percentile = 99\n"
    "*.MultiStream.samples_per_query = 8\n*.MultiStream.min_duration = 600000\n"
    "*.MultiStream.min_query_count = 662\n*.MultiStream.target_latency = 80\n"
    "*.Server.target_latency = 10\n*.Server.target_latency_percentile = 99\n"
    "*.Server.min_duration = 600000\n*.Server.target_qps = 1.0\n*.Offline.min_duration = 600000\n"
    "*.Offline.target_qps = 1.0\n\n"
    "modela.*.performance_sample_count_override = 2048\nmodela.Server.target_latency = 15\n"
    "modela.Offline.min_query_count = 24576\nmodelb.*.sample_concatenate_permutation = 1\n"
    "modelb.*.performance_sample_count_override = 0\nmodelc.*.use_token_latencies = 1\n"
    "modelc.Server.target_latency = 0\nmodelc.Server.ttft_latency = 2000\n"
    "modelc.Server.tpot_latency = 200\nmodeld.*.infer_token_latencies = 1\n"
    "modeld.*.token_latency_scaling_factor = 69\n";

struct Loaded {
  int rc = 0;
  TestSettings s;
  std::vector<LogMessage> msgs;
};

// Applies `text` alone (conf_type 2: no mlperf.conf, no system-only keys).
Loaded plain(const std::string& text, const std::string& model = "m", const std::string& scenario = "Server",
             int conf_type = loadgen::kConfTypeAudit) {
  Loaded l;
  l.s.scenario = Scenario::Server;
  l.rc = loadgen::apply_config_text(l.s, text, model, scenario, conf_type, &l.msgs);
  return l;
}

// A conf_type-1 call with a fresh loader, as in a fresh process.
Loaded user(const std::string& text, const std::string& model, const std::string& scenario, Scenario sc,
            const std::string& builtin = kGoldenMlperfConf) {
  Loaded l;
  l.s.scenario = sc;
  ConfigLoader loader(builtin);
  l.rc = loader.from_config_text(l.s, text, "user.conf", model, scenario, loadgen::kConfTypeUser, &l.msgs);
  return l;
}

Loaded builtin_user(const std::string& text, const std::string& model, Scenario sc) {
  Loaded l;
  l.s.scenario = sc;
  ConfigLoader loader;
  l.rc = loader.from_config_text(l.s, text, "user.conf", model, loadgen::to_string(sc), loadgen::kConfTypeUser,
                                 &l.msgs);
  return l;
}

bool has_single_error(const std::vector<LogMessage>& msgs, const std::string& text) {
  return msgs.size() == 1 && msgs[0].key == "error_invalid_config" && msgs[0].text == text && msgs[0].is_error &&
         !msgs[0].is_warning;
}

std::string temp_path(const char* name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/loadgen_test_config_" + name;
}

}  // namespace

// ---- §4.1 grammar ----------------------------------------------------------

TEST(config_spaces_around_equals_required) {
  Loaded l = plain("*.*.min_query_count=5\n");
  CHECK_EQ(l.rc, 0);
  CHECK(l.msgs.empty());
  CHECK_EQ(l.s.min_query_count, 100u);
  // "key =5" is two tokens: the second is not "=".
  l = plain("*.*.min_query_count =5\n");
  CHECK_EQ(l.rc, loadgen::kConfigInvalid);
  CHECK(has_single_error(l.msgs, "expected 'key=value', line=1"));
}

TEST(config_comment_rules) {
  Loaded l = plain("# text here\n   # indented\n*.*.min_query_count # not a value\n\n*.*.max_query_count = 7\n");
  CHECK_EQ(l.rc, 0);
  CHECK(l.msgs.empty());
  CHECK_EQ(l.s.min_query_count, 100u);
  CHECK_EQ(l.s.max_query_count, 7u);
  // "#text more": "#text" is a key, "more" is not "=".
  l = plain("*.*.max_query_count = 7\n#text more\n");
  CHECK_EQ(l.rc, loadgen::kConfigInvalid);
  CHECK(has_single_error(l.msgs, "expected 'key=value', line=2"));
  CHECK_EQ(l.s.max_query_count, 0u);  // nothing applied from the file
  // "#" after a value is another (non-numeric) value.
  l = plain("*.*.max_query_count = 7 # note\n");
  CHECK_EQ(l.rc, loadgen::kConfigInvalid);
  CHECK(has_single_error(l.msgs, "value needs to be integer or double, line=1"));
  // A lone "#" token ends the line only before the value: "key = #" errors too.
  l = plain("*.*.max_query_count = #\n");
  CHECK_EQ(l.rc, loadgen::kConfigInvalid);
  // "#word" alone on a line is a key without "=": ignored.
  l = plain("#word\n");
  CHECK_EQ(l.rc, 0);
  CHECK(l.msgs.empty());
}

TEST(config_short_lines_ignored) {
  Loaded l = plain("*.*.min_query_count\n*.*.max_query_count =\n\t \n");
  CHECK_EQ(l.rc, 0);
  CHECK(l.msgs.empty());
  CHECK_EQ(l.s.min_query_count, 100u);
  CHECK_EQ(l.s.max_query_count, 0u);
}

TEST(config_whitespace_kinds_and_crlf) {
  Loaded l = plain("\t*.*.max_query_count\t=\t300\r\n  *.Server.max_duration = 2000  \r\n");
  CHECK_EQ(l.rc, 0);
  CHECK(l.msgs.empty());
  CHECK_EQ(l.s.max_query_count, 300u);
  CHECK_EQ(l.s.max_duration_ms, 2000u);
  // No trailing newline on the last line.
  l = plain("*.*.max_query_count = 9");
  CHECK_EQ(l.s.max_query_count, 9u);
}

TEST(config_accepted_number_forms) {
  for (const char* v : {"inf", "nan", "0x10", "010", "-5", "1e3", "+3", "0x1p3", "1.", ".5", "INF", "-nan"}) {
    Loaded l = plain(std::string("*.Server.target_qps = ") + v + "\n");
    CHECK_EQ(l.rc, 0);
    CHECK(l.msgs.empty());
  }
  for (const char* v : {"fast", "1,5", "0x", "5ms", "1e", "--1", "="}) {
    Loaded l = plain(std::string("*.Server.target_qps = ") + v + "\n");
    CHECK_EQ(l.rc, loadgen::kConfigInvalid);
    CHECK(has_single_error(l.msgs, "value needs to be integer or double, line=1"));
  }
  Loaded l = plain("*.Server.target_qps = inf\n");
  CHECK(std::isinf(l.s.server_target_qps));
  l = plain("*.Server.target_qps = nan\n");
  CHECK(std::isnan(l.s.server_target_qps));
  l = plain("*.Server.target_qps = 0x10\n");
  CHECK_EQ(l.s.server_target_qps, 16.0);
}

TEST(config_several_values_last_wins_and_later_lines_override) {
  Loaded l = plain("*.Server.target_qps = 10 20\n*.Server.min_query_count = 1\n*.Server.min_query_count = 2\n");
  CHECK_EQ(l.rc, 0);
  CHECK_EQ(l.s.server_target_qps, 20.0);
  CHECK_EQ(l.s.min_query_count, 2u);
  // A bad later value on the line is still an error.
  l = plain("*.Server.target_qps = 10 x 30\n");
  CHECK_EQ(l.rc, loadgen::kConfigInvalid);
}

TEST(config_every_error_logged_nothing_applied) {
  Loaded l = plain("*.*.max_query_count = 5\nbad line\n*.*.min_query_count = x\nk = 1 2 y z\n");
  CHECK_EQ(l.rc, loadgen::kConfigInvalid);
  CHECK_EQ(l.msgs.size(), 3u);
  if (l.msgs.size() == 3) {
    CHECK_EQ(l.msgs[0].text, "expected 'key=value', line=2");
    CHECK_EQ(l.msgs[1].text, "value needs to be integer or double, line=3");
    CHECK_EQ(l.msgs[2].text, "value needs to be integer or double, line=4");
  }
  CHECK_EQ(l.s.max_query_count, 0u);
}

TEST(config_unknown_keys_ignored) {
  Loaded l = plain("*.*.test07_accuracy_threshold = 60.698\n*.Server.target_duration = 0\n");
  CHECK_EQ(l.rc, 0);
  CHECK(l.msgs.empty());
}

// ---- §4.2 lookup and conversion --------------------------------------------

TEST(config_lookup_precedence) {
  const std::string all4 = "*.*.min_query_count = 4\nm.*.min_query_count = 3\n*.Server.min_query_count = 2\n"
                           "m.Server.min_query_count = 1\n";
  CHECK_EQ(plain(all4).s.min_query_count, 1u);
  CHECK_EQ(plain("*.*.min_query_count = 4\nm.*.min_query_count = 3\n*.Server.min_query_count = 2\n").s.min_query_count,
           2u);
  CHECK_EQ(plain("*.*.min_query_count = 4\nm.*.min_query_count = 3\n").s.min_query_count, 3u);
  CHECK_EQ(plain("*.*.min_query_count = 4\n").s.min_query_count, 4u);
  // Other models and scenarios never match.
  CHECK_EQ(plain("x.*.min_query_count = 4\nm.Offline.min_query_count = 5\n").s.min_query_count, 100u);
  // Model names containing dots.
  CHECK_EQ(plain("wan-2.2-t2v-a14b.Server.min_query_count = 9\n", "wan-2.2-t2v-a14b").s.min_query_count, 9u);
  CHECK_EQ(plain("wan-2.2-t2v-a14b.*.min_query_count = 9\n", "wan-2.2").s.min_query_count, 100u);
}

TEST(config_integer_parsing_quirks) {
  CHECK_EQ(plain("*.*.min_query_count = 2.5e3\n").s.min_query_count, 2u);
  CHECK_EQ(plain("*.*.min_query_count = 1.0\n").s.min_query_count, 1u);
  CHECK_EQ(plain("*.*.min_query_count = 1e3\n").s.min_query_count, 1u);
  CHECK_EQ(plain("*.*.min_query_count = 0x10\n").s.min_query_count, 16u);
  CHECK_EQ(plain("*.*.min_query_count = 010\n").s.min_query_count, 8u);
  CHECK_EQ(plain("*.*.min_query_count = -5\n").s.min_query_count, UINT64_MAX - 4);
  CHECK_EQ(plain("*.*.max_query_count = -1\n").s.max_query_count, UINT64_MAX);
  CHECK_EQ(plain("*.*.min_query_count = inf\n").s.min_query_count, 0u);
  // Fraction dropped before the ms->ns scaling.
  CHECK_EQ(plain("*.Server.target_latency = 12.7\n").s.server_target_latency_ns, 12000000u);
  CHECK_EQ(plain("*.Server.ttft_latency = 1.9\nm.*.use_token_latencies = 1\n").s.server_ttft_latency, 1000000u);
  // Seeds: full 64-bit values.
  Loaded l = plain("*.*.qsl_rng_seed = 16159082839903944936\n", "m", "Server", loadgen::kConfTypeMlperf);
  CHECK_EQ(l.s.qsl_rng_seed, 16159082839903944936ull);
}

TEST(config_double_parsing) {
  CHECK_EQ(plain("*.Server.target_latency_percentile = 99.9\n").s.server_target_latency_percentile, 99.9 * 0.01);
  CHECK_EQ(plain("*.Server.target_latency_percentile = 99.9\n").s.server_target_latency_percentile,
           0.9990000000000001);
  CHECK_EQ(plain("*.SingleStream.target_latency_percentile = 90\n").s.single_stream_target_latency_percentile, 0.9);
  CHECK_EQ(plain("*.MultiStream.target_latency_percentile = 99\n").s.multi_stream_target_latency_percentile, 0.99);
  CHECK_EQ(plain("*.Server.target_latency_percentile = 97.5\n").s.server_target_latency_percentile, 0.975);
  CHECK_EQ(plain("*.MultiStream.target_latency = 55.5\n").s.multi_stream_expected_latency_ns, 55500000.0);
  CHECK_EQ(plain("*.SingleStream.target_latency = 0.3333333\n").s.single_stream_expected_latency_ns,
           0.3333333 * 1e6);
  CHECK_EQ(plain("*.Offline.target_qps = 30.5\n").s.offline_expected_qps, 30.5);
  CHECK_EQ(plain("*.Server.target_qps = 250.5\n").s.server_target_qps, 250.5);
}

TEST(config_boolean_keys) {
  // "==1" keys.
  CHECK(!plain("*.*.sample_concatenate_permutation = 2\n").s.sample_concatenate_permutation);
  CHECK(plain("*.*.sample_concatenate_permutation = 1\n").s.sample_concatenate_permutation);
  CHECK(plain("*.*.sample_concatenate_permutation = 1.7\n").s.sample_concatenate_permutation);
  CHECK(!plain("*.*.use_token_latencies = 2\n").s.use_token_latencies);
  CHECK(!plain("*.*.infer_token_latencies = 3\n").s.infer_token_latencies);
  // A present 0 clears an earlier true.
  {
    Loaded l;
    l.s.sample_concatenate_permutation = true;
    loadgen::apply_config_text(l.s, "*.*.sample_concatenate_permutation = 0\n", "m", "Server", 1, nullptr);
    CHECK(!l.s.sample_concatenate_permutation);
  }
  // "non-zero" keys.
  CHECK(plain("*.Server.coalesce_queries = 2\n").s.server_coalesce_queries);
  CHECK(plain("*.*.print_timestamps = 5\n").s.print_timestamps);
  CHECK(plain("*.*.performance_issue_unique = -1\n").s.performance_issue_unique);
  CHECK(plain("*.*.performance_issue_same = 7\n").s.performance_issue_same);
  CHECK(!plain("*.*.performance_issue_same = 0.9\n").s.performance_issue_same);
}

TEST(config_max_async_queries_stored_as_int) {
  CHECK_EQ(plain("*.Server.max_async_queries = 8\n").s.server_max_async_queries, 8u);
  CHECK_EQ(plain("*.Server.max_async_queries = 4294967297\n").s.server_max_async_queries, 1u);
  CHECK_EQ(plain("*.Server.max_async_queries = -1\n").s.server_max_async_queries, UINT64_MAX);
  CHECK_EQ(plain("*.Server.max_async_queries = 2147483648\n").s.server_max_async_queries,
           static_cast<uint64_t>(INT64_C(-2147483648)));
}

TEST(config_mode_key) {
  CHECK(plain("*.*.mode = 0\n").s.mode == Mode::SubmissionRun);
  CHECK(plain("*.*.mode = 1\n").s.mode == Mode::AccuracyOnly);
  CHECK(plain("*.*.mode = 2\n").s.mode == Mode::PerformanceOnly);
  CHECK(plain("*.*.mode = 3\n").s.mode == Mode::FindPeakPerformance);
  CHECK(plain("*.*.mode = 1.9\n").s.mode == Mode::AccuracyOnly);
  Loaded l = plain("*.*.mode = 1\n", "m", "Offline");
  CHECK(l.s.mode == Mode::AccuracyOnly);
  l = plain("*.Server.mode = 3\n", "m", "Offline");  // mode uses the scenario argument
  CHECK(l.s.mode == Mode::PerformanceOnly);
  for (const char* v : {"4", "7", "-1"}) {
    l = plain(std::string("*.*.mode = ") + v + "\n");
    CHECK_EQ(l.rc, 0);
    CHECK(l.s.mode == Mode::PerformanceOnly);
    CHECK(has_single_error(l.msgs, "Invalid value passed to Mode key in config."));
  }
}

// ---- §4.3 application ------------------------------------------------------

TEST(config_fixed_scenario_keys_apply_for_any_scenario) {
  const std::string text =
      "*.SingleStream.target_latency = 2\n*.MultiStream.target_latency = 3\n*.MultiStream.samples_per_query = 4\n"
      "*.SingleStream.target_latency_percentile = 50\n*.MultiStream.target_latency_percentile = 60\n"
      "*.Server.target_latency_percentile = 70\n*.Server.target_latency = 5\n*.Server.target_qps = 6\n"
      "*.Offline.target_qps = 7\n*.Server.coalesce_queries = 1\n*.Server.max_async_queries = 9\n"
      "*.Offline.min_query_count = 11\n";
  Loaded l = plain(text, "m", "Offline");
  CHECK_EQ(l.s.single_stream_expected_latency_ns, 2e6);
  CHECK_EQ(l.s.multi_stream_expected_latency_ns, 3e6);
  CHECK_EQ(l.s.multi_stream_samples_per_query, 4u);
  CHECK_EQ(l.s.single_stream_target_latency_percentile, 50 * 0.01);
  CHECK_EQ(l.s.multi_stream_target_latency_percentile, 60 * 0.01);
  CHECK_EQ(l.s.server_target_latency_percentile, 70 * 0.01);  // 0.7000000000000001
  CHECK_EQ(l.s.server_target_latency_ns, 5000000u);
  CHECK_EQ(l.s.server_target_qps, 6.0);
  CHECK_EQ(l.s.offline_expected_qps, 7.0);
  CHECK(l.s.server_coalesce_queries);
  CHECK_EQ(l.s.server_max_async_queries, 9u);
  CHECK_EQ(l.s.min_query_count, 11u);  // argument-scenario key
  // The argument scenario does not pull in keys of another scenario.
  l = plain("*.Server.min_query_count = 11\n*.Offline.target_latency_percentile = 10\n", "m", "Offline");
  CHECK_EQ(l.s.min_query_count, 100u);
  CHECK_EQ(l.s.server_target_latency_percentile, 0.99);
}

TEST(config_argument_scenario_keys) {
  const std::string text =
      "*.SingleStream.min_duration = 1\n*.SingleStream.max_duration = 2\n*.SingleStream.max_query_count = 3\n"
      "*.SingleStream.performance_sample_count_override = 4\n*.SingleStream.accuracy_sample_count_override = 5\n"
      "*.SingleStream.performance_issue_same_index = 6\n*.SingleStream.accuracy_log_rng_seed = 7\n"
      "*.SingleStream.accuracy_log_sampling_target = 8\n";
  Loaded l = plain(text, "m", "SingleStream");
  CHECK_EQ(l.s.min_duration_ms, 1u);
  CHECK_EQ(l.s.max_duration_ms, 2u);
  CHECK_EQ(l.s.max_query_count, 3u);
  CHECK_EQ(l.s.performance_sample_count_override, 4u);
  CHECK_EQ(l.s.accuracy_sample_count_override, 5u);
  CHECK_EQ(l.s.performance_issue_same_index, 6u);
  CHECK_EQ(l.s.accuracy_log_rng_seed, 7u);
  CHECK_EQ(l.s.accuracy_log_sampling_target, 8u);
  l = plain(text, "m", "Server");
  CHECK_EQ(l.s.min_duration_ms, 10000u);
  CHECK_EQ(l.s.accuracy_log_sampling_target, 0u);
}

TEST(config_system_only_keys) {
  const std::string text =
      "*.*.qsl_rng_seed = 5\n*.*.sample_index_rng_seed = 6\n*.*.schedule_rng_seed = 7\n"
      "*.*.accuracy_log_probability = 50\n*.*.test05 = 1\n*.*.test05_qsl_rng_seed = 8\n"
      "*.*.test05_sample_index_rng_seed = 9\n*.*.test05_schedule_rng_seed = 10\n";
  for (int conf_type : {loadgen::kConfTypeUser, loadgen::kConfTypeAudit}) {
    Loaded l = plain(text, "m", "Server", conf_type);
    CHECK_EQ(l.s.qsl_rng_seed, 0u);
    CHECK_EQ(l.s.accuracy_log_probability, 0.0);
    CHECK(!l.s.test05);
    CHECK_EQ(l.s.test05_schedule_rng_seed, 0u);
  }
  Loaded l = plain(text, "m", "Server", loadgen::kConfTypeMlperf);
  CHECK_EQ(l.s.qsl_rng_seed, 5u);
  CHECK_EQ(l.s.sample_index_rng_seed, 6u);
  CHECK_EQ(l.s.schedule_rng_seed, 7u);
  CHECK_EQ(l.s.accuracy_log_probability, 0.5);
  CHECK(l.s.test05);
  CHECK_EQ(l.s.test05_qsl_rng_seed, 8u);
  CHECK_EQ(l.s.test05_sample_index_rng_seed, 9u);
  CHECK_EQ(l.s.test05_schedule_rng_seed, 10u);
  // test05 is "==1".
  l = plain("*.*.test05 = 2\n", "m", "Server", loadgen::kConfTypeMlperf);
  CHECK(!l.s.test05);
}

TEST(config_token_keys_are_conditional) {
  // Without the flag, ttft/tpot are not read.
  Loaded l = plain("*.Server.ttft_latency = 5\n*.Server.tpot_latency = 6\n");
  CHECK_EQ(l.s.server_ttft_latency, 100000000u);
  CHECK_EQ(l.s.server_tpot_latency, 100000000u);
  // With the flag in the same text, read under the fixed Server scenario.
  l = plain("*.Server.ttft_latency = 5\n*.Server.tpot_latency = 6\nm.*.use_token_latencies = 1\n", "m", "Offline");
  CHECK(l.s.use_token_latencies);
  CHECK_EQ(l.s.server_ttft_latency, 5000000u);
  CHECK_EQ(l.s.server_tpot_latency, 6000000u);
  l = plain("*.Offline.ttft_latency = 5\nm.*.use_token_latencies = 1\n", "m", "Offline");
  CHECK_EQ(l.s.server_ttft_latency, 100000000u);
  // The flag may come from an earlier call (the struct's value counts).
  TestSettings s;
  s.use_token_latencies = true;
  loadgen::apply_config_text(s, "*.Server.ttft_latency = 7\n", "m", "Server", 1, nullptr);
  CHECK_EQ(s.server_ttft_latency, 7000000u);
  // ... and an explicit 0 in this call switches the reading off.
  s = TestSettings();
  s.use_token_latencies = true;
  loadgen::apply_config_text(s, "*.*.use_token_latencies = 0\n*.Server.ttft_latency = 7\n", "m", "Server", 1, nullptr);
  CHECK(!s.use_token_latencies);
  CHECK_EQ(s.server_ttft_latency, 100000000u);
  // Scaling factor only with infer_token_latencies.
  l = plain("*.*.token_latency_scaling_factor = 69\n");
  CHECK_EQ(l.s.token_latency_scaling_factor, 0u);
  l = plain("*.*.token_latency_scaling_factor = 69\n*.*.infer_token_latencies = 1\n");
  CHECK(l.s.infer_token_latencies);
  CHECK_EQ(l.s.token_latency_scaling_factor, 69u);
}

// ---- conf_type 1 behaviour -------------------------------------------------

TEST(config_first_user_conf_applies_mlperf_conf) {
  Loaded l = user("modela.Server.target_qps = 100\n", "modela", "Server", Scenario::Server);
  CHECK_EQ(l.rc, 0);
  CHECK(l.msgs.empty());
  CHECK_EQ(l.s.server_target_qps, 100.0);
  CHECK_EQ(l.s.qsl_rng_seed, 111u);
  CHECK_EQ(l.s.accuracy_log_probability, 0.05);
  CHECK_EQ(l.s.server_target_latency_ns, 15000000u);
  CHECK_EQ(l.s.performance_sample_count_override, 2048u);
  // The user conf cannot set the seeds.
  l = user("*.*.qsl_rng_seed = 5\n", "modela", "Server", Scenario::Server);
  CHECK_EQ(l.s.qsl_rng_seed, 111u);
}

TEST(config_second_user_conf_logs_error_and_skips_mlperf_conf) {
  ConfigLoader loader(kGoldenMlperfConf);
  std::vector<LogMessage> msgs;
  TestSettings s;
  s.scenario = Scenario::Server;
  CHECK_EQ(loader.from_config_text(s, "modela.Server.target_qps = 100\n", "user.conf", "modela", "Server", 1, &msgs),
           0);
  CHECK(msgs.empty());
  CHECK_EQ(loader.from_config_text(s, "modela.Server.min_query_count = 4321\n", "user2.conf", "modela", "Server", 1,
                                   &msgs),
           0);
  CHECK(has_single_error(msgs, "Multiple conf files are used. This is not valid for official submission."));
  CHECK_EQ(s.server_target_qps, 100.0);
  CHECK_EQ(s.min_query_count, 4321u);
  CHECK_EQ(loader.user_conf_calls(), 2);
  // A second settings object configured later gets no mlperf.conf values.
  TestSettings t;
  msgs.clear();
  CHECK_EQ(loader.from_config_text(t, "*.*.max_query_count = 3\n", "u", "modela", "Server", 1, &msgs), 0);
  CHECK_EQ(msgs.size(), 1u);
  CHECK_EQ(t.qsl_rng_seed, 0u);
  CHECK_EQ(t.performance_sample_count_override, 0u);
  CHECK_EQ(t.max_query_count, 3u);
  // conf_type 2 and 0 calls do not count.
  ConfigLoader fresh(kGoldenMlperfConf);
  TestSettings u;
  fresh.from_config_text(u, "", "audit.config", "*", "Server", 2, nullptr);
  fresh.from_config_text(u, "", "", "modela", "Server", 0, nullptr);
  CHECK_EQ(fresh.user_conf_calls(), 0);
  CHECK_EQ(u.qsl_rng_seed, 111u);  // conf_type 0 applied the built-in text
}

TEST(config_bad_mlperf_conf_still_applies_user_conf) {
  Loaded l = user("modela.Server.target_qps = 42\n", "modela", "Server", Scenario::Server,
                  std::string(kGoldenMlperfConf) + "modela.Server.min_query_count 5000\n");
  CHECK_EQ(l.rc, 0);
  CHECK(has_single_error(l.msgs, "expected 'key=value', line=36"));
  CHECK_EQ(l.s.server_target_qps, 42.0);
  CHECK_EQ(l.s.qsl_rng_seed, 0u);
  CHECK_EQ(l.s.min_duration_ms, 10000u);
}

TEST(config_bad_user_conf_keeps_mlperf_conf) {
  Loaded l = user("modela.Server.target_qps = 300\nmodela.Server.min_query_count 5000\n", "modela", "Server",
                  Scenario::Server);
  CHECK_EQ(l.rc, loadgen::kConfigInvalid);
  CHECK(has_single_error(l.msgs, "expected 'key=value', line=2"));
  CHECK_EQ(l.s.server_target_qps, 1.0);
  CHECK_EQ(l.s.qsl_rng_seed, 111u);
}

TEST(config_file_variants) {
  const std::string missing = temp_path("does_not_exist.conf");
  std::remove(missing.c_str());
  ConfigLoader loader(kGoldenMlperfConf);
  std::vector<LogMessage> msgs;
  TestSettings s;
  CHECK_EQ(loader.from_config_file(s, missing, "modela", "Server", 1, &msgs), loadgen::kConfigNotFound);
  CHECK(has_single_error(msgs, "can't open file " + missing));
  CHECK_EQ(s.qsl_rng_seed, 111u);  // mlperf.conf was applied before
  // A second call that cannot open its file logs both errors, in order.
  msgs.clear();
  CHECK_EQ(loader.from_config_file(s, missing, "modela", "Server", 1, &msgs), loadgen::kConfigNotFound);
  CHECK_EQ(msgs.size(), 2u);
  if (msgs.size() == 2) {
    CHECK_EQ(msgs[0].text, "Multiple conf files are used. This is not valid for official submission.");
    CHECK_EQ(msgs[1].text, "can't open file " + missing);
  }
  // A real file.
  const std::string path = temp_path("user.conf");
  {
    std::ofstream out(path);
    out << "modela.Server.target_qps = 77\n";
  }
  ConfigLoader loader2(kGoldenMlperfConf);
  TestSettings t;
  msgs.clear();
  CHECK_EQ(loader2.from_config_file(t, path, "modela", "Server", 1, &msgs), 0);
  CHECK(msgs.empty());
  CHECK_EQ(t.server_target_qps, 77.0);
  CHECK_EQ(t.qsl_rng_seed, 111u);
  std::remove(path.c_str());
}

// ---- built-in mlperf.conf --------------------------------------------------

TEST(mlperf_conf_seeds_and_wildcards) {
  Loaded l = builtin_user("", "unknown-model", Scenario::Server);
  CHECK_EQ(l.rc, 0);
  CHECK(l.msgs.empty());
  CHECK_EQ(l.s.qsl_rng_seed, 2085463073848966840ull);
  CHECK_EQ(l.s.sample_index_rng_seed, 2747215439041700203ull);
  CHECK_EQ(l.s.schedule_rng_seed, 16159082839903944936ull);
  CHECK_EQ(l.s.test05_qsl_rng_seed, 7975553102935885558ull);
  CHECK_EQ(l.s.test05_sample_index_rng_seed, 11403566307062068064ull);
  CHECK_EQ(l.s.test05_schedule_rng_seed, 15816800565822761601ull);
  CHECK(!l.s.test05);
  CHECK_EQ(l.s.accuracy_log_probability, 0.0);
  CHECK_EQ(l.s.single_stream_expected_latency_ns, 10000000.0);
  CHECK_EQ(l.s.single_stream_target_latency_percentile, 0.9);
  CHECK_EQ(l.s.multi_stream_expected_latency_ns, 80000000.0);
  CHECK_EQ(l.s.multi_stream_target_latency_percentile, 0.99);
  CHECK_EQ(l.s.multi_stream_samples_per_query, 8u);
  CHECK_EQ(l.s.server_target_latency_ns, 10000000u);
  CHECK_EQ(l.s.server_target_latency_percentile, 0.99);
  CHECK_EQ(l.s.server_target_qps, 1.0);
  CHECK_EQ(l.s.offline_expected_qps, 1.0);
  CHECK_EQ(l.s.min_duration_ms, 600000u);
  CHECK_EQ(l.s.min_query_count, 100u);
  CHECK_EQ(l.s.performance_sample_count_override, 0u);
  l = builtin_user("", "unknown-model", Scenario::MultiStream);
  CHECK_EQ(l.s.min_query_count, 662u);
}

TEST(mlperf_conf_model_values) {
  Loaded l = builtin_user("", "resnet50", Scenario::Server);
  CHECK_EQ(l.s.server_target_latency_ns, 15000000u);
  CHECK_EQ(l.s.performance_sample_count_override, 1024u);
  l = builtin_user("", "resnet50", Scenario::Offline);
  CHECK_EQ(l.s.min_query_count, 24576u);
  CHECK_EQ(l.s.server_target_latency_ns, 15000000u);  // fixed-scenario key
  l = builtin_user("", "llama2-70b", Scenario::Server);
  CHECK(l.s.use_token_latencies);
  CHECK(l.s.sample_concatenate_permutation);
  CHECK_EQ(l.s.server_target_latency_ns, 0u);
  CHECK_EQ(l.s.server_ttft_latency, 2000000000u);
  CHECK_EQ(l.s.server_tpot_latency, 200000000u);
  CHECK_EQ(l.s.performance_sample_count_override, 24576u);
  l = builtin_user("", "llama2-70b-interactive", Scenario::Server);
  CHECK_EQ(l.s.server_ttft_latency, 450000000u);
  CHECK_EQ(l.s.server_tpot_latency, 40000000u);
  l = builtin_user("", "3d-unet", Scenario::Offline);
  CHECK(l.s.sample_concatenate_permutation);
  CHECK_EQ(l.s.performance_sample_count_override, 0u);
  CHECK_EQ(l.s.min_query_count, 43u);
  l = builtin_user("", "gpt-oss-120b", Scenario::SingleStream);
  CHECK_EQ(l.s.performance_sample_count_override, 6396u);
  CHECK_EQ(l.s.accuracy_sample_count_override, 4395u);
  CHECK_EQ(l.s.server_ttft_latency, 3000000000u);
  CHECK_EQ(l.s.server_tpot_latency, 80000000u);
  l = builtin_user("", "gpt-oss-120b-interactive", Scenario::Server);
  CHECK_EQ(l.s.accuracy_sample_count_override, 4395u);
  CHECK_EQ(l.s.server_tpot_latency, 15000000u);
  l = builtin_user("", "gptj", Scenario::Offline);
  CHECK(l.s.infer_token_latencies);
  CHECK(!l.s.use_token_latencies);
  CHECK_EQ(l.s.token_latency_scaling_factor, 69u);
  CHECK_EQ(l.s.min_query_count, 13368u);
  CHECK_EQ(l.s.server_target_latency_ns, 20000000000u);
  l = builtin_user("", "pointpainting", Scenario::SingleStream);
  CHECK_EQ(l.s.single_stream_target_latency_percentile, 0.9990000000000001);
  l = builtin_user("", "retinanet", Scenario::MultiStream);
  CHECK_EQ(l.s.multi_stream_expected_latency_ns, 528000000.0);
  CHECK_EQ(l.s.performance_sample_count_override, 64u);
  l = builtin_user("", "wan-2.2-t2v-a14b", Scenario::Offline);
  CHECK_EQ(l.s.performance_sample_count_override, 248u);
  CHECK_EQ(l.s.min_query_count, 248u);
  l = builtin_user("", "qwen3-vl-235b-a22b", Scenario::Server);
  CHECK(!l.s.use_token_latencies);
  CHECK(l.s.sample_concatenate_permutation);
  CHECK_EQ(l.s.server_target_latency_ns, 12000000000u);
  l = builtin_user("", "dlrm-v3", Scenario::Server);
  CHECK_EQ(l.s.server_target_latency_ns, 80000000u);
  CHECK_EQ(l.s.performance_sample_count_override, 0u);
  l = builtin_user("", "rgat", Scenario::Offline);
  CHECK_EQ(l.s.min_query_count, 788379u);
  CHECK_EQ(l.s.performance_sample_count_override, 788379u);
  l = builtin_user("", "deepseek-r1-interactive", Scenario::Server);
  CHECK_EQ(l.s.server_ttft_latency, 1500000000u);
  CHECK_EQ(l.s.server_tpot_latency, 15000000u);
}

// ---- audit.config ----------------------------------------------------------

TEST(audit_config_applies_wildcard_model_only) {
  TestSettings s;
  s.scenario = Scenario::Offline;
  std::vector<LogMessage> msgs;
  const int rc = loadgen::apply_audit_config_text(
      s,
      "*.*.mode = 2\n*.*.accuracy_log_rng_seed = 720381539243781796\n*.*.accuracy_log_sampling_target = 64\n"
      "*.Offline.performance_issue_same = 1\n*.Offline.performance_issue_same_index = 3\n"
      "*.Server.performance_issue_unique = 1\nresnet50.Offline.min_query_count = 500\n"
      "*.*.qsl_rng_seed = 1\n*.*.test05 = 1\n",
      &msgs);
  CHECK_EQ(rc, 0);
  CHECK_EQ(msgs.size(), 1u);
  if (!msgs.empty()) {
    CHECK_EQ(msgs[0].key, "warning_generic_message");
    CHECK_EQ(msgs[0].text,
             "Found Audit Config file (audit.config). Overriding TestSettings from audit.config file.");
    CHECK(msgs[0].is_warning);
    CHECK(!msgs[0].is_error);
  }
  CHECK(s.mode == Mode::PerformanceOnly);
  CHECK_EQ(s.accuracy_log_rng_seed, 720381539243781796ull);
  CHECK_EQ(s.accuracy_log_sampling_target, 64u);
  CHECK(s.performance_issue_same);
  CHECK_EQ(s.performance_issue_same_index, 3u);
  CHECK(!s.performance_issue_unique);
  CHECK_EQ(s.min_query_count, 100u);
  CHECK_EQ(s.qsl_rng_seed, 0u);
  CHECK(!s.test05);
}

TEST(audit_config_errors_and_files) {
  TestSettings s;
  std::vector<LogMessage> msgs;
  CHECK_EQ(loadgen::apply_audit_config_text(s, "*.*.mode = 2 # x\n", &msgs), loadgen::kConfigInvalid);
  CHECK_EQ(msgs.size(), 2u);
  if (msgs.size() == 2) CHECK_EQ(msgs[1].text, "value needs to be integer or double, line=1");
  CHECK(s.mode == Mode::PerformanceOnly);
  // Missing file: nothing happens at all.
  msgs.clear();
  const std::string missing = temp_path("no_audit.config");
  std::remove(missing.c_str());
  int rc = 99;
  CHECK(!loadgen::apply_audit_config_file(s, missing, &msgs, &rc));
  CHECK(msgs.empty());
  CHECK_EQ(rc, 99);
  const std::string path = temp_path("audit.config");
  {
    std::ofstream out(path);
    out << "*.*.mode = 1\n";
  }
  CHECK(loadgen::apply_audit_config_file(s, path, &msgs, &rc));
  CHECK_EQ(rc, 0);
  CHECK(s.mode == Mode::AccuracyOnly);
  CHECK_EQ(msgs.size(), 1u);
  std::remove(path.c_str());
}

// ---- golden settings_derivation.json cases, end to end ---------------------

namespace {

struct Derived {
  Loaded l;
  EffectiveSettings e;
  loadgen::LogEntries requested, effective;
  std::vector<std::pair<std::string, std::string>> errors;
};

Derived derive(Loaded l, uint64_t total, uint64_t pc) {
  Derived d;
  d.l = std::move(l);
  d.e = loadgen::derive_effective(d.l.s, total, pc, &d.l.msgs);
  d.requested = loadgen::requested_settings_entries(d.l.s);
  d.effective = loadgen::effective_settings_entries(d.e);
  for (const LogMessage& m : d.l.msgs) d.errors.emplace_back(m.key, loadgen::log_value_text(m));
  return d;
}

std::string entry(const loadgen::LogEntries& entries, const std::string& key) {
  for (const auto& kv : entries)
    if (kv.first == key) return kv.second;
  return "<absent>";
}

}  // namespace

TEST(golden_builtin_resnet50_offline) {
  Derived d = derive(builtin_user("*.Offline.target_qps = 5000\n", "resnet50", Scenario::Offline), 50000, 1024);
  CHECK_EQ(d.l.rc, 0);
  CHECK_EQ(d.e.samples_per_query, 3300000u);
  CHECK_EQ(d.e.min_sample_count, 3300000u);
  CHECK_EQ(d.e.min_query_count, 1u);
  CHECK_EQ(d.e.target_duration_ms, 0u);
  CHECK_EQ(d.e.performance_sample_count, 1024u);
  CHECK_EQ(d.requested.size(), 20u);
  CHECK_EQ(entry(d.requested, "requested_offline_expected_qps"), "5000");
  CHECK_EQ(entry(d.requested, "requested_min_query_count"), "24576");
  CHECK_EQ(entry(d.requested, "requested_schedule_rng_seed"), "16159082839903944936");
  CHECK_EQ(entry(d.effective, "effective_samples_per_query"), "3300000");
  CHECK_EQ(entry(d.effective, "effective_scenario"), "\"Offline\"");
  CHECK(d.errors.empty());
}

TEST(golden_builtin_3dunet_singlestream) {
  Derived d = derive(builtin_user("3d-unet.SingleStream.target_latency = 400\n", "3d-unet", Scenario::SingleStream),
                     43, 43);
  CHECK_EQ(d.e.target_qps, 2.5);
  CHECK_EQ(d.e.min_query_count, 3010u);
  CHECK_EQ(d.e.min_sample_count, 3010u);
  CHECK_EQ(d.e.performance_sample_count, 43u);
  CHECK_EQ(entry(d.requested, "requested_single_stream_expected_latency_ns"), "4e+08");
  CHECK_EQ(entry(d.requested, "requested_sample_concatenate_permutation"), "true");
  CHECK_EQ(entry(d.effective, "effective_target_qps"), "2.5");
}

TEST(golden_builtin_retinanet_multistream) {
  Derived d = derive(builtin_user("# nothing to override\n", "retinanet", Scenario::MultiStream), 50000, 1024);
  CHECK_EQ(d.e.target_qps, 1.893939393939394);
  CHECK_EQ(d.e.min_sample_count, 5296u);
  CHECK_EQ(entry(d.requested, "requested_multi_stream_expected_latency_ns"), "5.28e+08");
  CHECK_EQ(entry(d.effective, "effective_target_qps"), "1.89394");
  CHECK_EQ(entry(d.effective, "effective_performance_sample_count"), "64");
}

TEST(golden_precedence_case) {
  Derived d = derive(user("# precedence test\n*.*.min_query_count = 500\nmodela.*.min_query_count = 600\n"
                          "*.Server.min_query_count = 700\nmodela.Server.target_qps = 250.5\n"
                          "*.Server.target_qps = 99\n*.*.max_query_count = 123\nmodela.*.max_query_count = 456\n",
                          "modela", "Server", Scenario::Server),
                     50000, 1024);
  CHECK_EQ(d.l.rc, 0);
  CHECK_EQ(d.l.s.min_query_count, 700u);
  CHECK_EQ(d.l.s.max_query_count, 456u);
  CHECK_EQ(d.l.s.server_target_qps, 250.5);
  CHECK_EQ(d.e.performance_sample_count, 2048u);
  CHECK_EQ(d.e.accuracy_sample_count, 50000u);
  CHECK_EQ(entry(d.requested, "requested_accuracy_log_probability"), "0.05");
  CHECK_EQ(entry(d.effective, "effective_target_latency_ns"), "15000000");
  CHECK(d.errors.empty());
}

TEST(golden_trailing_comment_error_case) {
  Derived d = derive(user("modela.Server.target_qps = 300 # too fast?\n", "modela", "Server", Scenario::Server),
                     50000, 1024);
  CHECK_EQ(d.l.rc, -22);
  CHECK_EQ(d.errors.size(), 1u);
  if (d.errors.size() == 1) {
    CHECK_EQ(d.errors[0].first, "error_invalid_config");
    CHECK_EQ(d.errors[0].second, "\"value needs to be integer or double, line=1\"");
  }
  CHECK_EQ(entry(d.requested, "requested_server_target_qps"), "1");
  CHECK_EQ(entry(d.effective, "effective_target_qps"), "1");
}

TEST(golden_token_server_case) {
  Derived d = derive(user("modelc.Server.target_qps = 3.5\n", "modelc", "Server", Scenario::Server), 50000, 1024);
  CHECK_EQ(d.e.server_ttft_latency, 2000000000);
  CHECK_EQ(d.e.server_tpot_latency, 200000000);
  CHECK_EQ(d.e.target_latency_ns, 0);
  const size_t n = d.requested.size();
  CHECK_EQ(n, 30u);
  if (n == 30) {
    CHECK_EQ(d.requested[27].first, "requested_use_token_latencies");
    CHECK_EQ(d.requested[27].second, "true");
    CHECK_EQ(d.requested[28].first, "requested_server_ttft_latency");
    CHECK_EQ(d.requested[28].second, "2000000000");
    CHECK_EQ(d.requested[29].first, "requested_server_tpot_latency");
    CHECK_EQ(d.requested[29].second, "200000000");
  }
}

TEST(golden_equal_issue_and_infer_tokens_cases) {
  Derived d = derive(user("modelb.SingleStream.target_latency = 2\n", "modelb", "SingleStream",
                          Scenario::SingleStream),
                     500, 500);
  CHECK_EQ(d.e.target_qps, 500.0);
  CHECK_EQ(d.e.min_query_count, 600500u);
  CHECK_EQ(entry(d.requested, "requested_single_stream_expected_latency_ns"), "2e+06");
  d = derive(user("modeld.Offline.target_qps = 20\n", "modeld", "Offline", Scenario::Offline), 50000, 1024);
  CHECK_EQ(d.e.samples_per_query, 13200u);
  CHECK_EQ(d.e.token_latency_scaling_factor, 69);
  CHECK_EQ(entry(d.requested, "requested_use_token_latencies"), "<absent>");
  d = derive(user("modela.Offline.target_qps = 30.5\n", "modela", "Offline", Scenario::Offline), 50000, 1024);
  CHECK_EQ(d.e.samples_per_query, 24576u);
  CHECK_EQ(d.e.min_sample_count, 24576u);
}

TEST(golden_mode_invalid_and_test05_cases) {
  Derived d = derive(user("*.*.mode = 7\n", "modela", "Offline", Scenario::Offline), 50000, 1024);
  CHECK_EQ(d.l.rc, 0);
  CHECK_EQ(d.errors.size(), 1u);
  if (!d.errors.empty()) CHECK_EQ(d.errors[0].second, "\"Invalid value passed to Mode key in config.\"");
  CHECK_EQ(entry(d.requested, "requested_test_mode"), "\"PerformanceOnly\"");
  CHECK_EQ(d.l.s.min_query_count, 24576u);
  // test05 from the system config sets the flag and the test05 seeds only.
  Loaded l = user("# empty\n", "modela", "SingleStream", Scenario::SingleStream,
                  std::string(kGoldenMlperfConf) + "*.*.test05 = 1\n");
  CHECK(l.s.test05);
  CHECK_EQ(l.s.qsl_rng_seed, 111u);
  CHECK_EQ(l.s.test05_qsl_rng_seed, 444u);
  d = derive(l, 50000, 1024);
  CHECK_EQ(entry(d.effective, "effective_qsl_rng_seed"), "111");
  CHECK_EQ(d.e.target_qps, 100.0);
}

// ---- provenance (loadgen extension) -----------------------------------------

namespace {

// The last provenance record of `field`, or null.
const loadgen::ConfigProvenance* last_record(const std::vector<loadgen::ConfigProvenance>& p, const std::string& field) {
  const loadgen::ConfigProvenance* found = nullptr;
  for (const auto& r : p)
    if (r.field == field) found = &r;
  return found;
}

}  // namespace

TEST(config_provenance_reports_winning_key_line_and_raw_value) {
  TestSettings s;
  s.scenario = Scenario::Server;
  std::vector<LogMessage> msgs;
  std::vector<loadgen::ConfigProvenance> prov;
  ConfigLoader loader(kGoldenMlperfConf);
  const std::string text =
      "# user\n*.*.min_query_count = 500\nmodela.Server.min_query_count = 0x20\nmodela.*.max_query_count = 7 9\n"
      "*.Server.target_latency = 12.7\n";
  const int rc = loader.from_config_text(s, text, "conf/user.conf", "modela", "Server", loadgen::kConfTypeUser,
                                         &msgs, &prov);
  CHECK_EQ(rc, 0);
  CHECK(msgs.empty());
  // The same values as without provenance.
  TestSettings plain_settings;
  plain_settings.scenario = Scenario::Server;
  ConfigLoader loader2(kGoldenMlperfConf);
  loader2.from_config_text(plain_settings, text, "conf/user.conf", "modela", "Server", loadgen::kConfTypeUser, nullptr);
  CHECK_EQ(plain_settings.min_query_count, s.min_query_count);
  CHECK_EQ(plain_settings.server_target_latency_ns, s.server_target_latency_ns);

  const loadgen::ConfigProvenance* r = last_record(prov, "min_query_count");
  CHECK(r != nullptr);
  if (r != nullptr) {
    CHECK_EQ(r->key, "modela.Server.min_query_count");  // M.S beats *.*
    CHECK_EQ(r->source, "conf/user.conf");
    CHECK_EQ(r->line, 3);
    CHECK_EQ(r->value, "0x20");
    CHECK_EQ(r->conf_type, loadgen::kConfTypeUser);
  }
  CHECK_EQ(s.min_query_count, 32u);
  r = last_record(prov, "max_query_count");
  CHECK(r != nullptr);
  if (r != nullptr) {
    CHECK_EQ(r->value, "9");  // the last value of the line
    CHECK_EQ(r->line, 4);
  }
  r = last_record(prov, "server_target_latency_ns");
  CHECK(r != nullptr);
  if (r != nullptr) {
    CHECK_EQ(r->key, "*.Server.target_latency");
    CHECK_EQ(r->value, "12.7");
    CHECK_EQ(r->line, 5);
  }
  // Seeds came from the built-in text (conf_type 0), under its label.
  r = last_record(prov, "qsl_rng_seed");
  CHECK(r != nullptr);
  if (r != nullptr) {
    CHECK_EQ(r->source, loadgen::kBuiltinMlperfConfLabel);
    CHECK_EQ(r->conf_type, loadgen::kConfTypeMlperf);
    CHECK_EQ(r->key, "*.*.qsl_rng_seed");
    CHECK_EQ(r->line, 2);
    CHECK_EQ(r->value, "111");
  }
  // min_duration was set by mlperf.conf only; the user's file never touched it.
  r = last_record(prov, "min_duration_ms");
  CHECK(r != nullptr);
  if (r != nullptr) CHECK_EQ(r->conf_type, loadgen::kConfTypeMlperf);
  // Fields nobody set have no record.
  CHECK(last_record(prov, "print_timestamps") == nullptr);
}

TEST(config_provenance_later_line_wins_and_label_override) {
  TestSettings s;
  std::vector<loadgen::ConfigProvenance> prov;
  ConfigLoader loader("*.*.min_query_count = 1\n*.*.min_query_count = 2\n");
  loader.set_builtin_label("/etc/mlperf.conf");
  CHECK_EQ(loader.from_config_text(s, "", "mlperf.conf", "m", "Offline", loadgen::kConfTypeMlperf, nullptr, &prov), 0);
  CHECK_EQ(prov.size(), 1u);
  if (prov.size() == 1) {
    CHECK_EQ(prov[0].line, 2);
    CHECK_EQ(prov[0].value, "2");
    CHECK_EQ(prov[0].source, "/etc/mlperf.conf");
  }
}

TEST(config_provenance_nothing_for_failed_file_or_invalid_mode) {
  TestSettings s;
  std::vector<LogMessage> msgs;
  std::vector<loadgen::ConfigProvenance> prov;
  CHECK_EQ(loadgen::apply_config_text(s, "*.*.min_query_count = 5\n*.*.max_query_count = x\n", "m", "Server", 2,
                                      &msgs, &prov, "u"),
           loadgen::kConfigInvalid);
  CHECK(prov.empty());
  msgs.clear();
  CHECK_EQ(loadgen::apply_config_text(s, "*.*.mode = 7\n*.*.min_query_count = 5\n", "m", "Server", 2, &msgs, &prov,
                                      "u"),
           0);
  CHECK_EQ(prov.size(), 1u);
  if (!prov.empty()) CHECK_EQ(prov[0].field, "min_query_count");
  prov.clear();
  CHECK_EQ(loadgen::apply_config_text(s, "*.*.mode = 1\n*.Server.max_async_queries = 4294967297\n", "m", "Server", 2,
                                      &msgs, &prov, "u"),
           0);
  CHECK_EQ(prov.size(), 2u);
  CHECK(last_record(prov, "mode") != nullptr);
  const loadgen::ConfigProvenance* r = last_record(prov, "server_max_async_queries");
  CHECK(r != nullptr);
  if (r != nullptr) CHECK_EQ(r->value, "4294967297");
  CHECK_EQ(s.server_max_async_queries, 1u);
}

TEST(config_provenance_audit_and_conditional_token_keys) {
  TestSettings s;
  s.scenario = Scenario::Offline;
  std::vector<LogMessage> msgs;
  std::vector<loadgen::ConfigProvenance> prov;
  // Token keys not read while use_token_latencies is false: no record.
  const std::string text =
      "*.*.mode = 2\nmodelx.Offline.min_query_count = 20\n*.Offline.min_query_count = 30\n*.Server.ttft_latency = 9\n";
  CHECK_EQ(loadgen::apply_audit_config_text(s, text, &msgs, &prov, "/tmp/x/audit.config"), 0);
  CHECK_EQ(msgs.size(), 1u);  // the audit warning only
  CHECK(last_record(prov, "server_ttft_latency") == nullptr);
  const loadgen::ConfigProvenance* r = last_record(prov, "min_query_count");
  CHECK(r != nullptr);
  if (r != nullptr) {
    CHECK_EQ(r->key, "*.Offline.min_query_count");  // model lines never match model "*"
    CHECK_EQ(r->line, 3);
    CHECK_EQ(r->source, "/tmp/x/audit.config");
    CHECK_EQ(r->conf_type, loadgen::kConfTypeAudit);
  }
  // From a file: the path is the source.
  const std::string path = temp_path("audit_prov");
  {
    std::ofstream out(path);
    out << "*.*.min_duration = 0\n";
  }
  prov.clear();
  int rc = 1;
  CHECK(loadgen::apply_audit_config_file(s, path, &msgs, &rc, &prov));
  CHECK_EQ(rc, 0);
  CHECK_EQ(prov.size(), 1u);
  if (!prov.empty()) CHECK_EQ(prov[0].source, path);
  std::remove(path.c_str());
}

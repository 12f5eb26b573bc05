// FromConfig grammar, lookup and application order (spec/10 §4, spec/60
// §3.12); the built-in mlperf.conf, audit.config, golden settings_derivation
// cases and provenance are in test_config_files.cc.
#include "config_test_util.h"

using namespace config_test;  // NOLINT: this file's own helpers

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

// The built-in mlperf.conf, audit.config, golden settings_derivation cases
// end to end, and provenance (spec/10 §5); the grammar is test_config.cc.
#include "config_test_util.h"

using namespace config_test;  // NOLINT: the config tests' shared helpers

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

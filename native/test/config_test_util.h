// Shared by the config tests (test_config.cc, test_config_files.cc): the
// small system config of the golden settings_derivation cases and the ways
// they apply config text.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
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


namespace config_test {
// The small system config used by the golden settings_derivation cases.
inline const char kGoldenMlperfConf[] =
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
inline Loaded plain(const std::string& text, const std::string& model = "m", const std::string& scenario = "Server",
             int conf_type = loadgen::kConfTypeAudit) {
  Loaded l;
  l.s.scenario = Scenario::Server;
  l.rc = loadgen::apply_config_text(l.s, text, model, scenario, conf_type, &l.msgs);
  return l;
}

// A conf_type-1 call with a fresh loader, as in a fresh process.
inline Loaded user(const std::string& text, const std::string& model, const std::string& scenario, Scenario sc,
            const std::string& builtin = kGoldenMlperfConf) {
  Loaded l;
  l.s.scenario = sc;
  ConfigLoader loader(builtin);
  l.rc = loader.from_config_text(l.s, text, "user.conf", model, scenario, loadgen::kConfTypeUser, &l.msgs);
  return l;
}

inline Loaded builtin_user(const std::string& text, const std::string& model, Scenario sc) {
  Loaded l;
  l.s.scenario = sc;
  ConfigLoader loader;
  l.rc = loader.from_config_text(l.s, text, "user.conf", model, loadgen::to_string(sc), loadgen::kConfTypeUser,
                                 &l.msgs);
  return l;
}

inline bool has_single_error(const std::vector<LogMessage>& msgs, const std::string& text) {
  return msgs.size() == 1 && msgs[0].key == "error_invalid_config" && msgs[0].text == text && msgs[0].is_error &&
         !msgs[0].is_warning;
}

inline std::string temp_path(const char* name) {
  // The OS's temporary folder (TMPDIR, or %TEMP% on Windows); "/tmp" has no meaning there.
  return (std::filesystem::temp_directory_path() / (std::string("loadgen_test_config_") + name)).string();
}

}  // namespace config_test

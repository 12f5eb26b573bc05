// libFuzzer target for the config parser (config.cc) and what consumes its
// result: the built-in or a given mlperf.conf, user.conf or audit.config
// applied to TestSettings, then test05 and the requested -> effective
// derivation. Built by scripts/fuzz-config.mjs (clang++
// -fsanitize=fuzzer,address,undefined); any crash, sanitizer report, hang or
// uncaught exception fails the run.
//
// Input: three selector bytes, then the config text.
//   byte 0 % 3   conf_type: 0 mlperf.conf, 1 user.conf, 2 audit.config
//   byte 1 % 4   scenario (SingleStream, MultiStream, Server, Offline)
//   byte 2 % 8   model name (kModels); byte 2 / 8 % 3 the QSL's performance count
// A '\n' right after them is skipped, so a seed reads "<conf><scenario><model>\n"
// with digits. Text after a "\n====\n" line is the loader's mlperf.conf (the
// shipped one otherwise).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "config.h"
#include "settings.h"

namespace {

const char* const kModels[] = {"resnet50", "llama2-70b", "3d-unet", "gptj", "retinanet", "gpt-oss-120b", "modela", "*"};
const uint64_t kPerformanceCounts[] = {1024, 0, 1};  // digits select 1024
const char kMlperfConfSeparator[] = "\n====\n";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const int conf_type = data[0] % 3;
  const auto scenario = static_cast<loadgen::Scenario>(data[1] % 4);
  const std::string model = kModels[data[2] % 8];
  const uint64_t qsl_performance_count = kPerformanceCounts[data[2] / 8 % 3];
  size_t at = 3;
  if (at < size && data[at] == '\n') ++at;
  std::string text(reinterpret_cast<const char*>(data) + at, size - at);
  std::string mlperf_conf;
  const size_t split = text.find(kMlperfConfSeparator);
  if (split != std::string::npos) {
    mlperf_conf = text.substr(split + sizeof kMlperfConfSeparator - 1);
    text.resize(split);
  }

  loadgen::ConfigLoader loader = split == std::string::npos ? loadgen::ConfigLoader() : loadgen::ConfigLoader(mlperf_conf);
  loadgen::TestSettings settings;
  settings.scenario = scenario;
  std::vector<loadgen::LogMessage> messages;
  std::vector<loadgen::ConfigProvenance> provenance;
  const std::string scenario_name = loadgen::to_string(scenario);
  const int rc = conf_type == loadgen::kConfTypeAudit
                     ? loadgen::apply_audit_config_text(settings, text, &messages, &provenance)
                     : loader.from_config_text(settings, text, "fuzz.conf", model, scenario_name, conf_type,
                                               &messages, &provenance);
  if (rc != loadgen::kConfigOk && rc != loadgen::kConfigInvalid) __builtin_trap();
  // A second user.conf takes the "multiple conf files" path.
  if (conf_type == loadgen::kConfTypeUser) {
    loader.from_config_text(settings, text, "fuzz.conf", model, scenario_name, conf_type, &messages, nullptr);
  }
  // The config may not change the scenario; keep what was asked in range anyway.
  if (static_cast<int>(settings.scenario) < 0 || static_cast<int>(settings.scenario) > 3) __builtin_trap();

  const loadgen::TestSettings requested = loadgen::apply_test05(settings, &messages);
  try {
    loadgen::derive_effective(requested, 1024, qsl_performance_count, &messages);
  } catch (const std::invalid_argument&) {
    // Documented: SingleStream sample_concatenate_permutation with no performance samples.
  }
  return 0;
}

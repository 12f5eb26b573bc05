// Config files (mlperf.conf, user.conf, audit.config): the reference's
// TestSettings::FromConfig (spec/10 §4, §5), without process globals.
#pragma once

#include <string>
#include <vector>

#include "settings.h"

namespace loadgen {

// The mlperf.conf shipped with LoadGen 6.0.17, reconstructed from the data in
// spec/10 §4.4 (same settings, not byte-identical to the original file).
extern const char* const kBuiltinMlperfConf;

// FromConfig return codes (the reference returns -errno values).
constexpr int kConfigOk = 0;
constexpr int kConfigNotFound = -2;  // -ENOENT: file could not be opened
constexpr int kConfigInvalid = -22;  // -EINVAL: a line did not parse

// conf_type values of FromConfig.
constexpr int kConfTypeMlperf = 0;  // the built-in mlperf.conf (path ignored)
constexpr int kConfTypeUser = 1;    // user.conf (first call also applies mlperf.conf)
constexpr int kConfTypeAudit = 2;   // audit.config

// Holds what the reference keeps per process: whether a conf_type-1 load has
// happened (the first one applies the built-in mlperf.conf, later ones log an
// error instead), and which text serves as the built-in mlperf.conf.
class ConfigLoader {
 public:
  ConfigLoader();
  explicit ConfigLoader(std::string builtin_mlperf_conf);

  // FromConfig on the given text; `path_for_messages` only appears in
  // messages. conf_type 0 ignores `text` and uses the built-in mlperf.conf.
  // Errors are appended to `messages` (may be null). Returns 0, -2 or -22.
  int from_config_text(TestSettings& settings, const std::string& text, const std::string& path_for_messages,
                       const std::string& model, const std::string& scenario, int conf_type,
                       std::vector<LogMessage>* messages);

  // FromConfig on a file; an unopenable file logs "can't open file <path>"
  // and returns -2 (after the conf_type-1 mlperf.conf handling).
  int from_config_file(TestSettings& settings, const std::string& path, const std::string& model,
                       const std::string& scenario, int conf_type, std::vector<LogMessage>* messages);

  // Number of conf_type-1 calls so far.
  int user_conf_calls() const { return user_conf_calls_; }
  const std::string& builtin_mlperf_conf() const { return builtin_; }

 private:
  // Shared by the text and file variants; `text` null = file not openable.
  int from_config(TestSettings& settings, const std::string* text, const std::string& path,
                  const std::string& model, const std::string& scenario, int conf_type,
                  std::vector<LogMessage>* messages);

  std::string builtin_;
  int user_conf_calls_ = 0;
};

// Parses and applies one config text with no conf_type-1 side effects (the
// core of FromConfig: grammar §4.1, lookup §4.2, application order §4.3).
// conf_type 0 additionally reads the mlperf.conf-only keys.
int apply_config_text(TestSettings& settings, const std::string& text, const std::string& model,
                      const std::string& scenario, int conf_type, std::vector<LogMessage>* messages);

// Reads a whole file; false if it cannot be opened.
bool read_config_file(const std::string& path, std::string* out);

// The audit.config override of StartTest (spec/10 §5): logs the fixed warning
// and applies `text` with model "*", the settings' own scenario name and
// conf_type 2. Returns the FromConfig code.
int apply_audit_config_text(TestSettings& settings, const std::string& text, std::vector<LogMessage>* messages);

// As above from a file: if `path` cannot be opened nothing happens (no
// warning) and false is returned; otherwise true with the code in `*rc`.
bool apply_audit_config_file(TestSettings& settings, const std::string& path, std::vector<LogMessage>* messages,
                             int* rc = nullptr);

}  // namespace loadgen

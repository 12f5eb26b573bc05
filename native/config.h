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

// Where one field's value came from: reported for every field a FromConfig
// call set (optional; the reference has no such output). A field set by
// several calls or lines gets one record per assignment, in order, so the
// last record of a field is the winning one.
struct ConfigProvenance {
  std::string field;   // TestSettings field (C++ name), e.g. "server_target_latency_ns"
  std::string key;     // the full key that matched, e.g. "resnet50.Server.target_latency"
  std::string source;  // file path or label of the text (the built-in mlperf.conf's label for conf_type 0)
  int line = 0;        // 1-based line of the winning entry
  std::string value;   // the raw value token, as written
  int conf_type = 0;   // which kind of call applied it: 0 mlperf.conf, 1 user.conf, 2 audit.config
};

// Label of the built-in mlperf.conf in provenance records.
extern const char* const kBuiltinMlperfConfLabel;

// Holds what the reference keeps per process: whether a conf_type-1 load has
// happened (the first one applies the built-in mlperf.conf, later ones log an
// error instead), and which text serves as the built-in mlperf.conf.
class ConfigLoader {
 public:
  ConfigLoader();
  explicit ConfigLoader(std::string builtin_mlperf_conf);

  // FromConfig on the given text; `path_for_messages` only appears in
  // messages (and as the provenance source). conf_type 0 ignores `text` and
  // uses the built-in mlperf.conf. Errors are appended to `messages` (may be
  // null); what was set, if `provenance` is not null. Returns 0, -2 or -22.
  int from_config_text(TestSettings& settings, const std::string& text, const std::string& path_for_messages,
                       const std::string& model, const std::string& scenario, int conf_type,
                       std::vector<LogMessage>* messages, std::vector<ConfigProvenance>* provenance = nullptr);

  // FromConfig on a file; an unopenable file logs "can't open file <path>"
  // and returns -2 (after the conf_type-1 mlperf.conf handling).
  int from_config_file(TestSettings& settings, const std::string& path, const std::string& model,
                       const std::string& scenario, int conf_type, std::vector<LogMessage>* messages,
                       std::vector<ConfigProvenance>* provenance = nullptr);

  // The source name provenance records give the built-in mlperf.conf
  // (default kBuiltinMlperfConfLabel; a path when the text came from a file).
  void set_builtin_label(std::string label) { builtin_label_ = std::move(label); }
  const std::string& builtin_label() const { return builtin_label_; }

  // Number of conf_type-1 calls so far.
  int user_conf_calls() const { return user_conf_calls_; }
  const std::string& builtin_mlperf_conf() const { return builtin_; }

 private:
  // Shared by the text and file variants; `text` null = file not openable.
  int from_config(TestSettings& settings, const std::string* text, const std::string& path,
                  const std::string& model, const std::string& scenario, int conf_type,
                  std::vector<LogMessage>* messages, std::vector<ConfigProvenance>* provenance);

  std::string builtin_;
  std::string builtin_label_ = kBuiltinMlperfConfLabel;
  int user_conf_calls_ = 0;
};

// Parses and applies one config text with no conf_type-1 side effects (the
// core of FromConfig: grammar §4.1, lookup §4.2, application order §4.3).
// conf_type 0 additionally reads the mlperf.conf-only keys. When
// `provenance` is not null, every field set gets a record naming `source`.
int apply_config_text(TestSettings& settings, const std::string& text, const std::string& model,
                      const std::string& scenario, int conf_type, std::vector<LogMessage>* messages,
                      std::vector<ConfigProvenance>* provenance = nullptr, const std::string& source = "");

// Reads a whole file; false if it cannot be opened.
bool read_config_file(const std::string& path, std::string* out);

// The audit.config override of StartTest (spec/10 §5): logs the fixed warning
// and applies `text` with model "*", the settings' own scenario name and
// conf_type 2. Returns the FromConfig code. `source` names the text in
// provenance records.
int apply_audit_config_text(TestSettings& settings, const std::string& text, std::vector<LogMessage>* messages,
                            std::vector<ConfigProvenance>* provenance = nullptr,
                            const std::string& source = "audit.config");

// As above from a file: if `path` cannot be opened nothing happens (no
// warning) and false is returned; otherwise true with the code in `*rc`.
bool apply_audit_config_file(TestSettings& settings, const std::string& path, std::vector<LogMessage>* messages,
                             int* rc = nullptr, std::vector<ConfigProvenance>* provenance = nullptr);

}  // namespace loadgen

// TestSettings::FromConfig as the reference behaves (spec/10 §4, §5).
#include "config.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "config_keys.h"
#include "settings_fields.h"
#include "user_text.h"

namespace loadgen {

namespace {

const char kInvalidConfigKey[] = "error_invalid_config";

void add_config_error(std::vector<LogMessage>* messages, std::string text) {
  if (messages == nullptr) return;
  LogMessage m;
  m.key = kInvalidConfigKey;
  m.text = std::move(text);
  m.is_error = true;
  messages->push_back(std::move(m));
}

// The characters std::istringstream's operator>> skips in the "C" locale.
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

std::vector<std::string> split_tokens(const std::string& line) {
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    const size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    if (i > start) tokens.push_back(line.substr(start, i - start));
  }
  return tokens;
}

// A value token must be consumed completely by strtoul (base 0) or strtod;
// the check is on the C string, as the reference hands c_str() to both.
bool is_number_token(const std::string& tok) {
  char* end = nullptr;
  std::strtoul(tok.c_str(), &end, 0);
  if (end != tok.c_str() && *end == '\0') return true;
  end = nullptr;
  std::strtod(tok.c_str(), &end);
  return end != tok.c_str() && *end == '\0';
}

// Runs the per-line state machine of §4.1 over the whole text. Every error is
// logged; the caller discards the map when `*errors` > 0.
// A parsed entry: the raw value token and the 1-based line it came from.
struct ConfigEntry {
  std::string value;
  int line = 0;
};

using ConfigMap = std::map<std::string, ConfigEntry>;

ConfigMap parse_config(const std::string& text, std::vector<LogMessage>* messages, int* errors) {
  enum class State { Key, Equals, Value };
  ConfigMap kv;
  *errors = 0;
  size_t pos = 0;
  int line_no = 0;
  // Lines as std::getline yields them: a trailing '\n' ends the last line.
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;

    State state = State::Key;
    std::string key;
    for (const std::string& tok : split_tokens(line)) {
      if (tok == "#" && state != State::Value) break;
      if (state == State::Value) {
        if (!is_number_token(tok)) {
          add_config_error(messages, "value needs to be integer or double, line=" + std::to_string(line_no));
          ++*errors;
          break;
        }
        kv[key] = ConfigEntry{tok, line_no};  // stays in Value: later numbers on the line win
      } else if (state == State::Equals) {
        if (tok != "=") {
          add_config_error(messages, "expected 'key=value', line=" + std::to_string(line_no));
          ++*errors;
          break;
        }
        state = State::Value;
      } else {
        key = tok;
        state = State::Equals;
      }
    }
  }
  return kv;
}

// Key lookup with the reference's precedence M.S > *.S > M.* > *.*; model
// names may contain dots since whole strings are compared. Every value it
// hands out for a field is recorded in `provenance` when that is not null.
class Lookup {
 public:
  Lookup(const ConfigMap& kv, const std::string& model, int conf_type, std::vector<ConfigProvenance>* provenance,
         const std::string& source)
      : kv_(kv), model_(model), conf_type_(conf_type), provenance_(provenance), source_(source) {}

  const ConfigMap::value_type* find(const std::string& scenario, const char* key) const {
    const std::string candidates[4] = {
        model_ + "." + scenario + "." + key,
        "*." + scenario + "." + key,
        model_ + ".*." + key,
        std::string("*.*.") + key,
    };
    for (const std::string& c : candidates) {
      auto it = kv_.find(c);
      if (it != kv_.end()) return &*it;
    }
    return nullptr;
  }

  // Records that `field` was set from `hit`.
  void note(const ConfigMap::value_type& hit, const char* field) const {
    if (provenance_ == nullptr) return;
    ConfigProvenance p;
    p.field = field;
    p.key = hit.first;
    p.source = source_;
    p.line = hit.second.line;
    p.value = hit.second.value;
    p.conf_type = conf_type_;
    provenance_->push_back(std::move(p));
  }

 private:
  const ConfigMap& kv_;
  const std::string& model_;
  int conf_type_;
  std::vector<ConfigProvenance>* provenance_;
  const std::string& source_;
};

// Sets `field` from a raw value token as `value` reads it; false (and an
// error logged) when the value is not allowed (only a mode out of range).
bool set_from_token(TestSettings& s, const ConfigKey& k, const std::string& token,
                    std::vector<LogMessage>* messages) {
  if (k.value == ConfigValue::Double) {
    s.*k.field.d = std::strtod(token.c_str(), nullptr) * k.multiplier;
    return true;
  }
  // Integers as the reference reads them: strtoull stops at the first invalid
  // character ("2.5e3" -> 2). Refusing such text is the lint's job
  // (lib/config/lint.ts, before this runs); here the reference's reading stays
  // exact for lenient loading and the golden vectors.
  const uint64_t raw = std::strtoull(token.c_str(), nullptr, 0);
  switch (k.value) {
    case ConfigValue::Int: s.*k.field.u = raw * static_cast<uint64_t>(k.multiplier); return true;
    case ConfigValue::Int32: s.*k.field.u = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(raw))); return true;
    case ConfigValue::Eq1: s.*k.field.b = raw == 1; return true;
    case ConfigValue::NonZero: s.*k.field.b = raw != 0; return true;
    case ConfigValue::Mode:
      if (raw > static_cast<uint64_t>(Mode::FindPeakPerformance)) {
        add_config_error(messages, "Invalid value passed to Mode key in config.");
        return false;
      }
      s.*k.field.mode = static_cast<Mode>(raw);
      return true;
    case ConfigValue::Double: break;
  }
  return false;
}

// Applies the keys in the table's order (§4.3).
void apply_keys(TestSettings& s, const Lookup& l, const std::string& scen, int conf_type,
                std::vector<LogMessage>* messages) {
  for (const ConfigKey& k : kConfigKeys) {
    // Only the system config may set seeds, the accuracy-log probability and test05.
    if (k.mlperf_only && conf_type != kConfTypeMlperf) continue;
    // The flag as it stands now, possibly set by an earlier line or call.
    if (k.only_with != nullptr && !(s.*k.only_with)) continue;
    const ConfigMap::value_type* hit =
        l.find(k.scenario == ConfigScenario::Requested ? scen : std::string(to_string(k.scenario)), k.key);
    if (hit == nullptr) continue;
    if (set_from_token(s, k, hit->second.value, messages)) l.note(*hit, find_test_settings_field(k.field)->name);
  }
}

const char kAuditWarning[] =
    "Found Audit Config file (audit.config). Overriding TestSettings from audit.config file.";

}  // namespace

const char* const kBuiltinMlperfConfLabel = "mlperf.conf (built-in)";

const char* to_string(ConfigValue v) {
  static constexpr const char* kNames[] = {"int", "int32", "double", "eq1", "nonzero", "mode"};  // ConfigValue's order
  return kNames[static_cast<int>(v)];
}

const char* to_string(ConfigScenario s) {
  return s == ConfigScenario::Requested ? "arg" : to_string(static_cast<Scenario>(s));
}

int apply_config_text(TestSettings& settings, const std::string& text, const std::string& model,
                      const std::string& scenario, int conf_type, std::vector<LogMessage>* messages,
                      std::vector<ConfigProvenance>* provenance, const std::string& source) {
  int errors = 0;
  const ConfigMap kv = parse_config(text, messages, &errors);
  if (errors > 0) return kConfigInvalid;  // nothing from this text is applied
  apply_keys(settings, Lookup(kv, model, conf_type, provenance, source), scenario, conf_type, messages);
  return kConfigOk;
}

bool read_config_file(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::in | std::ios::binary);
  if (!in.is_open()) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

ConfigLoader::ConfigLoader() : builtin_(kBuiltinMlperfConf) {}

ConfigLoader::ConfigLoader(std::string builtin_mlperf_conf) : builtin_(std::move(builtin_mlperf_conf)) {}

int ConfigLoader::from_config(TestSettings& settings, const std::string* text, const std::string& path,
                              const std::string& model, const std::string& scenario, int conf_type,
                              std::vector<LogMessage>* messages, std::vector<ConfigProvenance>* provenance) {
  if (conf_type == kConfTypeMlperf) {
    return apply_config_text(settings, builtin_, model, scenario, conf_type, messages, provenance, builtin_label_);
  }
  if (conf_type == kConfTypeUser) {
    // The reference applies mlperf.conf only with the first user.conf of the
    // process; its return code is ignored.
    if (user_conf_calls_ == 0) {
      apply_config_text(settings, builtin_, model, scenario, kConfTypeMlperf, messages, provenance, builtin_label_);
    } else {
      add_config_error(messages, "Multiple conf files are used. This is not valid for official submission.");
    }
    ++user_conf_calls_;
  }
  if (text == nullptr) {
    add_config_error(messages, "can't open file " + echo_input(path, kPathEchoLimit));
    return kConfigNotFound;
  }
  return apply_config_text(settings, *text, model, scenario, conf_type, messages, provenance, path);
}

int ConfigLoader::from_config_text(TestSettings& settings, const std::string& text,
                                   const std::string& path_for_messages, const std::string& model,
                                   const std::string& scenario, int conf_type, std::vector<LogMessage>* messages,
                                   std::vector<ConfigProvenance>* provenance) {
  return from_config(settings, &text, path_for_messages, model, scenario, conf_type, messages, provenance);
}

int ConfigLoader::from_config_file(TestSettings& settings, const std::string& path, const std::string& model,
                                   const std::string& scenario, int conf_type, std::vector<LogMessage>* messages,
                                   std::vector<ConfigProvenance>* provenance) {
  if (conf_type == kConfTypeMlperf) {
    return from_config(settings, nullptr, path, model, scenario, conf_type, messages, provenance);
  }
  std::string text;
  const bool opened = read_config_file(path, &text);
  return from_config(settings, opened ? &text : nullptr, path, model, scenario, conf_type, messages, provenance);
}

int apply_audit_config_text(TestSettings& settings, const std::string& text, std::vector<LogMessage>* messages,
                            std::vector<ConfigProvenance>* provenance, const std::string& source) {
  if (messages != nullptr) {
    LogMessage m;
    m.key = "warning_generic_message";
    m.text = kAuditWarning;
    m.is_warning = true;
    messages->push_back(std::move(m));
  }
  // Model "*": model-specific audit lines can never match.
  return apply_config_text(settings, text, "*", to_string(settings.scenario), kConfTypeAudit, messages, provenance,
                           source);
}

bool apply_audit_config_file(TestSettings& settings, const std::string& path, std::vector<LogMessage>* messages,
                             int* rc, std::vector<ConfigProvenance>* provenance) {
  std::string text;
  if (!read_config_file(path, &text)) return false;
  const int code = apply_audit_config_text(settings, text, messages, provenance, path);
  if (rc != nullptr) *rc = code;
  return true;
}

}  // namespace loadgen

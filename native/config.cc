// TestSettings::FromConfig as the reference behaves (spec/10 §4, §5).
#include "config.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

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

  // The raw integer as the reference reads it: strtoull stops at the first
  // invalid character ("2.5e3" -> 2). No provenance (the caller decides).
  bool raw_u64(const std::string& scenario, const char* key, uint64_t* out,
               const ConfigMap::value_type** hit = nullptr) const {
    const ConfigMap::value_type* h = find(scenario, key);
    if (h == nullptr) return false;
    *out = std::strtoull(h->second.value.c_str(), nullptr, 0);
    if (hit != nullptr) *hit = h;
    return true;
  }

  // Integer fields: the raw integer times the multiplier (unsigned, wrapping).
  bool u64(const std::string& scenario, const char* key, uint64_t multiplier, uint64_t* out, const char* field) const {
    const ConfigMap::value_type* h = nullptr;
    uint64_t v = 0;
    if (!raw_u64(scenario, key, &v, &h)) return false;
    *out = v * multiplier;
    note(*h, field);
    return true;
  }

  bool dbl(const std::string& scenario, const char* key, double multiplier, double* out, const char* field) const {
    const ConfigMap::value_type* h = find(scenario, key);
    if (h == nullptr) return false;
    *out = std::strtod(h->second.value.c_str(), nullptr) * multiplier;
    note(*h, field);
    return true;
  }

  // Booleans are integers compared with 1 ("==1" keys) ...
  bool flag_eq1(const std::string& scenario, const char* key, bool* out, const char* field) const {
    uint64_t v = 0;
    if (!u64(scenario, key, 1, &v, field)) return false;
    *out = v == 1;
    return true;
  }

  // ... or with 0 ("non-zero" keys).
  bool flag_nonzero(const std::string& scenario, const char* key, bool* out, const char* field) const {
    uint64_t v = 0;
    if (!u64(scenario, key, 1, &v, field)) return false;
    *out = v != 0;
    return true;
  }

 private:
  const ConfigMap& kv_;
  const std::string& model_;
  int conf_type_;
  std::vector<ConfigProvenance>* provenance_;
  const std::string& source_;
};

// Applies the keys in the order of §4.3. Order matters for the conditional
// token keys and for where a mode error lands among other messages.
void apply_keys(TestSettings& s, const Lookup& l, const std::string& scen, int conf_type,
                std::vector<LogMessage>* messages) {
  const std::string ss = "SingleStream", ms = "MultiStream", server = "Server", offline = "Offline";
  uint64_t v = 0;
  const ConfigMap::value_type* hit = nullptr;

  if (l.raw_u64(scen, "mode", &v, &hit)) {
    bool valid = true;
    switch (v) {
      case 0: s.mode = Mode::SubmissionRun; break;
      case 1: s.mode = Mode::AccuracyOnly; break;
      case 2: s.mode = Mode::PerformanceOnly; break;
      case 3: s.mode = Mode::FindPeakPerformance; break;
      default:
        valid = false;
        add_config_error(messages, "Invalid value passed to Mode key in config.");
        break;
    }
    if (valid) l.note(*hit, "mode");
  }

  // Only the system config may set seeds, the accuracy-log probability and test05.
  if (conf_type == kConfTypeMlperf) {
    l.u64(scen, "qsl_rng_seed", 1, &s.qsl_rng_seed, "qsl_rng_seed");
    l.u64(scen, "sample_index_rng_seed", 1, &s.sample_index_rng_seed, "sample_index_rng_seed");
    l.u64(scen, "schedule_rng_seed", 1, &s.schedule_rng_seed, "schedule_rng_seed");
    l.dbl(scen, "accuracy_log_probability", 0.01, &s.accuracy_log_probability, "accuracy_log_probability");
    l.flag_eq1(scen, "test05", &s.test05, "test05");
    l.u64(scen, "test05_qsl_rng_seed", 1, &s.test05_qsl_rng_seed, "test05_qsl_rng_seed");
    l.u64(scen, "test05_sample_index_rng_seed", 1, &s.test05_sample_index_rng_seed, "test05_sample_index_rng_seed");
    l.u64(scen, "test05_schedule_rng_seed", 1, &s.test05_schedule_rng_seed, "test05_schedule_rng_seed");
  }

  // Token keys are read only if the flag is on at this point (possibly from
  // an earlier call).
  l.flag_eq1(scen, "use_token_latencies", &s.use_token_latencies, "use_token_latencies");
  if (s.use_token_latencies) {
    l.u64(server, "ttft_latency", 1000000, &s.server_ttft_latency, "server_ttft_latency");
    l.u64(server, "tpot_latency", 1000000, &s.server_tpot_latency, "server_tpot_latency");
  }
  l.flag_eq1(scen, "infer_token_latencies", &s.infer_token_latencies, "infer_token_latencies");
  if (s.infer_token_latencies) {
    l.u64(scen, "token_latency_scaling_factor", 1, &s.token_latency_scaling_factor, "token_latency_scaling_factor");
  }

  // Fixed-scenario keys apply whatever scenario was asked for.
  l.dbl(ss, "target_latency_percentile", 0.01, &s.single_stream_target_latency_percentile,
        "single_stream_target_latency_percentile");
  l.dbl(ms, "target_latency_percentile", 0.01, &s.multi_stream_target_latency_percentile,
        "multi_stream_target_latency_percentile");
  l.u64(ms, "samples_per_query", 1, &s.multi_stream_samples_per_query, "multi_stream_samples_per_query");
  l.dbl(server, "target_latency_percentile", 0.01, &s.server_target_latency_percentile,
        "server_target_latency_percentile");
  l.u64(server, "target_latency", 1000000, &s.server_target_latency_ns, "server_target_latency_ns");

  l.flag_nonzero(scen, "performance_issue_unique", &s.performance_issue_unique, "performance_issue_unique");
  l.flag_nonzero(scen, "performance_issue_same", &s.performance_issue_same, "performance_issue_same");
  l.u64(scen, "performance_issue_same_index", 1, &s.performance_issue_same_index, "performance_issue_same_index");
  l.flag_eq1(scen, "sample_concatenate_permutation", &s.sample_concatenate_permutation,
             "sample_concatenate_permutation");
  l.flag_nonzero(server, "coalesce_queries", &s.server_coalesce_queries, "server_coalesce_queries");
  if (l.raw_u64(server, "max_async_queries", &v, &hit)) {
    // The reference stores int(val): truncation to 32 bits, sign-extended back.
    s.server_max_async_queries = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v)));
    l.note(*hit, "server_max_async_queries");
  }

  l.u64(scen, "min_duration", 1, &s.min_duration_ms, "min_duration_ms");
  l.u64(scen, "max_duration", 1, &s.max_duration_ms, "max_duration_ms");
  l.u64(scen, "min_query_count", 1, &s.min_query_count, "min_query_count");
  l.u64(scen, "max_query_count", 1, &s.max_query_count, "max_query_count");
  l.u64(scen, "performance_sample_count_override", 1, &s.performance_sample_count_override,
        "performance_sample_count_override");
  l.u64(scen, "accuracy_sample_count_override", 1, &s.accuracy_sample_count_override,
        "accuracy_sample_count_override");

  l.dbl(ss, "target_latency", 1e6, &s.single_stream_expected_latency_ns, "single_stream_expected_latency_ns");
  l.dbl(ms, "target_latency", 1e6, &s.multi_stream_expected_latency_ns, "multi_stream_expected_latency_ns");
  l.dbl(server, "target_qps", 1, &s.server_target_qps, "server_target_qps");
  l.dbl(offline, "target_qps", 1, &s.offline_expected_qps, "offline_expected_qps");

  l.flag_nonzero(scen, "print_timestamps", &s.print_timestamps, "print_timestamps");
  l.u64(scen, "accuracy_log_rng_seed", 1, &s.accuracy_log_rng_seed, "accuracy_log_rng_seed");
  l.u64(scen, "accuracy_log_sampling_target", 1, &s.accuracy_log_sampling_target, "accuracy_log_sampling_target");
}

const char kAuditWarning[] =
    "Found Audit Config file (audit.config). Overriding TestSettings from audit.config file.";

}  // namespace

const char* const kBuiltinMlperfConfLabel = "mlperf.conf (built-in)";

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
    add_config_error(messages, "can't open file " + path);
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

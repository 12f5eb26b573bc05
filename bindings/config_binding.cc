// exports.config.load: FromConfig as the reference runs it, one fresh
// ConfigLoader per call (the reference's per-process state never leaks
// between calls), reporting what every field was set from.
#include "bindings/config_binding.h"

#include <exception>
#include <string>
#include <vector>

#include "bindings/convert.h"
#include "native/config.h"
#include "native/settings_log.h"

namespace loadgen_addon {
namespace {

[[noreturn]] void type_error(Napi::Env env, const std::string& what) {
  throw Napi::TypeError::New(env, "config.load: " + what);
}

// An optional string field: false when absent (undefined).
bool optional_string(const Napi::Object& o, const char* key, std::string* out) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return false;
  if (!v.IsString()) type_error(o.Env(), std::string("input.") + key + " must be a string when present");
  *out = v.As<Napi::String>().Utf8Value();
  return true;
}

std::string required_string(const Napi::Object& o, const char* key) {
  std::string s;
  if (!optional_string(o, key, &s)) type_error(o.Env(), std::string("input.") + key + " must be a string");
  return s;
}

// A config given either as text or as a path (not both).
struct ConfSource {
  bool present = false;
  bool from_file = false;
  std::string text;
  std::string path;
  std::string label;  // how messages and provenance name it
};

ConfSource read_source(const Napi::Object& o, const char* prefix, const std::string& default_label) {
  ConfSource c;
  const std::string p(prefix);
  const bool has_text = optional_string(o, (p + "Text").c_str(), &c.text);
  const bool has_path = optional_string(o, (p + "Path").c_str(), &c.path);
  if (has_text && has_path) type_error(o.Env(), "give input." + p + "Text or input." + p + "Path, not both");
  c.present = has_text || has_path;
  c.from_file = has_path;
  if (!optional_string(o, (p + "Label").c_str(), &c.label)) c.label = has_path ? c.path : default_label;
  return c;
}

Napi::Array provenance_to_js(Napi::Env env, const std::vector<loadgen::ConfigProvenance>& records) {
  Napi::Array a = Napi::Array::New(env, records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const loadgen::ConfigProvenance& r = records[i];
    Napi::Object o = Napi::Object::New(env);
    o.Set("field", r.field);
    o.Set("key", r.key);
    o.Set("file", r.source);
    o.Set("line", r.line);
    o.Set("value", r.value);
    o.Set("confType", r.conf_type);
    a.Set(static_cast<uint32_t>(i), o);
  }
  return a;
}

Napi::Value Load(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject() || info[0].IsArray()) type_error(env, "input must be an object");
  Napi::Object input = info[0].As<Napi::Object>();

  const std::string model = required_string(input, "model");
  const std::string scenario = required_string(input, "scenario");
  Napi::Value base = input.Get("base");
  if (!base.IsObject() || base.IsArray()) type_error(env, "input.base must be an object");
  loadgen::TestSettings settings = test_settings_from_js(base.As<Napi::Object>());
  const ConfSource mlperf = read_source(input, "mlperfConf", loadgen::kBuiltinMlperfConfLabel);
  const ConfSource user = read_source(input, "userConf", "user.conf");
  const ConfSource audit = read_source(input, "auditConf", "audit.config");
  Napi::Value with_mlperf_value = input.Get("withMlperfConf");
  if (!with_mlperf_value.IsUndefined() && !with_mlperf_value.IsBoolean())
    type_error(env, "input.withMlperfConf must be a boolean when present");
  const bool with_mlperf = with_mlperf_value.IsUndefined() || with_mlperf_value.As<Napi::Boolean>().Value();

  std::string mlperf_text;
  if (mlperf.present) {
    if (!mlperf.from_file) {
      mlperf_text = mlperf.text;
    } else if (!loadgen::read_config_file(mlperf.path, &mlperf_text)) {
      // Not a reference situation (its mlperf.conf is compiled in): refuse.
      throw Napi::Error::New(env, "config.load: cannot read mlperf.conf file " + mlperf.path);
    }
  }

  std::vector<loadgen::LogMessage> messages;
  std::vector<loadgen::ConfigProvenance> provenance;
  Napi::Object codes = Napi::Object::New(env);
  bool audit_found = false;
  try {
    loadgen::ConfigLoader loader = mlperf.present ? loadgen::ConfigLoader(mlperf_text) : loadgen::ConfigLoader();
    loader.set_builtin_label(mlperf.label);
    if (user.present) {
      // conf_type 1: the first call of a "process" applies mlperf.conf first.
      const int rc = user.from_file
                         ? loader.from_config_file(settings, user.path, model, scenario, loadgen::kConfTypeUser,
                                                   &messages, &provenance)
                         : loader.from_config_text(settings, user.text, user.label, model, scenario,
                                                   loadgen::kConfTypeUser, &messages, &provenance);
      codes.Set("user", rc);
    } else if (with_mlperf) {
      codes.Set("mlperf", loader.from_config_text(settings, "", mlperf.label, model, scenario,
                                                  loadgen::kConfTypeMlperf, &messages, &provenance));
    }
    if (audit.present) {
      int rc = 0;
      if (audit.from_file) {
        audit_found = loadgen::apply_audit_config_file(settings, audit.path, &messages, &rc, &provenance);
      } else {
        audit_found = true;
        rc = loadgen::apply_audit_config_text(settings, audit.text, &messages, &provenance, audit.label);
      }
      if (audit_found) codes.Set("audit", rc);
    }
  } catch (const std::exception& e) {
    throw Napi::Error::New(env, std::string("config.load: ") + e.what());
  }

  Napi::Object out = Napi::Object::New(env);
  out.Set("settings", named_values_to_js(env, loadgen::settings_to_named_values(settings), NameStyle::Reference));
  out.Set("returnCodes", codes);
  out.Set("auditFound", audit_found);
  out.Set("messages", messages_to_js(env, messages));
  out.Set("provenance", provenance_to_js(env, provenance));
  return out;
}

}  // namespace

void register_config(Napi::Env env, Napi::Object exports) {
  Napi::Object c = Napi::Object::New(env);
  c.Set("load", Napi::Function::New(env, Load, "load"));
  exports.Set("config", c);
}

}  // namespace loadgen_addon

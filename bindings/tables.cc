#include "bindings/tables.h"

#include <cstddef>
#include <cstdint>

#include "native/config_keys.h"
#include "native/failure_kinds.h"
#include "native/http_client.h"
#include "native/http_sut.h"
#include "native/settings_fields.h"

namespace loadgen_addon {
namespace {

const char* kind_name(loadgen::FieldKind kind) {
  switch (kind) {
    case loadgen::FieldKind::Scenario:
    case loadgen::FieldKind::Mode: return "enum";
    case loadgen::FieldKind::Double: return "double";
    case loadgen::FieldKind::U64: return "uint64";
    case loadgen::FieldKind::I64:
    case loadgen::FieldKind::Int: return "int";
    case loadgen::FieldKind::Bool: return "bool";
    case loadgen::FieldKind::String: return "string";
    case loadgen::FieldKind::None: break;
  }
  return "";
}

// One JS object per table row, filled by `fill(object, row)`.
template <typename Row, size_t N, typename Fill>
Napi::Array rows_to_js(Napi::Env env, const Row (&rows)[N], Fill fill) {
  Napi::Array a = Napi::Array::New(env, N);
  for (size_t i = 0; i < N; ++i) {
    Napi::Object o = Napi::Object::New(env);
    fill(o, rows[i]);
    a.Set(static_cast<uint32_t>(i), o);
  }
  return a;
}

// [{name, kind}] in declaration order.
Napi::Array test_settings_fields(Napi::Env env) {
  return rows_to_js(env, loadgen::kTestSettingsFields, [](Napi::Object& o, const loadgen::TestSettingsField& f) {
    o.Set("name", f.name);
    o.Set("kind", kind_name(f.member.kind));
  });
}

// [{key, scenario, field, conversion, multiplier, unit, mlperfOnly, onlyWith?}]
// in application order; fields by their C++ (snake_case) names.
Napi::Array config_keys(Napi::Env env) {
  return rows_to_js(env, loadgen::kConfigKeys, [](Napi::Object& o, const loadgen::ConfigKey& k) {
    o.Set("key", k.key);
    o.Set("scenario", loadgen::to_string(k.scenario));
    o.Set("field", loadgen::find_test_settings_field(k.field)->name);
    o.Set("conversion", loadgen::to_string(k.value));
    o.Set("multiplier", k.multiplier);
    o.Set("unit", k.unit);
    o.Set("mlperfOnly", k.mlperf_only);
    if (k.only_with != nullptr) {
      o.Set("onlyWith", loadgen::find_test_settings_field(loadgen::Member<loadgen::TestSettings>(k.only_with))->name);
    }
  });
}

// {name: {min, max}}; every limit is a safe integer.
Napi::Object run_setting_limits(Napi::Env env) {
  Napi::Object o = Napi::Object::New(env);
  for (const loadgen::RunSettingLimit& l : loadgen::kRunSettingLimits) {
    Napi::Object row = Napi::Object::New(env);
    row.Set("min", static_cast<double>(l.min));
    row.Set("max", static_cast<double>(l.max));
    o.Set(l.name, row);
  }
  return o;
}

}  // namespace

void register_tables(Napi::Env env, Napi::Object exports) {
  Napi::Object t = Napi::Object::New(env);
  t.Set("testSettingsFields", test_settings_fields(env));
  t.Set("configKeys", config_keys(env));
  t.Set("runSettingLimits", run_setting_limits(env));
  Napi::Array kinds = Napi::Array::New(env, loadgen::kFailureKindCount);
  for (size_t i = 0; i < loadgen::kFailureKindCount; ++i) kinds.Set(static_cast<uint32_t>(i), loadgen::kFailureKindNames[i]);
  t.Set("failureKinds", kinds);
  // The per-node statistics slice of the native HTTP client (lib/net/node-stats.ts's NODE_SLICE_LENGTH).
  t.Set("nodeStatsLength", static_cast<double>(loadgen::kNodeStatsLength));
  // The most client threads of the native transport (lib/net/transport.ts checks clientThreads against it).
  t.Set("maxClientThreads", static_cast<double>(loadgen::HttpSut::kMaxClientThreads));
  exports.Set("tables", t);
}

}  // namespace loadgen_addon

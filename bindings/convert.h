// JS values <-> core structs. Everything from JS is checked again here, even
// though lib/settings/ validated it: a value that crosses the boundary is
// never trusted.
#pragma once

#include <napi.h>

#include <cstddef>
#include <vector>

#include "native/field_table.h"
#include "native/session.h"
#include "native/settings_log.h"

namespace loadgen_addon {

// Reads the reference TestSettings fields of a flat snake_case object
// (scenario/mode as their integer values, seeds as BigInt or safe integers).
loadgen::TestSettings test_settings_from_js(const Napi::Object& object);

// Reads the flat snake_case object produced by lib/settings/to-native.ts toNativeSettings
// plus the run fields (sut_name, qsl_*, log_*). Throws a TypeError/RangeError
// naming the field on anything unexpected.
loadgen::SessionConfig session_config_from_js(const Napi::Object& object);

// The plain-data outcome handed to lib/index.ts.
Napi::Object outcome_to_js(Napi::Env env, const loadgen::RunOutcome& outcome);

// A uint64 as JS: a number when it is a safe integer, else a BigInt.
Napi::Value number_or_bigint(Napi::Env env, uint64_t v);

// A struct member as JS: uint64 as number_or_bigint, int64 as a number,
// enums by name.
template <typename S>
Napi::Value member_to_js(Napi::Env env, const S& s, const loadgen::Member<S>& m) {
  switch (m.kind) {
    case loadgen::FieldKind::Scenario: return Napi::String::New(env, loadgen::to_string(s.*m.scenario));
    case loadgen::FieldKind::Mode: return Napi::String::New(env, loadgen::to_string(s.*m.mode));
    case loadgen::FieldKind::Double: return Napi::Number::New(env, s.*m.d);
    case loadgen::FieldKind::U64: return number_or_bigint(env, s.*m.u);
    case loadgen::FieldKind::I64: return Napi::Number::New(env, static_cast<double>(s.*m.i));
    case loadgen::FieldKind::Int: return Napi::Number::New(env, s.*m.n);
    case loadgen::FieldKind::Bool: return Napi::Boolean::New(env, s.*m.b);
    case loadgen::FieldKind::String: return Napi::String::New(env, s.*m.str);
    case loadgen::FieldKind::None: break;
  }
  return env.Undefined();
}

// Sets o[row.name] = member_to_js(row.member) for every row, in order.
template <typename S, size_t N>
void set_members(Napi::Env env, Napi::Object& o, const S& s, const loadgen::NamedMember<S> (&rows)[N]) {
  for (const loadgen::NamedMember<S>& row : rows) o.Set(row.name, member_to_js(env, s, row.member));
}

// [{key, text, isError, isWarning}] in order.
Napi::Array messages_to_js(Napi::Env env, const std::vector<loadgen::LogMessage>& messages);

enum class NameStyle { Reference, CamelCase };

// An ordered named-value list (settings_log.h) as a JS object: reference
// snake_case names or camelCase; enums as names; seeds (*rng_seed) always as
// BigInt; other uint64 as numbers when safe.
Napi::Object named_values_to_js(Napi::Env env, const std::vector<loadgen::NamedValue>& values, NameStyle style);

}  // namespace loadgen_addon

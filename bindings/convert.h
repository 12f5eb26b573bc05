// JS values <-> core structs. Everything from JS is checked again here, even
// though lib/settings.ts validated it: a value that crosses the boundary is
// never trusted.
#pragma once

#include <napi.h>

#include "native/session.h"
#include "native/settings_log.h"

namespace loadgen_addon {

// Reads the reference TestSettings fields of a flat snake_case object
// (scenario/mode as their integer values, seeds as BigInt or safe integers).
loadgen::TestSettings test_settings_from_js(const Napi::Object& object);

// Reads the flat snake_case object produced by lib/settings.ts toNativeSettings
// plus the run fields (sut_name, qsl_*, log_*). Throws a TypeError/RangeError
// naming the field on anything unexpected.
loadgen::SessionConfig session_config_from_js(const Napi::Object& object);

// The plain-data outcome handed to lib/index.ts.
Napi::Object outcome_to_js(Napi::Env env, const loadgen::RunOutcome& outcome);

// A uint64 as JS: a number when it is a safe integer, else a BigInt.
Napi::Value number_or_bigint(Napi::Env env, uint64_t v);

enum class NameStyle { Reference, CamelCase };

// An ordered named-value list (settings_log.h) as a JS object: reference
// snake_case names or camelCase; enums as names; seeds (*rng_seed) always as
// BigInt; other uint64 as numbers when safe.
Napi::Object named_values_to_js(Napi::Env env, const std::vector<loadgen::NamedValue>& values, NameStyle style);

}  // namespace loadgen_addon

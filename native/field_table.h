// The building block of the field tables (settings_fields.h, summary_fields.h,
// config_keys.h): one struct member with its type, so code that lists fields
// (detail log, JS conversion, config keys) loops over a table instead of
// naming every field again.
#pragma once

#include <cstdint>
#include <string>

#include "format.h"
#include "settings.h"

namespace loadgen {

enum class FieldKind { None, Scenario, Mode, Double, U64, I64, Int, Bool, String };

// A pointer to one member of S, tagged with its type. The implicit
// constructors pick the kind from the member's type, so a table row names the
// member once (`&TestSettings::min_duration_ms`) and cannot get the kind wrong.
template <typename S>
struct Member {
  FieldKind kind = FieldKind::None;
  Scenario S::*scenario = nullptr;
  Mode S::*mode = nullptr;
  double S::*d = nullptr;
  uint64_t S::*u = nullptr;
  int64_t S::*i = nullptr;
  int S::*n = nullptr;
  bool S::*b = nullptr;
  std::string S::*str = nullptr;

  constexpr Member() = default;
  constexpr Member(Scenario S::*p) : kind(FieldKind::Scenario), scenario(p) {}
  constexpr Member(Mode S::*p) : kind(FieldKind::Mode), mode(p) {}
  constexpr Member(double S::*p) : kind(FieldKind::Double), d(p) {}
  constexpr Member(uint64_t S::*p) : kind(FieldKind::U64), u(p) {}
  constexpr Member(int64_t S::*p) : kind(FieldKind::I64), i(p) {}
  constexpr Member(int S::*p) : kind(FieldKind::Int), n(p) {}
  constexpr Member(bool S::*p) : kind(FieldKind::Bool), b(p) {}
  constexpr Member(std::string S::*p) : kind(FieldKind::String), str(p) {}

  constexpr bool operator==(const Member& o) const {
    return kind == o.kind && scenario == o.scenario && mode == o.mode && d == o.d && u == o.u && i == o.i &&
           n == o.n && b == o.b && str == o.str;
  }
};

// A member under a name, for tables whose rows need nothing more.
template <typename S>
struct NamedMember {
  const char* name;
  Member<S> member;
};

// A field value for the binding; `name` is the golden JSON name.
struct NamedValue {
  enum Kind { U64, I64, Double, Bool, String };
  std::string name;
  Kind kind = U64;
  uint64_t u = 0;
  int64_t i = 0;
  double d = 0;
  bool b = false;
  std::string s;  // also enum names (scenario, mode)
};

// A string value as the detail log writes it: quoted, no escaping (the
// reference does not escape).
std::string quote_log_string(const std::string& text);

// The member's value as it follows `"value": ` in a :::MLLOG line: doubles
// %g, integers in decimal, bools true/false, strings and enum names quoted.
template <typename S>
std::string log_value_text(const S& s, const Member<S>& m) {
  switch (m.kind) {
    case FieldKind::Scenario: return quote_log_string(to_string(s.*m.scenario));
    case FieldKind::Mode: return quote_log_string(to_string(s.*m.mode));
    case FieldKind::Double: return format_double(s.*m.d);
    case FieldKind::U64: return std::to_string(s.*m.u);
    case FieldKind::I64: return std::to_string(s.*m.i);
    case FieldKind::Int: return std::to_string(static_cast<int64_t>(s.*m.n));
    case FieldKind::Bool: return s.*m.b ? "true" : "false";
    case FieldKind::String: return quote_log_string(s.*m.str);
    case FieldKind::None: break;
  }
  return "";
}

// The member's value for the binding: enums by name, int widened to int64.
template <typename S>
NamedValue named_value(const S& s, const char* name, const Member<S>& m) {
  NamedValue v;
  v.name = name;
  switch (m.kind) {
    case FieldKind::Scenario: v.kind = NamedValue::String; v.s = to_string(s.*m.scenario); break;
    case FieldKind::Mode: v.kind = NamedValue::String; v.s = to_string(s.*m.mode); break;
    case FieldKind::Double: v.kind = NamedValue::Double; v.d = s.*m.d; break;
    case FieldKind::U64: v.kind = NamedValue::U64; v.u = s.*m.u; break;
    case FieldKind::I64: v.kind = NamedValue::I64; v.i = s.*m.i; break;
    case FieldKind::Int: v.kind = NamedValue::I64; v.i = s.*m.n; break;
    case FieldKind::Bool: v.kind = NamedValue::Bool; v.b = s.*m.b; break;
    case FieldKind::String: v.kind = NamedValue::String; v.s = s.*m.str; break;
    case FieldKind::None: break;
  }
  return v;
}

}  // namespace loadgen

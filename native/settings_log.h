// How settings appear in the detail log (requested_* / effective_* entries,
// spec/50 §4.2) and as ordered name/value lists for the JS binding.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "settings.h"

namespace loadgen {

using LogEntries = std::vector<std::pair<std::string, std::string>>;

// {key, value_text} in emission order, value_text exactly as it follows
// `"value": ` in a :::MLLOG line (doubles %g, bools true/false, strings and
// enum names in double quotes).
LogEntries requested_settings_entries(const TestSettings& s);
LogEntries effective_settings_entries(const EffectiveSettings& e);

// A string value as the detail log writes it: quoted, no escaping (the
// reference does not escape).
std::string quote_log_string(const std::string& text);

// The value_text of a logged message (error/warning entries carry a string).
std::string log_value_text(const LogMessage& m);

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

// Every TestSettings field under its C++ name, declaration order.
std::vector<NamedValue> settings_to_named_values(const TestSettings& s);

// The effective fields as the golden "effective" objects name them (detail-log
// names without the prefix, `mode` for the test mode, plus the derived token
// fields), in that order.
std::vector<NamedValue> effective_to_named_values(const EffectiveSettings& e);

}  // namespace loadgen

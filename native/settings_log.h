// How settings appear in the detail log (requested_* / effective_* entries,
// spec/50 §4.2) and as ordered name/value lists for the JS binding; both are
// generated from the field tables (settings_fields.h).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "field_table.h"
#include "settings.h"

namespace loadgen {

using LogEntries = std::vector<std::pair<std::string, std::string>>;

// {key, value_text} in emission order, value_text exactly as it follows
// `"value": ` in a :::MLLOG line (doubles %g, bools true/false, strings and
// enum names in double quotes).
LogEntries requested_settings_entries(const TestSettings& s);
LogEntries effective_settings_entries(const EffectiveSettings& e);

// The value_text of a logged message (error/warning entries carry a string).
std::string log_value_text(const LogMessage& m);

// Every TestSettings field under its C++ name, declaration order.
std::vector<NamedValue> settings_to_named_values(const TestSettings& s);

// The effective fields as the golden "effective" objects name them (detail-log
// names without the prefix, `mode` for the test mode, plus the derived token
// fields), in that order.
std::vector<NamedValue> effective_to_named_values(const EffectiveSettings& e);

}  // namespace loadgen

// requested_* / effective_* detail-log entries (spec/50 §4.2) and named
// field lists for the binding, from the field tables.
#include "settings_log.h"

#include "settings_fields.h"

namespace loadgen {

namespace {

// Whether a requested_* section is logged for these settings.
bool section_logged(RequestedLog section, const TestSettings& s) {
  switch (section) {
    case RequestedLog::SingleStream: return s.scenario == Scenario::SingleStream;
    case RequestedLog::MultiStream: return s.scenario == Scenario::MultiStream;
    case RequestedLog::Server: return s.scenario == Scenario::Server;
    case RequestedLog::Offline: return s.scenario == Scenario::Offline;
    case RequestedLog::Tokens: return s.use_token_latencies;
    case RequestedLog::TokenBounds: return s.use_token_latencies && s.scenario != Scenario::Offline;
    case RequestedLog::Never: return false;
    case RequestedLog::Head:
    case RequestedLog::Common:
    case RequestedLog::CommonLast: return true;
  }
  return false;
}

template <typename Field>
std::string log_key(const char* prefix, const Field& f) {
  return std::string(prefix) + (f.log_name != nullptr ? f.log_name : f.name);
}

}  // namespace

std::string quote_log_string(const std::string& text) { return "\"" + text + "\""; }

std::string log_value_text(const LogMessage& m) { return quote_log_string(m.text); }

LogEntries requested_settings_entries(const TestSettings& s) {
  LogEntries entries;
  // Section by section in emission order; rows keep their table order within one.
  for (int section = static_cast<int>(RequestedLog::Head); section < static_cast<int>(RequestedLog::Never); ++section) {
    if (!section_logged(static_cast<RequestedLog>(section), s)) continue;
    for (const TestSettingsField& f : kTestSettingsFields) {
      if (static_cast<int>(f.log) == section)
        entries.emplace_back(log_key("requested_", f), log_value_text(s, f.member));
    }
  }
  return entries;
}

LogEntries effective_settings_entries(const EffectiveSettings& e) {
  LogEntries entries;
  for (const EffectiveSettingsField& f : kEffectiveSettingsFields) {
    if (f.logged) entries.emplace_back(log_key("effective_", f), log_value_text(e, f.member));
  }
  return entries;
}

std::vector<NamedValue> settings_to_named_values(const TestSettings& s) {
  std::vector<NamedValue> values;
  for (const TestSettingsField& f : kTestSettingsFields) values.push_back(named_value(s, f.name, f.member));
  return values;
}

std::vector<NamedValue> effective_to_named_values(const EffectiveSettings& e) {
  std::vector<NamedValue> values;
  for (const EffectiveSettingsField& f : kEffectiveSettingsFields) values.push_back(named_value(e, f.name, f.member));
  return values;
}

}  // namespace loadgen

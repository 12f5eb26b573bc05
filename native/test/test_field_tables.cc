// The field and key tables (settings_fields.h, config_keys.h,
// summary_fields.h): every row points at a member the other tables know, and
// the rows of one config key agree on what the linter reports per key.
#include <cstring>
#ifdef __linux__
#ifdef __linux__
#include <sched.h>
#endif
#endif
#include <set>
#include <string>

#include "check.h"
#include "config_keys.h"
#include "settings_fields.h"
#include "summary_fields.h"

TEST(field_tables_config_keys_name_settings_fields) {
  for (const loadgen::ConfigKey& k : loadgen::kConfigKeys) {
    CHECK(loadgen::find_test_settings_field(k.field) != nullptr);
    if (k.only_with != nullptr) {
      CHECK(loadgen::find_test_settings_field(loadgen::Member<loadgen::TestSettings>(k.only_with)) != nullptr);
    }
    for (const loadgen::ConfigKey& other : loadgen::kConfigKeys) {
      if (std::strcmp(k.key, other.key) != 0) continue;
      CHECK_EQ(std::string(k.unit), std::string(other.unit));
      CHECK(k.mlperf_only == other.mlperf_only);
      CHECK(k.only_with == other.only_with);
    }
  }
}

TEST(field_tables_names_are_unique) {
  std::set<std::string> names;
  for (const loadgen::TestSettingsField& f : loadgen::kTestSettingsFields) CHECK(names.insert(f.name).second);
  names.clear();
  for (const loadgen::EffectiveSettingsField& f : loadgen::kEffectiveSettingsFields) CHECK(names.insert(f.name).second);
  names.clear();
  for (const loadgen::SummaryField& f : loadgen::kSummaryFields) {
    CHECK(names.insert(f.name).second);
    const int set = (f.scalar.kind != loadgen::FieldKind::None) + (f.percentile != nullptr) + (f.percentiles != nullptr);
    CHECK_EQ(set, 1);
  }
}

#ifdef __linux__
// The issue thread's CPU is a CPU_SET index.
static_assert(loadgen::find_run_setting_limit("issue_thread_cpu")->max == CPU_SETSIZE - 1,
              "issue_thread_cpu limit is CPU_SETSIZE - 1");
#endif

TEST(field_tables_run_setting_limits) {
  const loadgen::RunSettingLimit* cpu = loadgen::find_run_setting_limit("issue_thread_cpu");
  CHECK(cpu != nullptr);
  if (cpu != nullptr) {
    CHECK_EQ(cpu->min, -1);
    CHECK_EQ(cpu->max, 1023);
  }
  CHECK(loadgen::find_run_setting_limit("no_such_setting") == nullptr);
}

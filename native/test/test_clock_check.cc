// The PerfClock/system_clock check after a performance run (spec/00 §6.1
// step 5): judged on the nanosecond durations, so a short run whose two
// durations straddle a millisecond boundary is not an error; a real skew is.
#include <cstdint>
#include <string>

#include "check.h"
#include "clock.h"
#include "run_log.h"

using namespace loadgen;

namespace {

struct Check {
  uint64_t errors = 0;
  uint64_t warnings = 0;
  std::string last_text;
};

Check check(int64_t perf_duration_ns, int64_t wall_duration_ns) {
  RunOutcome outcome;
  RunLog log{outcome};
  const ClockPair start{1'000'000'000'123, 1'700'000'000'000'000'000};
  const ClockPair stop{start.perf_ns + perf_duration_ns, start.wall_ns + wall_duration_ns};
  log.check_perf_clocks(false, start, stop);
  Check c;
  for (const LogMessage& m : outcome.messages) {
    if (m.is_error) ++c.errors;
    if (m.is_warning) ++c.warnings;
    c.last_text = m.text;
  }
  return c;
}

}  // namespace

TEST(clock_check_durations_straddling_a_millisecond_on_a_short_run_are_not_an_error) {
  // 49.9999 ms and 50.0001 ms: 49/50 = 0.98 in whole milliseconds.
  const Check c = check(49'999'900, 50'000'100);
  CHECK_EQ(c.errors, 0u);
  CHECK_EQ(c.warnings, 0u);
}

TEST(clock_check_a_skew_over_one_percent_is_an_error_naming_the_ratio) {
  const Check c = check(980'000'000, 1'000'000'000);
  CHECK_EQ(c.errors, 1u);
  CHECK(c.last_text.find("differ by more than 1%!  pc_sc_ratio: 0.98") != std::string::npos);
}

TEST(clock_check_a_skew_between_a_tenth_and_one_percent_is_a_warning) {
  const Check c = check(1'005'000'000, 1'000'000'000);
  CHECK_EQ(c.errors, 0u);
  CHECK_EQ(c.warnings, 1u);
  CHECK(c.last_text.find("differ by more than 0.1%!  pc_sc_ratio: 1.005") != std::string::npos);
}

TEST(clock_check_a_wall_clock_stepped_back_over_the_run_is_an_error) {
  const Check c = check(100'000'000, -5'000'000'000);
  CHECK_EQ(c.errors, 1u);
  const Check zero = check(100'000'000, 0);
  CHECK_EQ(zero.errors, 1u);
}

TEST(clock_pair_reads_the_wall_clock_within_its_monotonic_bracket) {
  const int64_t before = now_ns();
  const ClockPair pair = read_clock_pair();
  const int64_t after = now_ns();
  CHECK(pair.perf_ns >= before);
  CHECK(pair.perf_ns <= after);
  // The wall clock agrees with a plain read made just after (within a second).
  const int64_t wall = wall_now_ns();
  CHECK(wall - pair.wall_ns >= -1'000'000'000);
  CHECK(wall - pair.wall_ns <= 1'000'000'000);
}

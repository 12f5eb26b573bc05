// The FindPeakPerformance search (find_peak.h) on scripted trials: a trial
// with failed or incomplete samples fails like one that misses the latency
// bound, and the search ends by itself however the trials turn out.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "check.h"
#include "find_peak.h"

using namespace loadgen;

namespace {

// A scripted trial: what the SUT does at `qps`.
struct Scripted {
  bool latency_met = true;
  uint64_t failed = 0;  // http_status
  uint64_t incomplete = 0;
};

struct Search {
  RunOutcome outcome;
  RunLog log{outcome};
  std::vector<double> trial_qps;

  void run(const TestSettings& settings, std::function<Scripted(double)> sut) {
    PeakTrials trials;
    trials.run = [&, sut](double qps, bool, bool, PeakTrialResult* result) {
      const Scripted s = sut(qps);
      *result = PeakTrialResult{};
      result->summary.perf_constraints_met = s.latency_met;
      if (!s.latency_met) result->summary.perf_constraints_recommendation = "Reduce target QPS to improve latency.";
      result->issued_samples = 100;
      result->failed.total = s.failed;
      result->failed.by_kind[static_cast<size_t>(FailureKind::HttpStatus)] = s.failed;
      result->incomplete = s.incomplete;
      trial_qps.push_back(qps);
      outcome.peak_trials.push_back(
          PeakTrial{qps, s.latency_met, 0, 100, s.failed, s.incomplete, result->passed(), {}});
      return true;
    };
    trials.unload_kept = [] {};
    const std::atomic<bool> aborted{false};
    find_peak_performance(settings, Scenario::Server, trials, aborted, log, outcome);
  }

  std::string messages() const {
    std::string all;
    for (const LogMessage& m : outcome.messages) all += m.text + "\n";
    return all;
  }
};

TestSettings peak_settings(double base_qps) {
  TestSettings s;
  s.scenario = Scenario::Server;
  s.mode = Mode::FindPeakPerformance;
  s.server_target_qps = base_qps;
  s.min_duration_ms = 100;
  s.server_find_peak_qps_decimals_of_precision = 0;
  return s;
}

}  // namespace

TEST(find_peak_a_trial_with_failed_samples_fails_even_within_the_latency_bound) {
  // Every request beyond 200 QPS fails fast (a 503): latency stays low.
  Search search;
  search.run(peak_settings(50), [](double qps) { return Scripted{true, qps > 200 ? uint64_t{5} : 0, 0}; });
  CHECK(search.outcome.peak_qps >= 199 && search.outcome.peak_qps <= 200);
  CHECK_EQ(search.trial_qps[0], 50.0);
  CHECK_EQ(search.trial_qps[1], 100.0);
  CHECK_EQ(search.trial_qps[2], 200.0);
  CHECK_EQ(search.trial_qps[3], 400.0);  // the first failing trial ends the widening
  for (double qps : search.trial_qps) CHECK(qps <= 400);
  CHECK(search.messages().find("the trial at 400.000000 fails: 5 of 100 samples failed (http_status 5)") !=
        std::string::npos);
  CHECK(search.outcome.extra_invalid_reasons.empty());
}

TEST(find_peak_a_trial_with_incomplete_samples_fails) {
  Search search;
  search.run(peak_settings(10), [](double qps) { return Scripted{true, 0, qps > 35 ? uint64_t{1} : 0}; });
  CHECK(search.outcome.peak_qps >= 34 && search.outcome.peak_qps <= 35);
  CHECK(search.messages().find("1 of 100 samples never completed") != std::string::npos);
}

TEST(find_peak_failures_at_the_base_qps_end_the_run_naming_counts_and_kinds) {
  Search search;
  search.run(peak_settings(100), [](double) { return Scripted{true, 100, 0}; });
  CHECK_EQ(search.trial_qps.size(), size_t{1});
  CHECK_EQ(search.outcome.peak_qps, 0.0);
  CHECK(search.outcome.has_summary);
  CHECK(search.messages().find("FindPeakPerformance: Initial lower bound does not satisfy performance constraints, "
                               "msg: 100 of 100 samples failed (http_status 100)") != std::string::npos);
  CHECK_EQ(search.outcome.extra_invalid_reasons.size(), size_t{1});
  CHECK_EQ(search.outcome.extra_invalid_reasons[0], std::string("100 of 100 samples failed (http_status 100)."));
  CHECK(search.messages().find("Found peak performance") == std::string::npos);
}

TEST(find_peak_names_the_latency_and_the_failures_when_both_miss) {
  Search search;
  search.run(peak_settings(100), [](double) { return Scripted{false, 3, 2}; });
  CHECK(search.messages().find("msg: Reduce target QPS to improve latency. 3 of 100 samples failed (http_status "
                               "3). 2 of 100 samples never completed.") != std::string::npos);
}

TEST(find_peak_widening_stops_after_the_trial_limit) {
  // A SUT that never fails: the widening would go on to the generation limit
  // (1.5^32 = 4.3e5 stays below it).
  TestSettings s = peak_settings(1);
  s.server_find_peak_qps_boundary_step_size = 0.5;
  Search search;
  search.run(s, [](double) { return Scripted{}; });
  CHECK_EQ(search.trial_qps.size(), size_t{1 + kMaxWideningTrials});
  CHECK(search.messages().find("(the widening trial limit); reporting the lower bound.") != std::string::npos);
  CHECK_EQ(search.outcome.peak_qps, search.trial_qps.back());
}

TEST(find_peak_a_small_boundary_step_still_ends) {
  TestSettings s = peak_settings(1000);
  s.server_find_peak_qps_boundary_step_size = 1e-9;
  Search search;
  search.run(s, [](double) { return Scripted{}; });
  CHECK_EQ(search.trial_qps.size(), size_t{1 + kMaxWideningTrials});
}

TEST(find_peak_bisection_ends_when_the_precision_is_finer_than_a_double) {
  // 9 decimals at ~1e9 QPS: a double cannot tell the bounds apart that finely.
  TestSettings s = peak_settings(1.0e9);
  s.min_duration_ms = 1;
  s.server_find_peak_qps_decimals_of_precision = 9;
  Search search;
  search.run(s, [](double qps) { return Scripted{qps < 1.3e9, 0, 0}; });
  CHECK(search.trial_qps.size() <= size_t{2 + kMaxBisectionTrials});
  CHECK(search.outcome.peak_qps > 1.29e9 && search.outcome.peak_qps < 1.3e9);
  CHECK(search.messages().find("Found peak performance field") != std::string::npos);
}

// The one stop rule (stop_rule.h) and the issuing primitive (issuer.h),
// without threads: the reference's order of checks and the figures logged.
#include "check.h"
#include "issuer.h"
#include "stop_rule.h"

using namespace loadgen;

namespace {

std::unique_ptr<Series> series_of(Scenario scenario, SeriesKind kind, uint64_t queries, StopLimits limits) {
  EffectiveSettings effective;
  effective.scenario = scenario;
  TestSettings settings;
  QueryTrace trace;
  trace.samples_per_query = 1;
  for (uint64_t q = 0; q < queries; ++q) {
    trace.scheduled_delta_ns.push_back(static_cast<int64_t>(q) * 1000);
    trace.sample_index.push_back(static_cast<SampleIndex>(q));
    trace.accuracy_log_sampled.push_back(0);
  }
  std::unique_ptr<Series> s = make_series(effective, settings, kind, std::move(trace));
  s->limits = limits;
  return s;
}

}  // namespace

TEST(stop_rule_natural_end_comes_before_max_query_count) {
  StopLimits limits;
  limits.min_queries = 10;
  limits.target_ns = 500;
  limits.max_queries = 10;
  auto s = series_of(Scenario::SingleStream, SeriesKind::Performance, 100, limits);
  CHECK(decide_stop(*s, 9, 1000).reason == StopReason::None);
  CHECK(decide_stop(*s, 10, 400).reason == StopReason::MaxQueries);  // duration not met yet
  const StopDecision d = decide_stop(*s, 10, 500);
  CHECK(d.reason == StopReason::Natural);
  CHECK_EQ(stop_message(d, 0), std::string("Ending naturally: Minimum query count and test duration met."));
}

TEST(stop_rule_early_ends_before_the_last_query) {
  StopLimits limits;
  limits.min_queries = 1000;
  limits.max_queries = 5;
  limits.max_ns = 100;
  auto s = series_of(Scenario::MultiStream, SeriesKind::Performance, 5, limits);
  // The last generated query still ends early when a limit is reached with it.
  StopDecision d = decide_stop(*s, 5, 50);
  CHECK(d.reason == StopReason::MaxQueries);
  CHECK_EQ(stop_message(d, 0), std::string("IssueQueryThread 0 Ending early: Max query count reached. query_count 5"));
  d = decide_stop(*s, 4, 101);
  CHECK(d.reason == StopReason::MaxDuration);
  CHECK_EQ(stop_message(d, 2),
           std::string("IssueQueryThread 2 Ending early: Max test duration reached. duration_ns 101"));
  limits.max_queries = 0;
  limits.max_ns = 0;
  s->limits = limits;
  d = decide_stop(*s, 5, 50);
  CHECK(d.reason == StopReason::LastQuery);  // ran out
  CHECK(stop_message(d, 0).empty());
}

TEST(stop_rule_server_counts_outstanding_queries_and_has_no_natural_end) {
  StopLimits limits;
  limits.max_async = 2;
  limits.max_queries = 4;
  auto s = series_of(Scenario::Server, SeriesKind::Performance, 10, limits);
  CHECK(decide_stop(*s, 2, 0).reason == StopReason::None);
  StopDecision d = decide_stop(*s, 3, 0);
  CHECK(d.reason == StopReason::TooManyOutstanding);
  CHECK_EQ(d.outstanding, uint64_t{3});
  CHECK_EQ(stop_message(d, 1),
           std::string("IssueQueryThread 1 Ending early: Too many outstanding queries. issued 3 outstanding 3"));
  s->done_queries.store(2);
  CHECK(decide_stop(*s, 3, 0).reason == StopReason::None);
  CHECK(decide_stop(*s, 4, 0).reason == StopReason::MaxQueries);
}

TEST(stop_rule_accuracy_series_end_only_with_their_last_query) {
  StopLimits limits;
  limits.max_queries = 1;
  limits.max_ns = 1;
  limits.max_async = 1;
  for (Scenario scenario : {Scenario::Server, Scenario::SingleStream}) {
    auto s = series_of(scenario, SeriesKind::Accuracy, 3, limits);
    CHECK(decide_stop(*s, 2, 1000).reason == StopReason::None);
    CHECK(decide_stop(*s, 3, 1000).reason == StopReason::LastQuery);
  }
}

TEST(issuer_records_the_end_before_publishing_and_claims_once) {
  StopLimits limits;
  limits.max_queries = 3;
  limits.min_queries = 100;
  auto s = series_of(Scenario::SingleStream, SeriesKind::Performance, 10, limits);
  s->hand_over = true;
  // The issue thread claims query 0; nobody else can.
  CHECK_EQ(claim_or_catch_up(*s, 0), uint64_t{0});
  CHECK(try_issue(*s, 0, false).published == 0);
  CHECK(issue_claimed(*s, 0, 0, 10).reason == StopReason::None);
  CHECK_EQ(s->published.load(), uint64_t{1});
  // Another thread issues 1 and 2; the third ends issuing before it is published.
  CHECK_EQ(try_issue(*s, 1, false).published, uint64_t{2});
  CHECK(try_issue(*s, 1, false).published == 0);  // claimed already
  CHECK(try_issue(*s, 2, true).published == 0);   // aborted
  const Issued last = try_issue(*s, 2, false);
  CHECK_EQ(last.published, uint64_t{3});
  CHECK(last.reason == StopReason::MaxQueries);
  CHECK(s->issue_ended.load());
  CHECK_EQ(s->end.issued, uint64_t{3});
  CHECK(try_issue(*s, 3, false).published == 0);  // nothing past the end
  // The issue thread, back at query 1, catches up with what others issued.
  CHECK_EQ(claim_or_catch_up(*s, 1), uint64_t{3});
  CHECK_EQ(close_issuing(*s), uint64_t{3});
  CHECK_EQ(s->next_issue.load(), Series::kHandOverClosed);
}

TEST(issuer_coalesced_range_shares_one_issue_time) {
  StopLimits limits;
  auto s = series_of(Scenario::Server, SeriesKind::Performance, 5, limits);
  CHECK(issue_claimed(*s, 0, 2, 2500).reason == StopReason::None);
  CHECK_EQ(s->published.load(), uint64_t{3});
  for (uint64_t q = 0; q < 3; ++q) CHECK_EQ(s->issued_ns[q], int64_t{2500});
  CHECK_EQ(s->issued_ns[3], Series::kNotCompleted);
  CHECK(issue_claimed(*s, 3, 4, 5000).reason == StopReason::LastQuery);
}

TEST(stop_rule_server_wait_ends_at_max_duration_for_a_query_due_long_after) {
  StopLimits limits;
  limits.max_ns = 1500;
  auto s = series_of(Scenario::Server, SeriesKind::Performance, 4, limits);  // due at 0, 1000, 2000, 3000
  s->trace.scheduled_delta_ns[3] = 1500 + kMaxDurationOvershootNs + 1;
  CHECK_EQ(server_wait_until_ns(*s, 1), int64_t{1000});
  // Due past max_duration, but within the overshoot: waited for, as the reference does.
  CHECK_EQ(server_wait_until_ns(*s, 2), int64_t{2000});
  // Due later: the wait ends just past max_duration, where the stop rule ends issuing before it.
  CHECK_EQ(server_wait_until_ns(*s, 3), int64_t{1501});
  const StopDecision d = decide_stop(*s, 3, server_wait_until_ns(*s, 3));
  CHECK(d.reason == StopReason::MaxDuration);
  CHECK_EQ(stop_message(d, 0), std::string("IssueQueryThread 0 Ending early: Max test duration reached. duration_ns 1501"));
  // No max_duration, or an accuracy series: always the scheduled time.
  auto unlimited = series_of(Scenario::Server, SeriesKind::Performance, 4, StopLimits{});
  unlimited->trace.scheduled_delta_ns[3] = int64_t{1} << 50;
  CHECK_EQ(server_wait_until_ns(*unlimited, 3), int64_t{1} << 50);
  auto accuracy = series_of(Scenario::Server, SeriesKind::Accuracy, 4, limits);
  accuracy->trace.scheduled_delta_ns[3] = int64_t{1} << 50;
  CHECK_EQ(server_wait_until_ns(*accuracy, 3), int64_t{1} << 50);
}

TEST(issuer_close_before_keeps_others_from_claiming) {
  auto s = series_of(Scenario::Server, SeriesKind::Performance, 4, StopLimits{});
  s->poll_issue = true;
  CHECK_EQ(try_issue(*s, 0, false).published, uint64_t{1});
  CHECK(!close_before(*s, 2));  // query 1 is still to be claimed: nothing closed
  CHECK(close_before(*s, 1));
  CHECK_EQ(try_issue(*s, 1, false).published, uint64_t{0});
  CHECK_EQ(close_issuing(*s), uint64_t{1});  // closed already: what was published
}

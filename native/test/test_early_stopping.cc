// Early-stopping numerics (spec/40 §5.1): the spec's table, and every row of
// golden/early_stopping.json read at test time (golden.h).
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "check.h"
#include "early_stopping.h"
#include "golden.h"
#include "results.h"
#include "settings.h"

using namespace loadgen;
using loadgen_test::Json;

namespace {

// odds and lbeta come from libm's lgamma/exp/log: golden/README.md allows
// last-bit differences (relative 1e-9); every count must match exactly.
constexpr double kLibmTolerance = 1e-9;

bool close_rel(double a, double b, double rel) {
  if (b == 0) return std::fabs(a) <= rel;
  return std::fabs(a - b) <= rel * std::fabs(b);
}

int64_t fresh_min_passing(int64_t t, double p) {
  MinPassingFinder finder;
  return finder.min_passing(t, p);
}

// A number in a row's id as the JS conformance runner prints it.
std::string num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string row_id(const std::string& row) { return "early_stopping.json#" + row; }

// A {columns, rows} table of the vectors.
class Table {
 public:
  explicit Table(const Json& table) : columns_(table.at("columns").items()), rows_(table.at("rows").items()) {}
  const std::vector<Json>& rows() const { return rows_; }
  bool has(const std::string& column) const { return index_of(column) < columns_.size(); }
  const Json& cell(const Json& row, const std::string& column) const {
    const size_t i = index_of(column);
    if (i >= columns_.size()) throw std::runtime_error("no column \"" + column + "\"");
    return row.items().at(i);
  }

 private:
  size_t index_of(const std::string& column) const {
    size_t i = 0;
    while (i < columns_.size() && columns_[i].as_string() != column) ++i;
    return i;
  }
  const std::vector<Json>& columns_;
  const std::vector<Json>& rows_;
};

// golden/README.md: latencies 0, 1, ..., n-1 (SingleStream sample latencies,
// MultiStream query latencies) at percentile p, so an estimate equals its
// rank; compare met, the minimum query count, t, the rank (and the p99 rank
// SingleStream also estimates) and the recommendation text.
void check_rank_estimate(const Json& row, const std::string& scenario, double p, uint64_t n) {
  TestSettings settings;
  if (scenario == "SingleStream") settings.scenario = Scenario::SingleStream;
  else if (scenario == "MultiStream") settings.scenario = Scenario::MultiStream;
  else throw std::runtime_error("scenario " + scenario + " has no latency estimate");
  const bool single = settings.scenario == Scenario::SingleStream;
  settings.single_stream_target_latency_percentile = p;
  settings.multi_stream_target_latency_percentile = p;
  const EffectiveSettings e = derive_effective(settings, 1024, 1024, nullptr);  // QSL sizes do not enter
  SeriesResult raw;
  for (uint64_t i = 0; i < n; ++i) raw.sample_latencies_ns.push_back(static_cast<int64_t>(i));
  if (!single) raw.query_latencies_ns = raw.sample_latencies_ns;
  raw.queries_issued = n;
  const PerformanceSummary s = summarize(e, "", std::move(raw));

  const bool met = s.early_stopping_met;
  const int64_t rank = single ? s.early_stopping_latency_ss : s.early_stopping_latency_ms;
  const bool enough_for_p99 = static_cast<int64_t>(n) >= fresh_min_passing(1, 0.99) + 1;
  for (const auto& [key, value] : row.members()) {
    if (key == "scenario" || key == "p" || key == "n") continue;
    if (key == "early_stopping_met") {
      CHECK_EQ(met, value.as_bool());
    } else if (key == "min_queries_needed") {
      CHECK_EQ(fresh_min_passing(1, p) + 1, value.as_int64());
    } else if (key == "rank_index" || key == "t" || key == "discarded_highest") {
      const int64_t got = key == "rank_index" ? rank : key == "t" ? static_cast<int64_t>(n) - rank
                                                                  : static_cast<int64_t>(n) - rank - 1;
      CHECK_EQ(value.is_null(), !met);
      if (met && !value.is_null()) CHECK_EQ(got, value.as_int64());
    } else if (key == "rank_index_p99_for_multistream_inference") {
      const bool reported = single && met && enough_for_p99;
      CHECK_EQ(value.is_null(), !reported);
      if (reported && !value.is_null()) CHECK_EQ(s.early_stopping_latency_ms, value.as_int64());
    } else if (key == "recommendation") {
      CHECK_EQ(s.early_stopping_recommendation, value.as_string());
    } else {
      loadgen_test::check_no_difference(row_id("latency_rank_estimates"), key + ": no such field here");
    }
  }
}

}  // namespace

TEST(early_stopping_min_passing_spec_table) {
  // spec/40 §5.1: t, then h for p = 0.9, 0.99 and 99.9 % as read from a config.
  const int64_t table[6][4] = {
      {0, 44, 459, 4603},         {1, 63, 661, 6635},           {5, 122, 1302, 13100},
      {77, 912, 9912, 99915},     {1000, 9722, 106569, 1075032}, {40765, 371365, 4082716, 41196173},
  };
  const double p999 = 99.9 * 0.01;  // 0.9990000000000001, as strtod * 0.01
  for (const auto& row : table) {
    CHECK_EQ(fresh_min_passing(row[0], 0.9), row[1]);
    CHECK_EQ(fresh_min_passing(row[0], 0.99), row[2]);
    CHECK_EQ(fresh_min_passing(row[0], p999), row[3]);
  }
}

TEST(early_stopping_memoised_queries_in_order) {
  // SingleStream asks t = 1, 2, 3, ... on one finder: the cached bounds narrow
  // the range but give the same answers as fresh searches here.
  MinPassingFinder finder;
  for (int64_t t = 1; t <= 60; ++t) CHECK_EQ(finder.min_passing(t, 0.9), fresh_min_passing(t, 0.9));
  CHECK_EQ(finder.min_passing(1, 0.9), int64_t(63));  // cached
  CHECK_EQ(finder.min_passing(1, 0.99), int64_t(661));  // separate cache per percentile
}

TEST(early_stopping_confidence_threshold) {
  // The pass threshold: 1 - 0.99 in double.
  CHECK_EQ(1 - kEarlyStoppingConfidence, 0.010000000000000009);
}

TEST(early_stopping_server_verdict_for_counts) {
  // server_early_stopping: what a Server run with n queries, t over the bound,
  // reports; `loadgen stats` asks it without latencies. p = 0.9, t = 1: h = 63.
  MinPassingFinder finder;
  std::string text;
  CHECK(server_early_stopping(finder, 64, 1, 0.9, &text));
  CHECK_EQ(text, std::string(" * Run successful."));
  MinPassingFinder fresh;
  CHECK(!server_early_stopping(fresh, 60, 1, 0.9, &text));
  CHECK_EQ(text, std::string(" * Run unsuccessful.\n * Processed 60 queries.\n * Would need to run at least 4 more queries,\n"
                             " with the run being successful if every additional\n query were under latency."));
}

// ---- golden/early_stopping.json, every row (read at test time) ---------------

TEST(early_stopping_golden_server_min_passing) {
  Json golden;
  if (!loadgen_test::load_golden("early_stopping.json", &golden)) return;
  const Table table(golden.at("server_min_passing"));
  for (const auto& row : table.rows()) {
    const double p = table.cell(row, "percentile").as_double();
    const int64_t t = table.cell(row, "overlatency_count_t").as_int64();
    loadgen_test::golden_case(row_id("server_min_passing[p=" + num(p) + ",t=" + num(t) + "]"), [&] {
      const int64_t h = fresh_min_passing(t, p);  // a Server evaluation starts from a fresh finder
      CHECK_EQ(h, table.cell(row, "h").as_int64());
      if (table.has("min_total_queries")) CHECK_EQ(h + t, table.cell(row, "min_total_queries").as_int64());
    });
  }
  CHECK(!table.rows().empty());
  std::cout << "golden early_stopping.json: " << table.rows().size() << " server_min_passing rows\n";
}

TEST(early_stopping_golden_latency_rank_estimates) {
  Json golden;
  if (!loadgen_test::load_golden("early_stopping.json", &golden)) return;
  const auto& rows = golden.at("latency_rank_estimates").items();
  for (const Json& row : rows) {
    const std::string& scenario = row.at("scenario").as_string();
    const double p = row.at("p").as_double();
    const uint64_t n = row.at("n").as_uint64();
    loadgen_test::golden_case(row_id("latency_rank_estimates[" + scenario + ",p=" + num(p) + ",n=" + num(n) + "]"), [&] {
      check_rank_estimate(row, scenario, p, n);
    });
  }
  CHECK(!rows.empty());
  std::cout << "golden early_stopping.json: " << rows.size() << " latency_rank_estimates\n";
}

TEST(early_stopping_golden_odds_and_lbeta) {
  Json golden;
  if (!loadgen_test::load_golden("early_stopping.json", &golden)) return;
  const Table odds(golden.at("odds"));
  for (const auto& row : odds.rows()) {
    const double p = odds.cell(row, "percentile").as_double();
    const int64_t t = odds.cell(row, "t").as_int64();
    const int64_t h = odds.cell(row, "h").as_int64();
    loadgen_test::golden_case(row_id("odds[p=" + num(p) + ",t=" + num(t) + ",h=" + num(h) + "]"), [&] {
      const double expected = odds.cell(row, "odds").as_double();
      const double got = early_stopping_odds(h, t, p, 0.0);
      if (!close_rel(got, expected, kLibmTolerance)) CHECK_EQ(got, expected);
    });
  }
  const Table lbeta(golden.at("lbeta"));
  for (const auto& row : lbeta.rows()) {
    const int64_t x = lbeta.cell(row, "x").as_int64();
    const int64_t y = lbeta.cell(row, "y").as_int64();
    loadgen_test::golden_case(row_id("lbeta[x=" + num(x) + ",y=" + num(y) + "]"), [&] {
      const double expected = lbeta.cell(row, "lbeta").as_double();
      const double got = early_stopping_lbeta(x, y);
      if (!close_rel(got, expected, kLibmTolerance)) CHECK_EQ(got, expected);
    });
  }
  CHECK(!odds.rows().empty() && !lbeta.rows().empty());
  std::cout << "golden early_stopping.json: " << odds.rows().size() << " odds rows, " << lbeta.rows().size()
            << " lbeta rows\n";
}

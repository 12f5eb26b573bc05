// Early-stopping numerics (spec/40 §5.1) against the reference values of the
// spec and golden/early_stopping.json.
#include <cmath>

#include "check.h"
#include "early_stopping.h"

using namespace loadgen;

namespace {

bool close_rel(double a, double b, double rel) {
  if (b == 0) return std::fabs(a) <= rel;
  return std::fabs(a - b) <= rel * std::fabs(b);
}

int64_t fresh_min_passing(int64_t t, double p) {
  MinPassingFinder finder;
  return finder.min_passing(t, p);
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

TEST(early_stopping_server_min_passing_golden_rows) {
  // golden/early_stopping.json server_min_passing: percentile, t, h (fresh finder).
  struct Row {
    double p;
    int64_t t, h;
  };
  const Row rows[] = {
      {0.5, 0, 7},          {0.5, 1, 10},          {0.5, 7, 20},           {0.5, 40, 65},
      {0.5, 1000, 1108},    {0.5, 10000, 10333},   {0.9, 7, 149},          {0.9, 40, 525},
      {0.9, 10000, 92231},  {0.95, 0, 90},         {0.95, 1, 129},         {0.95, 1000, 20483},
      {0.97, 1, 218},       {0.97, 40, 1863},      {0.97, 10000, 331053},  {0.99, 7, 1589},
      {0.99, 40, 5687},     {0.99, 10000, 1013394}, {0.999, 0, 4603},      {0.999, 1, 6635},
      {0.999, 7, 15989},    {0.999, 10000, 10224999},
  };
  for (const auto& r : rows) CHECK_EQ(fresh_min_passing(r.t, r.p), r.h);
}

TEST(early_stopping_memoised_queries_in_order) {
  // SingleStream asks t = 1, 2, 3, ... on one finder: the cached bounds narrow
  // the range but give the same answers as fresh searches here.
  MinPassingFinder finder;
  for (int64_t t = 1; t <= 60; ++t) CHECK_EQ(finder.min_passing(t, 0.9), fresh_min_passing(t, 0.9));
  CHECK_EQ(finder.min_passing(1, 0.9), int64_t(63));  // cached
  CHECK_EQ(finder.min_passing(1, 0.99), int64_t(661));  // separate cache per percentile
}

TEST(early_stopping_odds_spot_values) {
  // golden/early_stopping.json odds: percentile, t, h, odds (1e-9 relative).
  struct Row {
    double p;
    int64_t t, h;
    double odds;
  };
  const Row rows[] = {
      {0.5, 0, 1, 0.5},
      {0.5, 0, 2, 0.25},
      {0.5, 0, 5, 0.03124999999999999},
      {0.5, 100, 299, 1.9470776089539454e-24},
      {0.99, 0, 10, 0.9043820750088056},
      {0.999, 10, 5, 1.0000000000000044},
      {0.999, 2, 100, 0.9998405621679421},
      {0.5, 2, 299, 1.1156405809234811e-86},
      {0.9, 10, 1000, 5.5853036295010245e-33},
      {0.5, 100, 1, 0.9999999999999535},
      {0.97, 5, 2, 0.9999999950282187},
      {0.999, 100, 5000, 1.0000000000056952},
  };
  for (const auto& r : rows) CHECK(close_rel(early_stopping_odds(r.h, r.t, r.p, 0.0), r.odds, 1e-9));
  // The pass threshold: 1 - 0.99 in double.
  CHECK_EQ(1 - kEarlyStoppingConfidence, 0.010000000000000009);
}

TEST(early_stopping_lbeta_spot_values) {
  struct Row {
    int64_t a, b;
    double lbeta;
  };
  const Row rows[] = {
      {1, 1, 0},
      {1, 2, -0.6931471805599453},
      {1, 1001, -6.908754779316041},
      {2, 50, -7.843848638152508},
      {10, 3, -6.492239835020472},
      {100, 2, -9.220290702829288},
      {1000, 1, -6.907755278982222},
      {1000, 1001, -1389.175748816464},
      {100000, 50, -431.0927772815339},
      {100000, 1001, -5617.298603274161},
  };
  for (const auto& r : rows) CHECK(close_rel(early_stopping_lbeta(r.a, r.b), r.lbeta, 1e-9));
}

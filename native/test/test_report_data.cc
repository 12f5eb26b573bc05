// report.html's distributions (native/report_data.h): the CDF's tail points
// at the summary's ranks, and zeros counted apart beside a log-scaled span.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "check.h"
#include "json.h"
#include "report_data.h"
#include "scratch_array.h"

using namespace loadgen;
using loadgen_test::Json;
using loadgen_test::parse_json;

namespace {

Json distribution_of(const std::vector<int64_t>& values, int64_t mark_ns = 0) {
  ScratchArray<int64_t> scratch(values.size());
  for (int64_t v : values) scratch.push_back(v);
  return parse_json(distribution_json(scratch, mark_ns));
}

uint64_t binned(const Json& histogram) {
  uint64_t sum = histogram.at("above").as_uint64();
  for (const Json& c : histogram.at("counts").items()) sum += c.as_uint64();
  if (const Json* zeros = histogram.find("zeros")) sum += zeros->as_uint64();
  return sum;
}

}  // namespace

TEST(report_cdf_fractions_reach_p99_99_in_steps_of_a_twentieth_of_a_decade) {
  const std::vector<double>& ps = cdf_fractions();
  CHECK_EQ(ps.front(), 0.0);
  CHECK_EQ(ps.back(), 1.0);
  for (size_t i = 1; i < ps.size(); ++i) CHECK(ps[i] > ps[i - 1]);
  // The summary's percentiles are the same doubles (its rank floor(p * n) then agrees).
  for (double exact : {0.5, 0.9, 0.95, 0.97, 0.99, 0.999, 0.9999}) {
    bool found = false;
    for (double p : ps) found = found || p == exact;
    CHECK(found);
  }
  // From p50 to p99.99, no gap wider than a twentieth of a decade of 1 - p (plus the rounding to the literals).
  for (size_t i = 1; i < ps.size(); ++i) {
    if (ps[i - 1] < 0.5 || ps[i] > 0.9999) continue;
    CHECK(std::log10((1 - ps[i - 1]) / (1 - ps[i])) <= 0.05 + 1e-9);
  }
  CHECK(ps.size() < 600);  // the report stays small
}

TEST(report_distribution_values_are_at_the_summarys_ranks) {
  std::vector<int64_t> values;
  for (int64_t v = 1; v <= 20000; ++v) values.push_back(v * 1000);  // 1 us .. 20 ms, shuffled order does not matter
  const Json d = distribution_of(values);
  CHECK_EQ(d.at("count").as_uint64(), uint64_t{20000});
  const std::vector<Json>& p = d.at("p").items();
  const std::vector<Json>& ns = d.at("ns").items();
  CHECK_EQ(p.size(), ns.size());
  for (size_t i = 0; i < p.size(); ++i) {
    const double f = p[i].as_double();
    const size_t rank = f >= 1.0 ? values.size() - 1 : static_cast<size_t>(f * static_cast<double>(values.size()));
    CHECK_EQ(ns[i].as_int64(), values[rank]);
  }
}

TEST(report_histogram_counts_zeros_apart_on_a_log_span) {
  // An issue lateness: many queries issued on time to the ns, the rest from 20 ns to 5 ms.
  std::vector<int64_t> values(300, 0);
  for (int i = 0; i < 2000; ++i) values.push_back(static_cast<int64_t>(20 * std::pow(10.0, 5.4 * i / 2000.0)));
  const Json d = distribution_of(values);
  const Json& h = d.at("histogram");
  CHECK_EQ(h.at("scale").as_string(), std::string("log"));
  CHECK_EQ(h.at("zeros").as_uint64(), uint64_t{300});
  CHECK_EQ(h.at("edges").items().front().as_int64(), int64_t{20});
  CHECK_EQ(binned(h), uint64_t{2300});

  // Beside a narrow span of positive values: linear bins from 0, the zeros in the first (no "zeros").
  std::vector<int64_t> narrow(50, 0);
  for (int i = 100; i < 200; ++i) narrow.push_back(i);
  const Json n = distribution_of(narrow);
  CHECK_EQ(n.at("histogram").at("scale").as_string(), std::string("linear"));
  CHECK(n.at("histogram").find("zeros") == nullptr);
  CHECK_EQ(binned(n.at("histogram")), uint64_t{150});
  const Json all_zero = distribution_of(std::vector<int64_t>(10, 0));
  CHECK_EQ(binned(all_zero.at("histogram")), uint64_t{10});
}

// Early-stopping mathematics of the reference (spec/40 §5), bit for bit.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace loadgen {

constexpr double kEarlyStoppingConfidence = 0.99;
constexpr double kEarlyStoppingTolerance = 0.0;

// Regularized incomplete beta helpers used by the search (exposed for tests).
double early_stopping_lbeta(int64_t a, int64_t b);
double early_stopping_odds(int64_t h, int64_t t, double p, double d);

// Minimum number of passing queries h such that h + t queries with t
// over-latency ones are enough, with the reference's memoised search bounds.
// One finder lives for one EarlyStopping evaluation; its cache is keyed by
// (p, d, c) and then t, so the order of queries matters, as in the reference.
class MinPassingFinder {
 public:
  int64_t min_passing(int64_t t, double p, double d = kEarlyStoppingTolerance,
                      double c = kEarlyStoppingConfidence);

 private:
  struct Key {
    double p, d, c;
    bool operator<(const Key& o) const {
      if (p != o.p) return p < o.p;
      if (d != o.d) return d < o.d;
      return c < o.c;
    }
  };
  std::map<Key, std::map<int64_t, int64_t>> cache_;
};

}  // namespace loadgen

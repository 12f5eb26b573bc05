// Early-stopping mathematics of the reference (spec/40 §5.1). Every operation
// is written in the reference's order so that the doubles, and therefore the
// binary-search decisions, are bit-identical.
#include "early_stopping.h"

#include <cmath>

namespace loadgen {

namespace {

// Series stop threshold 2^-33.
constexpr double kSeriesStop = 1.0 / 8589934592.0;

// Lower-bound search for the first h in [lo, hi) with odds < 1 - c; returns hi
// when none passes.
int64_t search_min_passing(int64_t lo, int64_t hi, int64_t t, double p, double d, double c) {
  int64_t count = hi - lo;
  while (count > 0) {
    const int64_t step = count / 2;
    const int64_t h = lo + step;
    if (early_stopping_odds(h, t, p, d) < 1 - c) {
      count = step;
    } else {
      lo = h + 1;
      count -= step + 1;
    }
  }
  return lo;
}

}  // namespace

double early_stopping_lbeta(int64_t a, int64_t b) {
  return std::lgamma(static_cast<double>(a)) + std::lgamma(static_cast<double>(b)) -
         std::lgamma(static_cast<double>(a + b));
}

// Regularized incomplete beta I_x(h, t + 1) with x = p - d, via the
// hypergeometric series 2F1(1 - b, 1; a + 1; x / (x - 1)).
double early_stopping_odds(int64_t h, int64_t t, double p, double d) {
  const double x = p - d;
  const int64_t a = h;
  const int64_t b = t + 1;
  const double z = x / (x - 1);
  double f = 1.0;
  double term = 1.0;
  int64_t i = 0;
  while (std::fabs(term) > kSeriesStop) {
    term = term * ((static_cast<double>((1 - b) + i) * z) / static_cast<double>((1 + a) + i));
    f += term;
    i += 1;
  }
  const double log_prefactor = static_cast<double>(a) * std::log(x) +
                               static_cast<double>(b - 1) * std::log(1 - x) - early_stopping_lbeta(a, b);
  return (std::exp(log_prefactor) / static_cast<double>(a)) * f;
}

int64_t MinPassingFinder::min_passing(int64_t t, double p, double d, double c) {
  auto& cache = cache_[Key{p, d, c}];
  const auto hit = cache.find(t);
  if (hit != cache.end()) return hit->second;

  int64_t x0 = -1, y0 = 0;
  int64_t x1 = 0;
  int64_t y1 = static_cast<int64_t>(std::ceil(std::log(1 - c) / std::log(p - d)));
  // The two largest memoised t values below this one narrow the range.
  auto it = cache.lower_bound(t);
  if (it != cache.begin()) {
    --it;
    x1 = it->first;
    y1 = it->second;
    if (it != cache.begin()) {
      --it;
      x0 = it->first;
      y0 = it->second;
    }
  }
  const double min_slope = (p - d) / (1 - p + d);
  // The reference multiplies the differences (it is not a ratio); kept as is.
  const double max_slope = static_cast<double>((y1 - y0) * (x1 - x0));
  const int64_t lo = static_cast<int64_t>(static_cast<double>(t - x1) * min_slope + static_cast<double>(y1));
  const int64_t hi =
      static_cast<int64_t>(static_cast<double>(t - x1) * max_slope + static_cast<double>(y1) + 1.0);
  const int64_t h = search_min_passing(lo, hi, t, p, d, c);
  cache[t] = h;
  return h;
}

}  // namespace loadgen

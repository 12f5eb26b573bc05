// Number formatting of the reference's logs (spec/50 §2).
#include "format.h"

#include <cstdio>

namespace loadgen {

namespace {

// snprintf into a buffer large enough for any double in %f form (up to ~310
// integer digits plus the decimals).
std::string printf_double(const char* fmt, int precision, double v) {
  char buf[512];
  const int n = std::snprintf(buf, sizeof(buf), fmt, precision, v);
  if (n < 0) return std::string();
  if (static_cast<size_t>(n) < sizeof(buf)) return std::string(buf, static_cast<size_t>(n));
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(&out[0], out.size(), fmt, precision, v);
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace

// libstdc++'s num_put formats a double with the C library's "%.*g" and the
// stream precision (6), so printf gives the identical text, inf/nan/-0 included.
std::string format_double(double v) { return printf_double("%.*g", 6, v); }

// The reference's DoubleToString uses std::fixed with the given precision,
// which libstdc++ maps to "%.*f".
std::string format_fixed(double v, int decimals) { return printf_double("%.*f", decimals, v); }

std::string format_percentile_label(double fraction) { return format_fixed(fraction * 100, 2); }

std::string format_percentile_one_decimal(double fraction) { return format_fixed(fraction * 100, 1); }

}  // namespace loadgen

// Number formatting of the reference's logs (spec/50 §2).
#pragma once

#include <cstdint>
#include <string>

namespace loadgen {

// iostream default formatting of a double: like printf("%g") with precision 6
// ("1000", "0.99", "1.49031e+07", "inf", "nan", "-0").
std::string format_double(double v);

// printf("%.<decimals>f") (the reference's DoubleToString and to_string(double)).
std::string format_fixed(double v, int decimals);

// Percentile labels: 0.5 -> "50.00", 0.999 -> "99.90".
std::string format_percentile_label(double fraction);

// "<P>th" label with one decimal: 0.9 -> "90.0", 0.999 -> "99.9".
std::string format_percentile_one_decimal(double fraction);

}  // namespace loadgen

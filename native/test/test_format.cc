// Number formatting as the reference's iostream / DoubleToString output.
#include <cmath>
#include <limits>

#include "check.h"
#include "format.h"

using namespace loadgen;

TEST(format_double_matches_iostream_default) {
  CHECK_EQ(format_double(1000), std::string("1000"));
  CHECK_EQ(format_double(0.99), std::string("0.99"));
  CHECK_EQ(format_double(0), std::string("0"));
  CHECK_EQ(format_double(100000), std::string("100000"));
  CHECK_EQ(format_double(1e6), std::string("1e+06"));
  CHECK_EQ(format_double(14903100), std::string("1.49031e+07"));
  CHECK_EQ(format_double(7.280674e-05), std::string("7.28067e-05"));
  CHECK_EQ(format_double(0.0001), std::string("0.0001"));
  CHECK_EQ(format_double(0.00001), std::string("1e-05"));
  CHECK_EQ(format_double(551.3754772144277), std::string("551.375"));
  CHECK_EQ(format_double(156916.89681144865), std::string("156917"));
  CHECK_EQ(format_double(9.999945923253911), std::string("9.99995"));
  CHECK_EQ(format_double(8.3249e-05), std::string("8.3249e-05"));
  CHECK_EQ(format_double(-2.5), std::string("-2.5"));
  // 2^64 - 1 as a double (the wrapped sample_count - 1).
  CHECK_EQ(format_double(18446744073709551615.0), std::string("1.84467e+19"));
}

TEST(format_double_special_values) {
  CHECK_EQ(format_double(std::numeric_limits<double>::infinity()), std::string("inf"));
  CHECK_EQ(format_double(-std::numeric_limits<double>::infinity()), std::string("-inf"));
  CHECK_EQ(format_double(std::numeric_limits<double>::quiet_NaN()), std::string("nan"));
  CHECK_EQ(format_double(-0.0), std::string("-0"));
}

TEST(format_fixed_rounds_exact_binary_value) {
  CHECK_EQ(format_fixed(551.3754772144277, 2), std::string("551.38"));
  CHECK_EQ(format_fixed(100, 2), std::string("100.00"));
  CHECK_EQ(format_fixed(49.989469636784534, 2), std::string("49.99"));
  CHECK_EQ(format_fixed(0.125, 2), std::string("0.12"));  // exact tie: half to even
  CHECK_EQ(format_fixed(0.375, 2), std::string("0.38"));
  CHECK_EQ(format_fixed(1.005, 2), std::string("1.00"));  // 1.005 is below the tie in binary
  CHECK_EQ(format_fixed(2000, 6), std::string("2000.000000"));
  CHECK_EQ(format_fixed(2.5, 0), std::string("2"));
  CHECK_EQ(format_fixed(-0.001, 2), std::string("-0.00"));
  CHECK_EQ(format_fixed(std::numeric_limits<double>::infinity(), 2), std::string("inf"));
  CHECK_EQ(format_fixed(1e300, 2).size(), size_t(304));  // no truncation of long output
}

TEST(format_percentile_labels) {
  CHECK_EQ(format_percentile_label(0.5), std::string("50.00"));
  CHECK_EQ(format_percentile_label(0.9), std::string("90.00"));
  CHECK_EQ(format_percentile_label(0.95), std::string("95.00"));
  CHECK_EQ(format_percentile_label(0.97), std::string("97.00"));
  CHECK_EQ(format_percentile_label(0.99), std::string("99.00"));
  CHECK_EQ(format_percentile_label(0.999), std::string("99.90"));
  CHECK_EQ(format_percentile_one_decimal(0.9), std::string("90.0"));
  CHECK_EQ(format_percentile_one_decimal(0.99), std::string("99.0"));
  CHECK_EQ(format_percentile_one_decimal(0.999), std::string("99.9"));
  CHECK_EQ(format_percentile_one_decimal(99.9 * 0.01), std::string("99.9"));  // 0.9990000000000001
  CHECK_EQ(format_percentile_one_decimal(0.5), std::string("50.0"));
}

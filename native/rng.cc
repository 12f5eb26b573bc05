// MT19937 and the libstdc++ 12 distribution algorithms (spec/20 §1).
#include "rng.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace loadgen {

namespace {
constexpr int kStateSize = 624;
constexpr int kShift = 397;
constexpr uint32_t kMatrixA = 0x9908b0dfu;
constexpr uint32_t kUpperMask = 0x80000000u;
constexpr uint32_t kLowerMask = 0x7fffffffu;
}  // namespace

void Mt19937::seed_with(uint64_t seed) {
  // std::mt19937 keeps only the low 32 bits of its seed (spec/20 §1.1).
  state_[0] = static_cast<uint32_t>(seed);
  for (int i = 1; i < kStateSize; ++i) {
    const uint32_t prev = state_[i - 1];
    state_[i] = 1812433253u * (prev ^ (prev >> 30)) + static_cast<uint32_t>(i);
  }
  index_ = kStateSize;
}

void Mt19937::refill() {
  for (int i = 0; i < kStateSize; ++i) {
    const uint32_t y = (state_[i] & kUpperMask) | (state_[(i + 1) % kStateSize] & kLowerMask);
    state_[i] = state_[(i + kShift) % kStateSize] ^ (y >> 1) ^ ((y & 1u) ? kMatrixA : 0u);
  }
  index_ = 0;
}

uint32_t Mt19937::operator()() {
  if (index_ >= kStateSize) refill();
  uint32_t y = state_[index_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

uint64_t uniform_int(Mt19937& g, uint64_t a, uint64_t b) {
  const uint64_t range = b - a;
  constexpr uint64_t kEngineRange = 0xFFFFFFFFu;
  if (range < kEngineRange) {
    // Lemire's nearly divisionless downscaling.
    const uint32_t r = static_cast<uint32_t>(range + 1);
    uint64_t m = uint64_t{g()} * r;
    uint32_t low = static_cast<uint32_t>(m);
    if (low < r) {
      const uint32_t threshold = static_cast<uint32_t>(0u - r) % r;
      while (low < threshold) {
        m = uint64_t{g()} * r;
        low = static_cast<uint32_t>(m);
      }
    }
    return a + (m >> 32);
  }
  if (range == kEngineRange) return a + g();
  // Wider than the engine: libstdc++ composes a high part recursively and adds
  // one more output, rejecting overflow. LoadGen never needs this; kept so the
  // function is total.
  uint64_t result = 0;
  uint64_t high = 0;
  do {
    high = (kEngineRange + 1) * uniform_int(g, 0, range / (kEngineRange + 1));
    result = high + g();
  } while (result > range || result < high);
  return a + result;
}

double canonical(Mt19937& g) {
  // Two outputs; the sum is rounded once to double (not a 53-bit mantissa cut).
  const double first = static_cast<double>(g());
  const double second = static_cast<double>(g());
  const double sum = first + second * 4294967296.0;
  double r = sum / 18446744073709551616.0;
  if (r >= 1.0) r = std::nextafter(1.0, 0.0);
  return r;
}

double exponential(Mt19937& g, double lambda) { return -std::log(1.0 - canonical(g)) / lambda; }

int64_t seconds_to_ns(double seconds) {
  const double ns = seconds * 1e9;
  // The reference converts with cvttsd2si, whose out-of-range/NaN result is
  // INT64_MIN on x86-64; reproduce that instead of undefined behaviour.
  if (!(ns > -9223372036854775808.0 && ns < 9223372036854775808.0)) {
    return std::numeric_limits<int64_t>::min();
  }
  return static_cast<int64_t>(ns);
}

}  // namespace loadgen

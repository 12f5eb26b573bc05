// Random numbers exactly as the reference LoadGen draws them (spec/20 §1):
// a raw MT19937 plus hand-written equivalents of the libstdc++ 12
// distributions, so traces are identical on every platform and standard
// library. Never use <random>'s distributions here.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace loadgen {

// 32-bit Mersenne Twister (the C++ standard's std::mt19937). The 64-bit seed
// is reduced modulo 2^32, as std::mt19937 does.
class Mt19937 {
 public:
  static constexpr uint32_t kDefaultSeed = 5489u;
  explicit Mt19937(uint64_t seed = kDefaultSeed) { seed_with(seed); }
  void seed_with(uint64_t seed);
  uint32_t operator()();  // next 32-bit output

 private:
  void refill();
  uint32_t state_[624];
  int index_ = 624;
};

// libstdc++ 12 uniform_int_distribution<T>(a, b) for b - a < 2^32 - 1
// (Lemire's nearly divisionless method; most calls take one engine output).
uint64_t uniform_int(Mt19937& g, uint64_t a, uint64_t b);

// generate_canonical<double, 53> as in libstdc++ 12: exactly two outputs.
double canonical(Mt19937& g);

// uniform_real_distribution<double>(0, 1).
inline double uniform_real01(Mt19937& g) { return canonical(g) * (1.0 - 0.0) + 0.0; }

// exponential_distribution<double>(lambda): -log(1 - canonical) / lambda.
double exponential(Mt19937& g, double lambda);

// std::chrono::duration_cast<nanoseconds>(duration<double>(seconds)):
// multiply by 1e9, truncate toward zero.
int64_t seconds_to_ns(double seconds);

// std::shuffle(first, last, g) as libstdc++ 12 implements it (two swaps per
// draw while n <= 65535, one per draw above). With `stop`, a large shuffle
// reads it every kShuffleStopInterval swaps (a few ms of cache-missing
// swaps) and returns false, the order half done, once it is set: shuffling
// 10^8 samples takes seconds, and a stopped run must not wait for it.
constexpr size_t kShuffleStopInterval = size_t{1} << 18;

template <typename T>
bool shuffle(T* first, size_t n, Mt19937& g, const std::atomic<bool>* stop = nullptr) {
  if (n == 0) return true;
  if (uint64_t{0xFFFFFFFFu} / n >= n) {
    size_t i = 1;
    if ((n % 2) == 0) {
      const size_t k = static_cast<size_t>(uniform_int(g, 0, 1));
      std::swap(first[1], first[k]);
      i = 2;
    }
    while (i < n) {
      const uint64_t s = i + 1;
      const uint64_t x = uniform_int(g, 0, s * (s + 1) - 1);
      std::swap(first[i], first[x / (s + 1)]);
      std::swap(first[i + 1], first[x % (s + 1)]);
      i += 2;
    }
    return true;
  }
  for (size_t block = 1; block < n; block += kShuffleStopInterval) {
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) return false;
    const size_t end = n - block > kShuffleStopInterval ? block + kShuffleStopInterval : n;
    for (size_t i = block; i < end; ++i) {
      const size_t k = static_cast<size_t>(uniform_int(g, 0, i));
      std::swap(first[i], first[k]);
    }
  }
  return true;
}

}  // namespace loadgen

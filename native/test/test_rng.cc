// RNG primitives against values from the reference (golden/rng_primitives.json
// and spec/20 §8).
#include <cstdint>
#include <limits>
#include <vector>

#include "check.h"
#include "rng.h"

using loadgen::Mt19937;

namespace {

// How many outputs a fresh engine with `seed` produces before `next`: the
// number of draws an operation consumed when `next` is the following output.
long rng_draws_before(uint64_t seed, uint32_t next, long limit) {
  Mt19937 g(seed);
  for (long i = 0; i < limit; ++i) {
    if (g() == next) return i;
  }
  return -1;
}

template <typename T, typename U>
void rng_check_prefix(const std::vector<T>& actual, const std::vector<U>& expected, size_t offset = 0) {
  CHECK(actual.size() >= offset + expected.size());
  if (actual.size() < offset + expected.size()) return;
  for (size_t i = 0; i < expected.size(); ++i) CHECK_EQ(static_cast<uint64_t>(actual[offset + i]), static_cast<uint64_t>(expected[i]));
}

std::vector<size_t> shuffled_iota(size_t n, Mt19937& g) {
  std::vector<size_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = i;
  loadgen::shuffle(v.data(), v.size(), g);
  return v;
}

}  // namespace

TEST(rng_mt19937_raw_outputs) {
  Mt19937 g0(0);
  CHECK_EQ(g0(), 2357136044u);
  CHECK_EQ(g0(), 2546248239u);
  CHECK_EQ(g0(), 3071714933u);
  CHECK_EQ(g0(), 3626093760u);

  Mt19937 g42(42);
  CHECK_EQ(g42(), 1608637542u);
  CHECK_EQ(g42(), 3421126067u);

  // output_10000 crosses many state refills.
  Mt19937 g(0);
  uint32_t x = 0;
  for (int i = 0; i < 10000; ++i) x = g();
  CHECK_EQ(x, 1543171712u);

  Mt19937 g5489(5489);
  for (int i = 0; i < 9999; ++i) g5489();
  CHECK_EQ(g5489(), 4123659995u);
}

TEST(rng_mt19937_seed_reduced_mod_2_32) {
  Mt19937 a(4294967296ull);  // behaves like 0
  CHECK_EQ(a(), 2357136044u);
  Mt19937 b(4294967297ull);  // behaves like 1
  CHECK_EQ(b(), 1791095845u);
  CHECK_EQ(b(), 4282876139u);
  Mt19937 c(4294967295ull);
  CHECK_EQ(c(), 419326371u);
  // Official seeds: only the low 32 bits matter.
  Mt19937 qsl(2085463073848966840ull);
  CHECK_EQ(qsl(), 144363858u);
  CHECK_EQ(qsl(), 3947231266u);
  Mt19937 qsl_low(2085463073848966840ull & 0xFFFFFFFFull);
  CHECK_EQ(qsl_low(), 144363858u);
  Mt19937 schedule(16159082839903944936ull);
  for (int i = 0; i < 9999; ++i) schedule();
  CHECK_EQ(schedule(), 1802880635u);
  // Re-seeding restarts the stream.
  Mt19937 r(7);
  r();
  r.seed_with(0);
  CHECK_EQ(r(), 2357136044u);
}

TEST(rng_mt19937_default_seed) {
  Mt19937 g;
  CHECK_EQ(g(), 3499211612u);
  CHECK_EQ(g(), 581869302u);
  CHECK_EQ(g(), 3890346734u);
  CHECK_EQ(g(), 3586334585u);
  CHECK_EQ(Mt19937::kDefaultSeed, 5489u);
}

TEST(rng_uniform_int) {
  {
    Mt19937 g(0);
    std::vector<uint64_t> v;
    for (int i = 0; i < 8; ++i) v.push_back(loadgen::uniform_int(g, 0, 9));
    rng_check_prefix(v, std::vector<uint64_t>{5, 5, 7, 8, 6, 8, 5, 8});
  }
  {
    Mt19937 g(2747215439041700203ull);
    std::vector<uint64_t> v;
    for (int i = 0; i < 8; ++i) v.push_back(loadgen::uniform_int(g, 0, 65535));
    rng_check_prefix(v, std::vector<uint64_t>{52402, 62493, 33053, 18732, 43062, 45482, 7680, 42652});
  }
  {
    Mt19937 g(0);
    std::vector<uint64_t> v;
    for (int i = 0; i < 4; ++i) v.push_back(loadgen::uniform_int(g, 0, 2147483646));
    rng_check_prefix(v, std::vector<uint64_t>{1178568021, 1273124118, 1535857465, 1813046879});
  }
  {
    // 16 draws of [0, 999] consume exactly 16 outputs.
    Mt19937 g(0);
    std::vector<uint64_t> v;
    for (int i = 0; i < 16; ++i) v.push_back(loadgen::uniform_int(g, 0, 999));
    rng_check_prefix(v, std::vector<uint64_t>{548, 592, 715, 844, 602, 857, 544, 847});
    CHECK_EQ(rng_draws_before(0, g(), 100), 16);
  }
  {
    // Offset ranges add a.
    Mt19937 g(0);
    CHECK_EQ(loadgen::uniform_int(g, 100, 109), 105u);
    // A range of a single value still consumes one output.
    Mt19937 h(0);
    CHECK_EQ(loadgen::uniform_int(h, 3, 3), 3u);
    CHECK_EQ(h(), 2546248239u);
  }
}

TEST(rng_canonical_and_uniform_real) {
  Mt19937 g(0);
  CHECK_EQ(loadgen::canonical(g), 0.5928446165166826);
  CHECK_EQ(loadgen::uniform_real01(g), 0.8442657442565983);
  CHECK_EQ(loadgen::canonical(g), 0.8579456199898299);
  CHECK_EQ(loadgen::canonical(g), 0.8472517373843312);
  // Two outputs per value.
  CHECK_EQ(rng_draws_before(0, g(), 100), 8);

  // The default-seeded stream feeding the accuracy log (spec/20 §8 ex. 7).
  Mt19937 d;
  CHECK_EQ(loadgen::uniform_real01(d), 0.1354770042967805);
  CHECK_EQ(loadgen::uniform_real01(d), 0.8350085899945795);
  CHECK_EQ(loadgen::uniform_real01(d), 0.96886777112423139);
  CHECK_EQ(loadgen::uniform_real01(d), 0.2210340429827049);
  CHECK_EQ(loadgen::uniform_real01(d), 0.30816705050700327);

  // The TEST01 accuracy-log offset seed (spec/20 §8 ex. 7).
  Mt19937 t(720381539243781796ull);
  CHECK_EQ(loadgen::uniform_real01(t), 0.49069568815352677);
}

TEST(rng_shuffle_small) {
  Mt19937 g(0);
  std::vector<size_t> v = shuffled_iota(4, g);
  rng_check_prefix(v, std::vector<size_t>{0, 2, 1, 3});
  CHECK_EQ(g(), 3071714933u);  // 2 draws consumed

  Mt19937 h(2085463073848966840ull);
  v = shuffled_iota(10, h);
  rng_check_prefix(v, std::vector<size_t>{1, 5, 7, 6, 0, 8, 3, 2, 9, 4});
  CHECK_EQ(h(), 1312898738u);
  CHECK_EQ(rng_draws_before(2085463073848966840ull, 1312898738u, 100), 5);

  // n = 1 draws nothing; n = 0 is a no-op.
  Mt19937 one(0);
  v = shuffled_iota(1, one);
  CHECK_EQ(v[0], 0u);
  CHECK_EQ(one(), 2357136044u);
  Mt19937 zero(0);
  loadgen::shuffle(static_cast<size_t*>(nullptr), 0, zero);
  CHECK_EQ(zero(), 2357136044u);
}

TEST(rng_shuffle_pairwise_limit_65535) {
  // n = 65535: two swaps per draw (with rejections).
  Mt19937 g(0);
  std::vector<size_t> v = shuffled_iota(65535, g);
  rng_check_prefix(v, std::vector<size_t>{29215, 44523, 49097, 30526, 40603, 55090});
  rng_check_prefix(v, std::vector<size_t>{33202, 57086, 60258}, 65535 - 3);
  const uint32_t next = g();
  CHECK_EQ(next, 48273182u);
  CHECK_EQ(rng_draws_before(0, next, 200000), 38712);
}

TEST(rng_shuffle_single_swap_from_65536) {
  // n = 65536: one draw per position, n - 1 draws (plus rejections).
  Mt19937 g(0);
  std::vector<size_t> v = shuffled_iota(65536, g);
  rng_check_prefix(v, std::vector<size_t>{26990, 27744, 21904, 3028, 29287, 11021});
  rng_check_prefix(v, std::vector<size_t>{53672, 57433, 25019}, 65536 - 3);
  uint32_t next = g();
  CHECK_EQ(next, 1052186295u);
  CHECK_EQ(rng_draws_before(0, next, 200000), 65535);

  Mt19937 h(2085463073848966840ull);
  v = shuffled_iota(65536, h);
  next = h();
  CHECK_EQ(next, 3422610682u);
  CHECK_EQ(rng_draws_before(2085463073848966840ull, next, 200000), 65537);

  Mt19937 k(2085463073848966840ull);
  v = shuffled_iota(70000, k);
  rng_check_prefix(v, std::vector<size_t>{3434, 25598, 53455, 6674, 518, 64165});
  rng_check_prefix(v, std::vector<size_t>{101, 41591, 1929}, 70000 - 3);
  CHECK_EQ(k(), 993882504u);
}

TEST(rng_exponential_server_interarrival) {
  {
    Mt19937 g(16159082839903944936ull);
    std::vector<int64_t> d;
    for (int i = 0; i < 6; ++i) d.push_back(loadgen::seconds_to_ns(loadgen::exponential(g, 1000)));
    rng_check_prefix(d, std::vector<int64_t>{1843654, 457923, 1285862, 712994, 386406, 2248341});
  }
  {
    Mt19937 g(0);
    CHECK_EQ(loadgen::exponential(g, 10.5), 0.0855771798855027);
    CHECK_EQ(loadgen::exponential(g, 10.5), 0.1771051631565632);
    Mt19937 h(0);
    std::vector<int64_t> d;
    for (int i = 0; i < 6; ++i) d.push_back(loadgen::seconds_to_ns(loadgen::exponential(h, 0.37)));
    rng_check_prefix(d, std::vector<int64_t>{2428541591, 5025957332, 5274446856, 5078281229, 2640557909, 1311157199});
  }
  {
    Mt19937 g(0);
    std::vector<int64_t> d;
    for (int i = 0; i < 3; ++i) d.push_back(loadgen::seconds_to_ns(loadgen::exponential(g, 123456)));
    rng_check_prefix(d, std::vector<int64_t>{7278, 15062, 15807});
  }
}

TEST(rng_seconds_to_ns_truncates) {
  CHECK_EQ(loadgen::seconds_to_ns(1.0 / 10.5), 95238095);
  CHECK_EQ(loadgen::seconds_to_ns(1.0 / 8099.986230023409), 123457);
  CHECK_EQ(loadgen::seconds_to_ns(1.0 / 3000.003000003), 333333);
  CHECK_EQ(loadgen::seconds_to_ns(1.0 / 123456), 8100);
  CHECK_EQ(loadgen::seconds_to_ns(1.0 / 3), 333333333);
  CHECK_EQ(loadgen::seconds_to_ns(-1.5e-9), -1);  // toward zero
  CHECK_EQ(loadgen::seconds_to_ns(std::numeric_limits<double>::infinity()), INT64_MIN);  // x86 cvttsd2si result, not UB
}

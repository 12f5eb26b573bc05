// A minimal test harness for the core's C++ tests: TEST(name) registers a
// function; CHECK/CHECK_EQ record failures and keep going.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace loadgen_test {

struct TestCase {
  const char* name;
  std::function<void()> fn;
};

inline std::vector<TestCase>& registry() {
  static std::vector<TestCase> tests;
  return tests;
}

inline int& failure_count() {
  static int failures = 0;
  return failures;
}

struct Registrar {
  Registrar(const char* name, std::function<void()> fn) { registry().push_back({name, std::move(fn)}); }
};

inline void report_failure(const char* file, int line, const std::string& what) {
  ++failure_count();
  std::cerr << file << ":" << line << ": check failed: " << what << "\n";
}

template <typename A, typename B>
std::string describe_pair(const A& a, const B& b) {
  std::ostringstream os;
  os.precision(17);
  os << a << " != " << b;
  return os.str();
}

}  // namespace loadgen_test

#define LG_CONCAT2(a, b) a##b
#define LG_CONCAT(a, b) LG_CONCAT2(a, b)
#define TEST(name)                                                                        \
  static void name();                                                                     \
  static ::loadgen_test::Registrar LG_CONCAT(registrar_, name)(#name, name);              \
  static void name()

#define CHECK(cond)                                                               \
  do {                                                                            \
    if (!(cond)) ::loadgen_test::report_failure(__FILE__, __LINE__, #cond);       \
  } while (0)

#define CHECK_EQ(a, b)                                                                         \
  do {                                                                                         \
    const auto& lg_a = (a);                                                                    \
    const auto& lg_b = (b);                                                                    \
    if (!(lg_a == lg_b))                                                                       \
      ::loadgen_test::report_failure(__FILE__, __LINE__,                                       \
                                     std::string(#a " == " #b ": ") +                          \
                                         ::loadgen_test::describe_pair(lg_a, lg_b));           \
  } while (0)

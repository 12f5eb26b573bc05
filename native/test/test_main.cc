// Runs every registered test; prints "N passed, N failed" as its last line.
#include <cstring>

#include "check.h"

int main(int argc, char** argv) {
  const char* filter = argc > 1 ? argv[1] : nullptr;
  int passed = 0, failed = 0;
  for (const auto& test : loadgen_test::registry()) {
    if (filter && std::strstr(test.name, filter) == nullptr) continue;
    const int before = loadgen_test::failure_count();
    try {
      test.fn();
    } catch (const std::exception& e) {
      loadgen_test::report_failure(__FILE__, __LINE__, std::string("exception: ") + e.what());
    }
    if (loadgen_test::failure_count() == before) {
      ++passed;
    } else {
      ++failed;
      std::cerr << "FAIL " << test.name << "\n";
    }
  }
  std::cout << "core: " << passed << " passed, " << failed << " failed\n";
  return failed == 0 ? 0 : 1;
}

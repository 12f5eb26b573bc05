#include "golden.h"

#include <cstdlib>
#include <exception>
#include <fstream>
#include <sstream>

#include "check.h"

#ifndef LOADGEN_DEFAULT_GOLDEN_DIR
#define LOADGEN_DEFAULT_GOLDEN_DIR "../shared/golden"
#endif

namespace loadgen_test {

std::string golden_dir() {
  const char* env = std::getenv("LOADGEN_GOLDEN_DIR");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string(LOADGEN_DEFAULT_GOLDEN_DIR);
}

bool load_golden(const std::string& file, Json* out) {
  const std::string path = golden_dir() + "/" + file;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    report_failure(__FILE__, __LINE__,
                   "golden test vectors not found: cannot open " + path +
                       " (the reference's vectors belong in ../shared/golden beside the repository; "
                       "LOADGEN_GOLDEN_DIR names another folder)");
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  try {
    *out = parse_json(text.str());
  } catch (const std::exception& e) {
    report_failure(__FILE__, __LINE__, path + ": " + e.what());
    return false;
  }
  return true;
}

void golden_case(const std::string& where, const std::function<void()>& run) {
  const int before = failure_count();
  try {
    run();
  } catch (const std::exception& e) {
    report_failure(__FILE__, __LINE__, where + ": exception: " + e.what());
    return;
  }
  if (failure_count() != before) std::cerr << "  in " << where << "\n";
}

void check_no_difference(const std::string& where, const std::string& difference) {
  if (!difference.empty()) report_failure(__FILE__, __LINE__, where + ": " + difference);
}

}  // namespace loadgen_test

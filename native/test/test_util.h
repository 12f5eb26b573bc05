// Small helpers shared by the core's run-level tests.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "recorder.h"

namespace loadgen_test {

// A completion call's response bytes when it completes one sample (or gives
// each the same bytes): Session::complete's `responses`.
struct OneResponse {
  const uint8_t* data;
  size_t size;
  loadgen::ResponseBytes bytes() { return {&get, this}; }
  static bool get(void* self, size_t, const uint8_t** data, size_t* size) {
    *data = static_cast<OneResponse*>(self)->data;
    *size = static_cast<OneResponse*>(self)->size;
    return true;
  }
};

// A directory under the system temp dir for one test's logs (created if needed).
inline std::string temp_outdir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("loadgen_core_test_" + name);
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// How much longer than in a normal build a test that needs its run to be
// fast may make it: LOADGEN_TEST_TIME_FACTOR (scripts/test-native.mjs sets it
// under TSan, whose instrumented code runs 5-15x slower); 1 when unset.
inline int time_factor() {
  const char* env = std::getenv("LOADGEN_TEST_TIME_FACTOR");
  const long f = env != nullptr ? std::strtol(env, nullptr, 10) : 1;
  return f >= 1 && f <= 1000 ? static_cast<int>(f) : 1;
}

// Occurrences of `needle` in `text` (overlapping ones counted).
inline size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace loadgen_test

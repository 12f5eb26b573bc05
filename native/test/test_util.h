// Small helpers shared by the core's run-level tests.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace loadgen_test {

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

// Occurrences of `needle` in `text` (overlapping ones counted).
inline size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace loadgen_test

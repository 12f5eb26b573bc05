// The accuracy log's queue (accuracy_log.h): records from many threads, more
// than its ring holds at once, all written exactly once, each thread's in
// its order; large and small responses; nothing after close().
#include <cstdint>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "accuracy_log.h"
#include "check.h"
#include "test_util.h"

using namespace loadgen;
using loadgen_test::read_file;
using loadgen_test::temp_outdir;

namespace {

// The records' lines: { "seq_id" : N, "qsl_idx" : M, "data" : "HEX" }.
struct Line {
  uint64_t seq_id = 0;
  uint64_t qsl_idx = 0;
  std::string data;
};

std::vector<Line> lines_of(const std::string& text) {
  std::vector<Line> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("{ \"seq_id\" : ", 0) != 0) continue;
    Line l;
    l.seq_id = std::stoull(line.substr(13));
    l.qsl_idx = std::stoull(line.substr(line.find("\"qsl_idx\" : ") + 12));
    const size_t data = line.find("\"data\" : \"") + 10;
    l.data = line.substr(data, line.find('"', data) - data);
    out.push_back(l);
  }
  return out;
}

}  // namespace

TEST(accuracy_log_many_threads_more_records_than_the_ring_each_once_in_order) {
  const std::string path = temp_outdir("accuracy_log_threads") + "/mlperf_log_accuracy.json";
  constexpr uint64_t kThreads = 4;
  constexpr uint64_t kPerThread = AccuracyLog::kRingSlots * 2 + 123;  // wraps the ring; fills it at times
  {
    AccuracyLog log;
    CHECK(log.open(path));
    std::vector<std::thread> threads;
    for (uint64_t t = 0; t < kThreads; ++t) {
      threads.emplace_back([&log, t] {
        for (uint64_t i = 0; i < kPerThread; ++i) {
          AccuracyRecord r;
          r.seq_id = t * kPerThread + i;
          r.qsl_idx = t;
          r.data = {static_cast<uint8_t>(i & 0xFF)};
          log.append(std::move(r));
        }
      });
    }
    for (auto& thread : threads) thread.join();
    log.close();
    CHECK_EQ(log.records_written(), kThreads * kPerThread);
  }
  const std::string text = read_file(path);
  CHECK(text.rfind("[\n{", 0) == 0);
  CHECK(text.size() >= 3 && text.compare(text.size() - 3, 3, "\n]\n") == 0);
  const std::vector<Line> lines = lines_of(text);
  CHECK_EQ(lines.size(), size_t{kThreads * kPerThread});
  std::vector<uint64_t> next(kThreads, 0);
  std::vector<bool> seen(kThreads * kPerThread, false);
  bool ordered = true;
  bool data_right = true;
  for (const Line& l : lines) {
    const uint64_t t = l.qsl_idx;
    const uint64_t i = l.seq_id - t * kPerThread;
    ordered = ordered && t < kThreads && i == next[t];
    if (t < kThreads) next[t] = i + 1;
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02X", static_cast<unsigned>(i & 0xFF));
    data_right = data_right && l.data == hex;
    if (l.seq_id < seen.size()) seen[l.seq_id] = true;
  }
  CHECK(ordered);
  CHECK(data_right);
  bool all = true;
  for (bool s : seen) all = all && s;
  CHECK(all);
}

TEST(accuracy_log_large_responses_and_slot_reuse_keep_their_bytes) {
  const std::string path = temp_outdir("accuracy_log_sizes") + "/mlperf_log_accuracy.json";
  constexpr uint64_t kRecords = AccuracyLog::kRingSlots + 10;
  {
    AccuracyLog log;
    CHECK(log.open(path));
    for (uint64_t i = 0; i < kRecords; ++i) {
      AccuracyRecord r;
      r.seq_id = i;
      // Alternately beyond and within the size a slot keeps.
      r.data.assign(i % 2 == 0 ? AccuracyLog::kKeptBufferBytes + 100 : 3, static_cast<uint8_t>(i % 251));
      log.append(std::move(r));
    }
    log.close();
    AccuracyRecord late;
    late.seq_id = 999999;
    log.append(std::move(late));  // after close(): dropped
    CHECK_EQ(log.records_written(), kRecords);
  }
  const std::vector<Line> lines = lines_of(read_file(path));
  CHECK_EQ(lines.size(), size_t{kRecords});
  bool right = true;
  for (uint64_t i = 0; i < lines.size(); ++i) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02X", static_cast<unsigned>(i % 251));
    std::string expected;
    for (size_t n = 0; n < (i % 2 == 0 ? AccuracyLog::kKeptBufferBytes + 100 : 3); ++n) expected += hex;
    right = right && lines[i].seq_id == i && lines[i].data == expected;
  }
  CHECK(right);
}

TEST(accuracy_log_an_empty_log_is_an_empty_array) {
  const std::string path = temp_outdir("accuracy_log_empty") + "/mlperf_log_accuracy.json";
  {
    AccuracyLog log;
    CHECK(log.open(path));
  }
  CHECK_EQ(read_file(path), std::string("[\n]\n"));
}

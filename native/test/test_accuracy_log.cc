// The accuracy log's queue (accuracy_log.h): records from many threads, more
// than its ring holds at once, all written exactly once, each thread's in
// its order; large and small responses, copied without allocating up to a
// slot's buffer; a record whose fill throws is lost alone; nothing after
// close().
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "accuracy_log.h"
#include "alloc_count.h"
#include "check.h"
#include "test_util.h"

using namespace loadgen;
using loadgen_test::read_file;
using loadgen_test::temp_outdir;

namespace {

// Heap allocations this thread makes in `f` (0 under the sanitizers: not counted).
template <typename F>
uint64_t allocations_in(F&& f) {
#if defined(LG_COUNT_ALLOCATIONS)
  loadgen_test::t_count_allocations = true;
  const uint64_t before = loadgen_test::g_allocations.load();
  f();
  const uint64_t made = loadgen_test::g_allocations.load() - before;
  loadgen_test::t_count_allocations = false;
  return made;
#else
  f();
  return 0;
#endif
}

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
      r.data.assign(i % 2 == 0 ? AccuracyLog::kSlotBytes + 100 : 3, static_cast<uint8_t>(i % 251));
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
    for (size_t n = 0; n < (i % 2 == 0 ? AccuracyLog::kSlotBytes + 100 : 3); ++n) expected += hex;
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

TEST(accuracy_log_responses_up_to_a_slot_buffer_are_copied_without_allocating) {
  const std::string path = temp_outdir("accuracy_log_no_alloc") + "/mlperf_log_accuracy.json";
  constexpr uint64_t kRecords = AccuracyLog::kRingSlots + 100;  // every slot, some twice
  std::vector<uint8_t> bytes(AccuracyLog::kSlotBytes);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i);
  uint64_t small = 0, large = 0;
  {
    AccuracyLog log;
    CHECK(log.open(path));
    small = allocations_in([&] {
      for (uint64_t i = 0; i < kRecords; ++i) {
        log.append_with([&](AccuracyLog::Record& r) { r.set(i, i % 7, bytes.data(), i % (bytes.size() + 1)); });
      }
    });
    std::vector<uint8_t> big(AccuracyLog::kSlotBytes + 1, 0x5A);
    large = allocations_in([&] { log.append_with([&](AccuracyLog::Record& r) { r.set(kRecords, 1, big.data(), big.size()); }); });
    log.close();
    CHECK_EQ(log.records_written(), kRecords + 1);
  }
  CHECK_EQ(small, uint64_t{0});
#if defined(LG_COUNT_ALLOCATIONS)
  CHECK(large > 0);  // the counter sees what a slot's own buffer costs
#endif
  (void)large;
  const std::vector<Line> lines = lines_of(read_file(path));
  CHECK_EQ(lines.size(), size_t{kRecords + 1});
  bool right = true;
  for (uint64_t i = 0; i < kRecords && i < lines.size(); ++i) {
    std::string expected;
    for (size_t n = 0; n < i % (bytes.size() + 1); ++n) {
      char hex[3];
      std::snprintf(hex, sizeof hex, "%02X", static_cast<unsigned>(bytes[n]));
      expected += hex;
    }
    right = right && lines[i].seq_id == i && lines[i].qsl_idx == i % 7 && lines[i].data == expected;
  }
  CHECK(right);
  std::string big_hex;
  for (size_t n = 0; n < AccuracyLog::kSlotBytes + 1; ++n) big_hex += "5A";
  CHECK(!lines.empty() && lines.back().data == big_hex);
}

TEST(accuracy_log_a_fill_that_throws_loses_its_record_only) {
  const std::string path = temp_outdir("accuracy_log_fill_throws") + "/mlperf_log_accuracy.json";
  const uint8_t byte = 0x11;
  {
    AccuracyLog log;
    CHECK(log.open(path));
    log.append_with([&](AccuracyLog::Record& r) { r.set(1, 1, &byte, 1); });
    bool thrown = false;
    try {
      log.append_with([&](AccuracyLog::Record& r) {
        r.set(2, 2, &byte, 1);
        throw std::runtime_error("fill failed");
      });
    } catch (const std::runtime_error&) {
      thrown = true;
    }
    CHECK(thrown);
    // Past the dropped slot (within the ring: were it never handed on, the
    // writer would stop at it and a wrapping append would wait for good).
    for (uint64_t i = 3; i < 13; ++i) log.append_with([&](AccuracyLog::Record& r) { r.set(i, i, &byte, 1); });
    log.close();
    CHECK_EQ(log.records_written(), uint64_t{11});
  }
  const std::vector<Line> lines = lines_of(read_file(path));
  CHECK_EQ(lines.size(), size_t{11});
  bool none_dropped_but_2 = !lines.empty() && lines[0].seq_id == 1;
  for (size_t i = 1; i < lines.size(); ++i) none_dropped_but_2 = none_dropped_but_2 && lines[i].seq_id == i + 2;
  CHECK(none_dropped_but_2);
}

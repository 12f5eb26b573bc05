// A completion call writes its accuracy-logged samples' responses itself
// (Recorder::complete with ResponseBytes): one record each, with the bytes
// and QSL index of that sample; none for an unlogged sample, a rejected
// value or a call without responses; another for a duplicate completion (as
// the reference); no heap allocation on the completing thread for a
// response that fits the ring slot's buffer.
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "alloc_count.h"
#include "check.h"
#include "fake_host.h"
#include "session.h"
#include "test_util.h"

using namespace loadgen;
using loadgen_test::FakeHost;
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

// The response of sample k: small, but one in 7 larger than a slot's buffer.
std::vector<uint8_t> response_of(uint64_t k) {
  if (k % 7 == 6) return std::vector<uint8_t>(AccuracyLog::kSlotBytes + 10, static_cast<uint8_t>(k));
  return {static_cast<uint8_t>(k), static_cast<uint8_t>(k >> 8), 0xAB};
}

std::string hex_of(const std::vector<uint8_t>& bytes) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (uint8_t b : bytes) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xF]);
  }
  return out;
}

// One completion call's responses: sample k's bytes, or (reject) a value that is not bytes.
struct Responses {
  std::vector<uint8_t> bytes;
  bool reject = false;
  ResponseBytes source() { return {&get, this}; }
  static bool get(void* self, size_t i, const uint8_t** data, size_t* size) {
    auto* r = static_cast<Responses*>(self);
    *data = r->bytes.data();
    *size = r->bytes.size();
    return !r->reject;
  }
};

// Completes each sample inline in wake(), how depending on its index k:
// 0: with its response; 1: with a value that is not bytes; 2: with no
// responses; 3: with its response, twice; 4: with an empty response.
class RespondingHost : public FakeHost {
 public:
  void series_started() override {
    cursor_ = 0;
    sampled = session_->trace().accuracy_log_sampled;
    qsl_index = session_->trace().sample_index;
    first_id = session_->first_id();
    first_seq_id = session_->trace().first_sample_id;
  }
  void wake() override {
    session_->begin_drain();
    const uint64_t published = session_->published_queries();
    for (; cursor_ < published; ++cursor_) {
      const uint64_t k = cursor_;  // one sample a query (SingleStream)
      const double id = static_cast<double>(first_id + k);
      Responses responses{response_of(k)};
      if (k % 5 == 4) responses.bytes.clear();
      responses.reject = k % 5 == 1;
      const ResponseBytes source = responses.source();
      const uint64_t allocated = allocations_in([&] {
        session_->complete(&id, 1, false, k % 5 == 2 ? nullptr : &source);
        if (k % 5 == 3) session_->complete(&id, 1, false, &source);
      });
      if (responses.bytes.size() <= AccuracyLog::kSlotBytes) {
        small_allocations += allocated;
      } else {
        large_allocations += allocated;
      }
    }
  }

  std::vector<uint8_t> sampled;
  std::vector<SampleIndex> qsl_index;
  uint64_t first_id = 0;      // sample k's completion id is first_id + k
  uint64_t first_seq_id = 0;  // and its record's seq_id first_seq_id + k
  uint64_t small_allocations = 0;  // completion calls with responses up to a slot's buffer
  uint64_t large_allocations = 0;

 private:
  uint64_t cursor_ = 0;
};

// seq_id -> (qsl_idx, data) of every record, in file order.
std::vector<std::pair<uint64_t, std::pair<uint64_t, std::string>>> records_of(const std::string& text) {
  std::vector<std::pair<uint64_t, std::pair<uint64_t, std::string>>> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("{ \"seq_id\" : ", 0) != 0) continue;
    const uint64_t seq = std::stoull(line.substr(13));
    const uint64_t qsl = std::stoull(line.substr(line.find("\"qsl_idx\" : ") + 12));
    const size_t data = line.find("\"data\" : \"") + 10;
    out.push_back({seq, {qsl, line.substr(data, line.find('"', data) - data)}});
  }
  return out;
}

SessionConfig config(Mode mode, const std::string& name) {
  SessionConfig c;
  c.settings.scenario = Scenario::SingleStream;
  c.settings.mode = mode;
  c.settings.min_duration_ms = 0;
  c.settings.min_query_count = 300;
  c.settings.single_stream_expected_latency_ns = 1000;
  c.qsl_total_count = 64;
  c.qsl_performance_count = 64;
  c.sut_name = "responding-sut";
  c.qsl_name = "responding-qsl";
  c.log.outdir = temp_outdir(name);
  return c;
}

// The records each sample k must have, given whether it is logged; no other.
void check_records(const RespondingHost& host, const RunOutcome& o) {
  std::map<uint64_t, std::vector<std::pair<uint64_t, std::string>>> by_sample;
  for (const auto& r : records_of(read_file(o.accuracy_log_path))) by_sample[r.first - host.first_seq_id].push_back(r.second);
  uint64_t expected_total = 0;
  size_t samples_with_records = 0;
  bool right = true;
  for (uint64_t k = 0; k < host.sampled.size() && right; ++k) {
    size_t expected = 0;
    if (host.sampled[k] && k % 5 != 1 && k % 5 != 2) expected = k % 5 == 3 ? 2 : 1;
    expected_total += expected;
    samples_with_records += expected != 0;
    const auto it = by_sample.find(k);
    const size_t got = it == by_sample.end() ? 0 : it->second.size();
    right = got == expected;
    std::vector<uint8_t> bytes = response_of(k);
    if (k % 5 == 4) bytes.clear();
    for (size_t r = 0; r < got && right; ++r) {
      right = it->second[r].first == host.qsl_index[k] && it->second[r].second == hex_of(bytes);
    }
    if (!right) std::cerr << "sample " << k << ": " << got << " records, expected " << expected << "\n";
  }
  CHECK(right);
  CHECK_EQ(by_sample.size(), samples_with_records);
  CHECK_EQ(o.accuracy_log_records, expected_total);
}

}  // namespace

TEST(response_log_accuracy_run_records_written_by_the_completion_call) {
  RespondingHost host;
  Session session(config(Mode::AccuracyOnly, "response_log_accuracy"), &host);
  const RunOutcome& o = host.run(session);
  CHECK_EQ(host.sampled.size(), size_t{64});
  check_records(host, o);
  CHECK_EQ(o.completion_errors.duplicate_ids, uint64_t{13});  // k % 5 == 3 of 64
  // The bytes are copied into the ring slot's buffer: nothing allocated
  // (before, a std::vector per record); a larger response gets a buffer.
  CHECK_EQ(host.small_allocations, uint64_t{0});
#if defined(LG_COUNT_ALLOCATIONS)
  CHECK(host.large_allocations > 0);
#endif
}

TEST(response_log_performance_run_logs_only_sampled_samples) {
  SessionConfig c = config(Mode::PerformanceOnly, "response_log_sampled");
  c.settings.accuracy_log_probability = 0.5;
  c.settings.accuracy_log_rng_seed = 12345;
  RespondingHost host;
  Session session(c, &host);
  const RunOutcome& o = host.run(session);
  uint64_t sampled = 0;
  for (uint8_t s : host.sampled) sampled += s;
  // Some logged and some not, so both kinds of completion were made.
  CHECK(sampled > 0 && sampled < host.sampled.size());
  check_records(host, o);
  CHECK_EQ(host.small_allocations, uint64_t{0});
}

#include "chrome_trace.h"

#include <cinttypes>
#include <cstdlib>

#if defined(_WIN32)
#include <process.h>
#else
#include <unistd.h>
#endif

namespace loadgen {

namespace {
// Microseconds with 3 decimals from a signed ns count, exactly (no double rounding).
void format_us(char* buf, size_t size, int64_t ns) {
  const char* sign = ns < 0 ? "-" : "";
  const uint64_t a = ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  std::snprintf(buf, size, "%s%" PRIu64 ".%03" PRIu64, sign, a / 1000, a % 1000);
}
}  // namespace

ChromeTrace::~ChromeTrace() { close(); }

bool ChromeTrace::open(const std::string& path, bool enabled, int64_t origin_ns, int64_t wall_origin_ns) {
  close();
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) return false;
  enabled_ = enabled;
  origin_ns_ = origin_ns;
  wall_origin_ns_ = wall_origin_ns;
#if defined(_WIN32)
  pid_ = _getpid();
#else
  pid_ = static_cast<long>(getpid());
#endif
  if (enabled_) {
    std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
    std::fputs("{\"traceEvents\":[\n", file_);
  }
  return true;
}

void ChromeTrace::ts(char* buf, size_t size, int64_t t_ns) const { format_us(buf, size, t_ns - origin_ns_); }

void ChromeTrace::complete(const char* name, uint64_t tid, int64_t start_ns, int64_t end_ns) {
  if (!enabled()) return;
  char t[32], d[32];
  ts(t, sizeof(t), start_ns);
  format_us(d, sizeof(d), end_ns - start_ns);
  std::fprintf(file_, "{\"name\":\"%s\",\"ph\":\"X\",\"pid\":%ld,\"tid\":%" PRIu64 ",\"ts\":%s,\"dur\":%s,\"args\":{}},\n",
               name, pid_, tid, t, d);
}

void ChromeTrace::sample(uint64_t sample_seq, uint64_t query_seq, uint64_t sample_idx, int64_t scheduled_ns,
                         int64_t issued_ns, int64_t completed_ns, bool server_counter) {
  if (!enabled()) return;
  char begin[32], end[32];
  ts(begin, sizeof(begin), scheduled_ns);
  ts(end, sizeof(end), completed_ns);
  if (server_counter) {
    // The reference's counter line, irregular spaces included.
    std::fprintf(file_,
                 "{\"name\":\"Latency\",\"ph\": \"C\",\"pid\":%ld,\"ts\":%s,\"args\":{ \"issue_delay\":%" PRId64
                 ",\"issue_to_done\":%" PRId64 "}},\n",
                 pid_, begin, issued_ns - scheduled_ns, completed_ns - issued_ns);
  }
  std::fprintf(file_,
               "{\"name\":\"Sample\",\"cat\":\"default\",\"ph\":\"b\",\"pid\":%ld,\"id\":%" PRIu64
               ",\"ts\":%s,\"args\":{\"sample_seq\":%" PRIu64 ",\"query_seq\":%" PRIu64 ",\"sample_idx\":%" PRIu64
               ",\"issue_start_ns\":%" PRId64 ",\"complete_ns\":%" PRId64 "}},\n",
               pid_, sample_seq, begin, sample_seq, query_seq, sample_idx, issued_ns - scheduled_ns,
               completed_ns - scheduled_ns);
  std::fprintf(file_, "{\"name\":\"Sample\",\"cat\":\"default\",\"ph\":\"e\", \"pid\":%ld,\"id\":%" PRIu64 ",\"ts\":%s},\n",
               pid_, sample_seq, end);
}

void ChromeTrace::close() {
  if (file_ == nullptr) return;
  if (enabled_) {
    char origin[32];
    format_us(origin, sizeof(origin), wall_origin_ns_);
    std::fprintf(file_,
                 "{\"name\":\"LastTrace\"}\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\n\"ts\":%s,\n"
                 "\"version\":\"MLPerf LoadGen v1.0\"\n}\n}\n",
                 origin);
  }
  std::fclose(file_);
  file_ = nullptr;
}

}  // namespace loadgen

// A SUT that lives in the core (the native HTTP client's adapter,
// http_sut.h): the issue thread hands it each query right after publishing
// it, with no wake of the host's thread and no JS on the way; it completes
// samples from its own threads through Session::complete_at / Session::fail.
#pragma once

#include <cstdint>

namespace loadgen {

struct Series;

class NativeSut {
 public:
  virtual ~NativeSut() = default;
  // Session thread, before the series' first query is published.
  virtual void series_started(Series& series) = 0;
  // Issue thread: queries [first, last] of `series` were just published.
  // Must not block: the next query's due time is near.
  virtual void issue(Series& series, uint64_t first, uint64_t last) = 0;

  // Issue thread, around a Server series' issuing: a SUT that does its own
  // work on the issue thread while it waits (the native HTTP client reads
  // its responses there) says so by returning true, and the scheduler then
  // waits through wait_until() until end_inline_issuing().
  virtual bool begin_inline_issuing() { return false; }
  virtual void end_inline_issuing() {}
  // As wait_until_ns (wait.h), doing the SUT's work meanwhile.
  virtual int64_t wait_until(int64_t target_ns, int64_t spin_window_ns, bool yield_while_spinning) = 0;
};

}  // namespace loadgen

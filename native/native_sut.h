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
};

}  // namespace loadgen

// How a sample failed (a network SUT's HTTP error, reset connection,
// malformed response, timeout or cancellation, or a token-latency sample
// that completed without a first token): the one declaration of the kinds. The binding exports the names (tables.failureKinds) and
// lib/net/protocol.ts's FailureKind is checked against them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace loadgen {

enum class FailureKind : uint8_t { HttpStatus, Connection, MalformedResponse, Timeout, Cancelled, NoFirstToken };

// Names by enum value (result.errors.failedSamples.byKind, the logs).
inline constexpr const char* kFailureKindNames[] = {"http_status", "connection", "malformed_response", "timeout",
                                                    "cancelled",   "no_first_token"};
inline constexpr size_t kFailureKindCount = sizeof(kFailureKindNames) / sizeof(kFailureKindNames[0]);
static_assert(kFailureKindCount == static_cast<size_t>(FailureKind::NoFirstToken) + 1, "one name per kind");

inline const char* to_string(FailureKind kind) { return kFailureKindNames[static_cast<size_t>(kind)]; }

// Failed samples of a run by kind.
struct FailedSampleCounts {
  uint64_t total = 0;
  uint64_t by_kind[kFailureKindCount] = {};
};

// One failed sample's detail-log line: its kind, the SUT's message (control
// characters escaped, at most kMaxFailureMessageBytes) and when it failed
// (its completion stamp, now_ns() clock): the lines are written when the run
// ends, each with the time of its failure.
struct FailureMessage {
  FailureKind kind;
  std::string text;
  int64_t failed_ns = 0;
};

// The longest message kept per failed sample, and how many messages (detail-
// log lines) are kept per kind; beyond that only the counts grow, so a node
// that fails every request cannot fill memory or the disk.
constexpr size_t kMaxFailureMessageBytes = 1024;
constexpr uint64_t kMaxFailureLinesPerKind = 1000;

}  // namespace loadgen

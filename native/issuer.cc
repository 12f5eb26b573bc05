#include "issuer.h"

#include "clock.h"

namespace loadgen {

Issued try_issue(Series& series, uint64_t q, bool issuing_stopped) {
  if (issuing_stopped || series.issue_ended.load(std::memory_order_acquire)) return {};
  uint64_t expected = q;
  if (!series.next_issue.compare_exchange_strong(expected, q + 1, std::memory_order_acq_rel)) return {};
  // Issued now (SingleStream/MultiStream: also its scheduled time, spec/30 §2).
  const StopDecision decision = issue_claimed(series, q, q, now_ns() - series.start_ns);
  return Issued{q + 1, decision.reason};
}

uint64_t claim_or_catch_up(Series& series, uint64_t q) {
  uint64_t n = series.next_issue.load(std::memory_order_acquire);
  if (n == q && series.next_issue.compare_exchange_strong(n, q + 1, std::memory_order_acq_rel)) return q;
  // Claimed by another thread (a lost CAS reloaded n): it publishes shortly.
  while (series.published.load(std::memory_order_acquire) < n) cpu_relax();
  return n;
}

uint64_t close_issuing(Series& series) {
  const uint64_t claimed = series.next_issue.exchange(Series::kHandOverClosed, std::memory_order_acq_rel);
  // Closed already (close_before): every claim made before was published.
  if (claimed == Series::kHandOverClosed) return series.published.load(std::memory_order_acquire);
  while (series.published.load(std::memory_order_acquire) < claimed) cpu_relax();
  return claimed;
}

}  // namespace loadgen

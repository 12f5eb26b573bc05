#include "series.h"

#include <algorithm>

namespace loadgen {

uint64_t reserve_sample_ids(uint64_t count) {
  // Relaxed: only uniqueness matters; the series publishes first_id to other
  // threads with the series itself.
  static std::atomic<uint64_t> next_id{1};
  return next_id.fetch_add(count, std::memory_order_relaxed);
}

std::unique_ptr<Series> make_series(const EffectiveSettings& effective, const TestSettings& settings,
                                    SeriesKind kind, QueryTrace trace) {
  constexpr int64_t kNotCompleted = Series::kNotCompleted;
  auto owned = std::make_unique<Series>();
  Series& s = *owned;
  s.kind = kind;
  s.scenario = effective.scenario;
  s.trace = std::move(trace);
  s.samples_per_query = s.trace.samples_per_query == 0 ? 1 : s.trace.samples_per_query;
  s.sample_count = s.trace.sample_count();
  s.first_id = reserve_sample_ids(s.sample_count);
  s.accuracy_sampled_count = static_cast<uint64_t>(
      std::count(s.trace.accuracy_log_sampled.begin(), s.trace.accuracy_log_sampled.end(), uint8_t{1}));
  const uint64_t queries = s.trace.query_count();

  s.issued_ns.reset(new int64_t[queries]);
  s.dispatched_ns.reset(new std::atomic<int64_t>[queries]);
  std::fill_n(s.issued_ns.get(), queries, kNotCompleted);
  for (uint64_t q = 0; q < queries; ++q) s.dispatched_ns[q].store(kNotCompleted, std::memory_order_relaxed);
  s.completed_ns.reset(new std::atomic<int64_t>[s.sample_count]);
  for (uint64_t k = 0; k < s.sample_count; ++k) s.completed_ns[k].store(kNotCompleted, std::memory_order_relaxed);
  if (settings.use_token_latencies) {
    s.needs_first_token = effective.scenario != Scenario::Offline;
    s.first_token_ns.reset(new std::atomic<int64_t>[s.sample_count]);
    s.n_tokens.reset(new std::atomic<int64_t>[s.sample_count]);
    for (uint64_t k = 0; k < s.sample_count; ++k) {
      s.first_token_ns[k].store(kNotCompleted, std::memory_order_relaxed);
      s.n_tokens[k].store(0, std::memory_order_relaxed);
    }
  }
  if (s.samples_per_query > 1) {
    s.outstanding.reset(new std::atomic<uint32_t>[queries]);
    s.query_done_ns.reset(new std::atomic<int64_t>[queries]);
    for (uint64_t q = 0; q < queries; ++q) {
      s.outstanding[q].store(static_cast<uint32_t>(s.samples_per_query), std::memory_order_relaxed);
      s.query_done_ns[q].store(kNotCompleted, std::memory_order_relaxed);
    }
  }
  // Before the series is visible: hosts ask whether it coalesces when it starts.
  s.coalesce = effective.scenario == Scenario::Server && settings.server_coalesce_queries;
  // The effective limits (spec/30 §4); the stop rule ignores them in accuracy series.
  s.limits.min_queries = effective.min_query_count;
  s.limits.max_queries = effective.max_query_count;
  s.limits.max_async = effective.max_async_queries;
  s.limits.target_ns = static_cast<int64_t>(effective.target_duration_ms) * 1000000;
  s.limits.max_ns = static_cast<int64_t>(effective.max_duration_ms) * 1000000;
  return owned;
}

}  // namespace loadgen

#include "series_results.h"

#include <algorithm>
#include <vector>

namespace loadgen {

namespace {

constexpr int64_t kNotCompleted = Series::kNotCompleted;

bool is_failed(const std::vector<bool>& failed, uint64_t k) { return !failed.empty() && failed[k]; }

// TTFT/TPOT/token-count arrays in sample-id order (no error counting).
// `within_limits` gets the samples whose TTFT and TPOT are both within
// `ttft_limit` / `tpot_limit` (< 0: no limits, nothing counted): a sample
// with fewer than 2 output tokens has no TPOT and is not counted.
void fill_token_results(const Series& series, const std::vector<bool>& failed, int64_t ttft_limit,
                        int64_t tpot_limit, SeriesResult* raw, uint64_t* within_limits) {
  // spec/30 §9, in sample-id order over the completed samples (the ones in
  // sample_latencies_ns). Offline reports only the token count.
  const uint64_t issued_samples = series.issued_queries * series.samples_per_query;
  raw->tokens_per_sample.reserve(issued_samples);
  if (series.needs_first_token) {
    raw->first_token_latencies_ns.reserve(issued_samples);
    raw->time_per_output_token_ns.reserve(issued_samples);
  }
  for (uint64_t k = 0; k < issued_samples; ++k) {
    const int64_t done = series.completed_ns[k].load(std::memory_order_acquire);
    if (done == kNotCompleted || is_failed(failed, k)) continue;
    const SampleTokens t = sample_tokens(series, k, done);
    raw->tokens_per_sample.push_back(t.n);
    if (!t.has_ttft) continue;
    raw->first_token_latencies_ns.push_back(t.ttft);
    if (!t.has_tpot) continue;
    raw->time_per_output_token_ns.push_back(t.tpot);
    if (ttft_limit >= 0 && t.ttft <= ttft_limit && t.tpot <= tpot_limit) ++*within_limits;
  }
}

}  // namespace

SampleTokens sample_tokens(const Series& series, uint64_t k, int64_t done) {
  SampleTokens t;
  int64_t n = series.n_tokens[k].load(std::memory_order_relaxed);
  t.n = n < 0 || n == 1 ? 0 : n;  // the reference's coercions; 0 stays 0
  if (!series.needs_first_token) return t;
  const int64_t first = series.first_token_ns[k].load(std::memory_order_acquire);
  // A sample completed with no first token failed (Recorder::complete), so
  // a successful one has its TTFT; the test keeps the reference's INT64_MIN
  // marker out of the statistics should that ever change.
  if (first == kNotCompleted) return t;
  const uint64_t q = k / series.samples_per_query;
  // Neither is below the query's issue (nor the completion below the first
  // token): Recorder replaces such stamps by the time it recorded them.
  const int64_t ttft = first - scheduled_ns(series, q);
  const int64_t latency = completion_since_scheduled(series, q, done);
  if (ttft < 0 || latency < ttft) return t;
  t.has_ttft = true;
  t.ttft = ttft;
  // TPOT divides the time after the first token by the tokens after it: a
  // sample with fewer than 2 tokens has none. The reference coerces 1 (and
  // a negative count) to 0 and divides by -1, giving a negative TPOT; such
  // samples keep their error lines (check_tokens) and TTFT but add no TPOT.
  if (t.n < 2) return t;
  t.has_tpot = true;
  t.tpot = (latency - ttft) / (t.n - 1);
  return t;
}

std::vector<bool> failed_sample_mask(const Series& series) {
  std::vector<bool> mask;
  std::lock_guard<std::mutex> lock(series.failed_mutex);
  if (series.failed_samples.empty()) return mask;
  mask.assign(series.sample_count, false);
  for (uint64_t k : series.failed_samples) mask[k] = true;
  return mask;
}

PerformanceSummary summarize_series(const Series& series, const EffectiveSettings& effective,
                                    const std::string& sut_name, int64_t* issue_duration_ns) {
  const uint64_t issued = series.issued_queries;
  const uint64_t spq = series.samples_per_query;

  SeriesResult raw;
  raw.queries_issued = issued;
  const uint64_t issued_samples = issued * spq;
  // Min queries is judged on what was issued, as the reference's array (one
  // entry per issued sample) does; the latency array holds only successes.
  raw.samples_issued = issued_samples;
  const std::vector<bool> failed = failed_sample_mask(series);
  raw.sample_latencies_ns.reserve(issued_samples);
  int64_t max_latency = 0;
  int64_t last_completion = 0;
  for (uint64_t k = 0; k < issued_samples; ++k) {
    const int64_t done = series.completed_ns[k].load(std::memory_order_acquire);
    if (done == kNotCompleted) continue;  // counted as incomplete; INVALID
    last_completion = std::max(last_completion, done);
    if (is_failed(failed, k)) continue;  // counted as failed; INVALID
    const int64_t latency = completion_since_scheduled(series, k / spq, done);
    raw.sample_latencies_ns.push_back(latency);
    max_latency = std::max(max_latency, latency);
  }
  if (effective.scenario == Scenario::MultiStream) {
    raw.query_latencies_ns.reserve(issued);
    for (uint64_t q = 0; q < issued; ++q) {
      const int64_t done = series.query_done_time(q);
      if (done == kNotCompleted) continue;
      bool any_failed = false;
      for (uint64_t k = q * spq; k < (q + 1) * spq && !any_failed; ++k) any_failed = is_failed(failed, k);
      if (!any_failed) raw.query_latencies_ns.push_back(completion_since_scheduled(series, q, done));
    }
  }
  const uint64_t last = issued - 1;
  raw.max_latency_s = static_cast<double>(max_latency) / 1e9;
  raw.final_query_scheduled_time_s = static_cast<double>(series.trace.scheduled_delta_ns[last]) / 1e9;
  raw.final_query_issued_time_s = static_cast<double>(series.issued_ns[last]) / 1e9;
  const int64_t last_done = series.query_done_time(last);
  raw.final_query_all_samples_done_time_s =
      static_cast<double>(last_done == kNotCompleted ? last_completion : last_done) / 1e9;
  *issue_duration_ns = last_completion;
  // Goodput: Server token runs are held to the TTFT and TPOT bounds.
  const bool token_limits = effective.scenario == Scenario::Server && effective.use_token_latencies;
  uint64_t within_limits = 0;
  if (series.n_tokens) {
    fill_token_results(series, failed, token_limits ? effective.server_ttft_latency : -1,
                       token_limits ? effective.server_tpot_latency : -1, &raw, &within_limits);
  }
  PerformanceSummary summary = summarize(effective, sut_name, std::move(raw));
  if (token_limits && series.n_tokens) {
    summary.goodput_samples = within_limits;
    summary.goodput_issued_samples = issued_samples;
  }
  // Everything reported is computed; the sorted copies (8 bytes a sample
  // each) would otherwise live as long as the outcome.
  std::vector<int64_t>().swap(summary.raw.sample_latencies_ns);
  std::vector<int64_t>().swap(summary.raw.query_latencies_ns);
  std::vector<int64_t>().swap(summary.raw.first_token_latencies_ns);
  std::vector<int64_t>().swap(summary.raw.time_per_output_token_ns);
  std::vector<int64_t>().swap(summary.raw.tokens_per_sample);
  return summary;
}

void check_tokens(const Series& series, CompletionErrorCounts* errors) {
  const uint64_t issued_samples = series.issued_queries * series.samples_per_query;
  CompletionErrorCounts& e = *errors;
  const std::vector<bool> failed = failed_sample_mask(series);
  for (uint64_t k = 0; k < issued_samples; ++k) {
    // A sample with no first token failed as no_first_token (Recorder), so it
    // is not checked here: failed samples have no tokens to check.
    if (series.completed_ns[k].load(std::memory_order_acquire) == kNotCompleted || is_failed(failed, k)) continue;
    const int64_t n = series.n_tokens[k].load(std::memory_order_relaxed);
    if (n == 0) {
      ++e.zero_tokens;
    } else if (n < 0) {
      ++e.negative_tokens;
    } else if (n == 1) {
      ++e.one_token;
    }
  }
}

namespace {

int64_t time_at(const int64_t* times, uint64_t q) { return times[q]; }
int64_t time_at(const std::atomic<int64_t>* times, uint64_t q) { return times[q].load(std::memory_order_relaxed); }

template <typename Time>
ScratchArray<int64_t> times_since_due_of(const Series& series, Scenario scenario, const Time* times) {
  const uint64_t issued = series.issued_queries;
  const bool waits_for_previous = scenario == Scenario::SingleStream || scenario == Scenario::MultiStream;
  ScratchArray<int64_t> out(issued);
  for (uint64_t q = 0; q < issued; ++q) {
    int64_t due = 0;
    if (scenario == Scenario::Server) {
      due = series.trace.scheduled_delta_ns[q];
    } else if (waits_for_previous && q > 0) {
      due = series.query_done_time(q - 1);
      if (due == kNotCompleted) continue;  // never completed: nothing was due
    }
    const int64_t t = time_at(times, q);
    if (t != kNotCompleted) out.push_back(t - due);
  }
  return out;
}

}  // namespace

ScratchArray<int64_t> times_since_due(const Series& series, Scenario scenario, const int64_t* times) {
  return times_since_due_of(series, scenario, times);
}

ScratchArray<int64_t> times_since_due(const Series& series, Scenario scenario, const std::atomic<int64_t>* times) {
  return times_since_due_of(series, scenario, times);
}

RunOverhead measure_overhead(const Series& series) {
  RunOverhead out;
  if (series.issued_queries == 0) return out;
  auto stats = [](ScratchArray<int64_t>&& v) {
    OverheadStats st;
    if (v.empty()) return st;
    std::sort(v.begin(), v.end());
    const auto at = [&](double p) {
      return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
    };
    st.count = v.size();
    st.p50 = at(0.50);
    st.p90 = at(0.90);
    st.p99 = at(0.99);
    st.p999 = at(0.999);
    st.max = v.back();
    double sum = 0;
    for (int64_t x : v) sum += static_cast<double>(x);
    st.mean = sum / static_cast<double>(v.size());
    return st;
  };
  out.issue_lateness = stats(times_since_due(series, series.scenario, series.issued_ns.get()));
  out.present = out.issue_lateness.count != 0;
  out.delivery_lag = stats(times_since_due(series, series.scenario, series.dispatched_ns.get()));
  out.has_delivery_lag = out.delivery_lag.count != 0;
  return out;
}

}  // namespace loadgen

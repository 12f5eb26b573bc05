#include "report_data.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "detail_log.h"
#include "run_outcome.h"
#include "series.h"
#include "series_results.h"
#include "session_host.h"

namespace loadgen {

namespace {

constexpr int64_t kNotCompleted = Series::kNotCompleted;
// Histogram bins of a distribution, and the target number of timeline windows.
constexpr size_t kHistogramBins = 60;
constexpr int64_t kTimelineWindows = 200;
// Samples a window of the token timeline holds on average (at least one series window).
constexpr uint64_t kTokenWindowSamples = 20;
// Samples a window of the latency percentiles holds on average, and the fewest such windows.
constexpr uint64_t kLatencyWindowSamples = 200;
constexpr uint64_t kMinLatencyWindows = 20;

std::string num(int64_t v) { return std::to_string(v); }
std::string num(uint64_t v) { return std::to_string(v); }
std::string num(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

std::string basename_of(const std::string& path) {
  const size_t slash = path.find_last_of("/\\");
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The value at fraction p, with the rank the exact results use (floor(p * n)).
int64_t at(const ScratchArray<int64_t>& sorted, double p) {
  const size_t i = static_cast<size_t>(p * static_cast<double>(sorted.size()));
  return sorted[std::min(sorted.size() - 1, i)];
}

// The smallest 1/2/5 x 10^k ns step giving at most kTimelineWindows windows (>= 1 us).
int64_t window_for(int64_t duration_ns) {
  const int64_t want = std::max<int64_t>(1, duration_ns / kTimelineWindows);
  for (int64_t decade = 1000;; decade *= 10) {
    for (int64_t m : {1, 2, 5}) {
      if (decade * m >= want) return decade * m;
    }
  }
}

// The token figures of a token-latency series (n_tokens set), from the same
// per-sample values as the summary (sample_tokens): the TTFT, TPOT and
// output-length distributions, completed tokens per window (by completion)
// and TTFT percentiles per window (by the first token's arrival), and, for
// Server, the bounds and the goodput (samples within both of them).
std::string tokens_json(const Series& series, const EffectiveSettings& effective, const std::vector<bool>& failed,
                        int64_t series_window, size_t series_windows) {
  const uint64_t issued_samples = series.issued_queries * series.samples_per_query;
  // Windows of whole series windows holding kTokenWindowSamples samples on
  // average: per-window percentiles and rates of a few samples are noise.
  uint64_t completed_all = 0;
  for (uint64_t k = 0; k < issued_samples; ++k) {
    if (series.completed_ns[k].load(std::memory_order_acquire) != kNotCompleted) ++completed_all;
  }
  const uint64_t merge = std::max<uint64_t>(
      1, std::min<uint64_t>(series_windows, (kTokenWindowSamples * series_windows + completed_all - 1) / std::max<uint64_t>(1, completed_all)));
  const int64_t window = series_window * static_cast<int64_t>(merge);
  const size_t windows = (series_windows + merge - 1) / merge;
  const bool limits = effective.scenario == Scenario::Server && effective.use_token_latencies;
  const int64_t ttft_limit = limits ? effective.server_ttft_latency : 0;
  const int64_t tpot_limit = limits ? effective.server_tpot_latency : 0;
  std::vector<uint64_t> tokens_per(windows, 0), ttft_offsets(windows + 1, 0);
  uint64_t completed = 0, with_ttft = 0, with_tpot = 0, within = 0;
  const auto window_of = [&](int64_t t) { return std::min(windows - 1, static_cast<size_t>(std::max<int64_t>(0, t) / window)); };
  const auto succeeded = [&](uint64_t k, int64_t done) { return done != kNotCompleted && (failed.empty() || !failed[k]); };
  for (uint64_t k = 0; k < issued_samples; ++k) {
    const int64_t done = series.completed_ns[k].load(std::memory_order_acquire);
    if (!succeeded(k, done)) continue;
    const SampleTokens t = sample_tokens(series, k, done);
    ++completed;
    tokens_per[window_of(done)] += static_cast<uint64_t>(t.n);
    if (!t.has_ttft) continue;
    ++with_ttft;
    ++ttft_offsets[window_of(series.first_token_ns[k].load(std::memory_order_acquire)) + 1];
    if (!t.has_tpot) continue;
    ++with_tpot;
    if (limits && t.ttft <= ttft_limit && t.tpot <= tpot_limit) ++within;
  }
  for (size_t w = 0; w < windows; ++w) ttft_offsets[w + 1] += ttft_offsets[w];
  ScratchArray<int64_t> ttft(with_ttft), tpot(with_tpot), lengths(completed);
  ttft.use_all();
  {
    std::vector<uint64_t> fill(ttft_offsets.begin(), ttft_offsets.end() - 1);
    for (uint64_t k = 0; k < issued_samples; ++k) {
      const int64_t done = series.completed_ns[k].load(std::memory_order_acquire);
      if (!succeeded(k, done)) continue;
      const SampleTokens t = sample_tokens(series, k, done);
      lengths.push_back(t.n);
      if (t.has_tpot) tpot.push_back(t.tpot);
      if (!t.has_ttft) continue;
      const size_t w = window_of(series.first_token_ns[k].load(std::memory_order_acquire));
      if (fill[w] < ttft_offsets[w + 1]) ttft[fill[w]++] = t.ttft;
    }
  }
  std::string tokens_list, p50_list, p99_list;
  for (size_t w = 0; w < windows; ++w) {
    const char* sep = w ? "," : "";
    tokens_list += sep + num(tokens_per[w]);
    const auto first = ttft.begin() + static_cast<std::ptrdiff_t>(ttft_offsets[w]);
    const auto last = ttft.begin() + static_cast<std::ptrdiff_t>(ttft_offsets[w + 1]);
    if (first == last) {
      p50_list += std::string(sep) + "null";
      p99_list += std::string(sep) + "null";
      continue;
    }
    std::sort(first, last);
    const size_t count = static_cast<size_t>(last - first);
    p50_list += sep + num(*(first + static_cast<std::ptrdiff_t>(count / 2)));
    p99_list += sep + num(*(first + static_cast<std::ptrdiff_t>(std::min(count - 1, count * 99 / 100))));
  }
  std::string o = "{\"ttft_limit_ns\":" + num(ttft_limit) + ",\"tpot_limit_ns\":" + num(tpot_limit);
  if (limits) o += ",\"goodput\":{\"within_limits\":" + num(within) + ",\"issued_samples\":" + num(issued_samples) + "}";
  o += ",\"ttft\":" + (series.needs_first_token ? distribution_json(ttft, ttft_limit) : std::string("null"));
  o += ",\"tpot\":" + (series.needs_first_token ? distribution_json(tpot, tpot_limit) : std::string("null"));
  o += ",\"output_tokens\":" + distribution_json(lengths, 0);
  o += ",\"timeline\":{\"window_ns\":" + num(window) + ",\"completed_tokens\":[" + tokens_list + "]";
  if (series.needs_first_token) o += ",\"ttft_p50_ns\":[" + p50_list + "],\"ttft_p99_ns\":[" + p99_list + "]";
  o += "}}";
  return o;
}

std::string series_json(const Series& series, const EffectiveSettings& effective) {
  const Scenario scenario = effective.scenario;
  const uint64_t issued = series.issued_queries;
  const uint64_t spq = series.samples_per_query;
  const uint64_t issued_samples = issued * spq;
  // A token run's Server bounds are TTFT and TPOT (its target latency does not apply).
  const int64_t bound = scenario == Scenario::Server && !effective.use_token_latencies ? effective.target_latency_ns : 0;

  // Failed samples (Session::fail) are left out of the completions and
  // latencies, as in the summary; they still extend the series' duration.
  const std::vector<bool> failed = failed_sample_mask(series);
  const auto succeeded = [&](uint64_t k, int64_t done) {
    return done != kNotCompleted && (failed.empty() || !failed[k]);
  };
  int64_t end_ns = 0;
  uint64_t completed = 0;
  for (uint64_t k = 0; k < issued_samples; ++k) {
    const int64_t done = series.completed_ns[k].load(std::memory_order_acquire);
    if (done == kNotCompleted) continue;
    end_ns = std::max(end_ns, done);
    if (succeeded(k, done)) ++completed;
  }
  for (uint64_t q = 0; q < issued; ++q) end_ns = std::max(end_ns, series.issued_ns[q]);

  // Timeline: samples grouped by completion window (a counting sort, so the
  // per-window percentiles cost one array of the run's size).
  const int64_t window = window_for(end_ns);
  const size_t windows = static_cast<size_t>(end_ns / window) + 1;
  std::vector<uint64_t> issued_per(windows, 0), offsets(windows + 1, 0);
  for (uint64_t q = 0; q < issued; ++q) ++issued_per[static_cast<size_t>(series.issued_ns[q] / window)];
  for (uint64_t k = 0; k < issued_samples; ++k) {
    const int64_t done = series.completed_ns[k].load(std::memory_order_acquire);
    if (succeeded(k, done)) ++offsets[static_cast<size_t>(done / window) + 1];
  }
  for (size_t w = 0; w < windows; ++w) offsets[w + 1] += offsets[w];
  ScratchArray<int64_t> by_window(completed);
  by_window.use_all();
  {
    std::vector<uint64_t> fill(offsets.begin(), offsets.end() - 1);
    for (uint64_t k = 0; k < issued_samples; ++k) {
      const int64_t done = series.completed_ns[k].load(std::memory_order_acquire);
      if (!succeeded(k, done)) continue;
      const size_t w = static_cast<size_t>(done / window);
      if (w >= windows || fill[w] >= offsets[w + 1]) continue;  // counted above; never changes after the series
      by_window[fill[w]++] = completion_since_scheduled(series, k / spq, done);  // as the summary's
    }
  }
  std::string issued_list, completed_list, p50_list, p99_list, max_list;
  for (size_t w = 0; w < windows; ++w) {
    const char* sep = w ? "," : "";
    issued_list += sep + num(issued_per[w]);
    completed_list += sep + num(offsets[w + 1] - offsets[w]);
  }
  // The latency percentiles over windows of whole timeline windows holding
  // kLatencyWindowSamples samples on average (a p99 of fewer than 100 is the
  // maximum), keeping at least kMinLatencyWindows of them.
  const uint64_t merge = std::max<uint64_t>(
      1, std::min<uint64_t>((kLatencyWindowSamples * windows + completed - 1) / std::max<uint64_t>(1, completed),
                            windows / kMinLatencyWindows));
  const size_t latency_windows = (windows + merge - 1) / merge;
  for (size_t g = 0; g < latency_windows; ++g) {
    const char* sep = g ? "," : "";
    const auto first = by_window.begin() + static_cast<std::ptrdiff_t>(offsets[g * merge]);
    const auto last = by_window.begin() + static_cast<std::ptrdiff_t>(offsets[std::min<size_t>(windows, (g + 1) * merge)]);
    if (first == last) {
      p50_list += std::string(sep) + "null";
      p99_list += std::string(sep) + "null";
      max_list += std::string(sep) + "null";
      continue;
    }
    std::sort(first, last);
    const size_t count = static_cast<size_t>(last - first);
    p50_list += sep + num(*(first + static_cast<std::ptrdiff_t>(count / 2)));
    p99_list += sep + num(*(first + static_cast<std::ptrdiff_t>(std::min(count - 1, count * 99 / 100))));
    max_list += sep + num(*(last - 1));
  }

  std::string o = "{\"kind\":\"" + std::string(series.kind == SeriesKind::Accuracy ? "accuracy" : "performance") +
                  "\",\"issued_queries\":" + num(issued) + ",\"samples_per_query\":" + num(spq) +
                  ",\"issued_samples\":" + num(issued_samples) + ",\"completed_samples\":" + num(completed) +
                  ",\"duration_ns\":" + num(end_ns);
  // by_window holds every completed sample's latency: sorted whole, it is
  // the run's distribution (one array of the run's size, not two).
  o += ",\"sample_latency\":" + distribution_json(by_window, bound);
  by_window = ScratchArray<int64_t>();
  if (scenario == Scenario::MultiStream) {
    ScratchArray<int64_t> query_latencies(issued);
    for (uint64_t q = 0; q < issued; ++q) {
      const int64_t done = series.query_done_time(q);
      bool any_failed = false;
      for (uint64_t k = q * spq; k < (q + 1) * spq && !failed.empty() && !any_failed; ++k) any_failed = failed[k];
      if (done != kNotCompleted && !any_failed) query_latencies.push_back(completion_since_scheduled(series, q, done));
    }
    o += ",\"query_latency\":" + distribution_json(query_latencies, 0);
  }
  o += ",\"timeline\":{\"window_ns\":" + num(window) + ",\"issued_queries\":[" + issued_list +
       "],\"completed_samples\":[" + completed_list + "],\"latency_window_ns\":" +
       num(window * static_cast<int64_t>(merge)) + ",\"latency_p50_ns\":[" + p50_list +
       "],\"latency_p99_ns\":[" + p99_list + "],\"latency_max_ns\":[" + max_list + "]}";

  if (series.n_tokens) o += ",\"tokens\":" + tokens_json(series, effective, failed, window, windows);
  // Loadgen overhead per query, as in the summary; one array at a time.
  {
    ScratchArray<int64_t> lateness = times_since_due(series, scenario, series.issued_ns.get());
    o += ",\"issue_lateness\":" + distribution_json(lateness, 0);
  }
  {
    ScratchArray<int64_t> lag = times_since_due(series, scenario, series.dispatched_ns.get());
    o += ",\"delivery_lag\":" + distribution_json(lag, 0);
  }
  o += "}";
  return o;
}

}  // namespace

// The fractions a distribution's CDF is given at: 500 even steps, the
// percentiles MLPerf reports or targets, and 20 steps per decade of 1 - p
// down to 1e-4, so that a tail plot (1 - p on a log axis, p50 to p99.99) is
// drawn from points, not a handful of them. The percentiles are the
// literals the summary uses (its rank floor(p * n) is the same double).
const std::vector<double>& cdf_fractions() {
  static const std::vector<double> fractions = [] {
    const double exact[] = {0.5, 0.9, 0.95, 0.97, 0.99, 0.995, 0.999, 0.9995, 0.9999};
    std::vector<double> ps;
    for (int i = 0; i <= 500; ++i) ps.push_back(i / 500.0);
    for (int k = 7; k <= 80; ++k) {
      const double p = 1.0 - std::pow(10.0, -k / 20.0);
      bool near = false;
      for (double e : exact) near = near || std::fabs(p - e) < 1e-9;
      if (!near) ps.push_back(p);
    }
    for (double e : exact) ps.push_back(e);
    std::sort(ps.begin(), ps.end());
    // i / 500.0 gives the same doubles as the literals; any other pair this close is one point.
    std::vector<double> out;
    for (double p : ps) {
      if (out.empty() || p - out.back() > 1e-9) out.push_back(p);
    }
    return out;
  }();
  return fractions;
}

std::string distribution_json(ScratchArray<int64_t>& values, int64_t mark_ns) {
  if (values.empty()) return "null";
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  double sum = 0;
  for (int64_t v : values) sum += static_cast<double>(v);
  std::string o = "{\"count\":" + num(static_cast<uint64_t>(n)) + ",\"min\":" + num(values.front()) +
                  ",\"max\":" + num(values.back()) + ",\"mean\":" + num(sum / static_cast<double>(n));
  std::string p_list, ns_list;
  for (double p : cdf_fractions()) {
    if (!p_list.empty()) {
      p_list += ',';
      ns_list += ',';
    }
    p_list += num(p);
    ns_list += num(p >= 1.0 ? values.back() : at(values, p));
  }
  o += ",\"p\":[" + p_list + "],\"ns\":[" + ns_list + "]";
  // Bins from the minimum to p99.9 (to the maximum when the tail is short),
  // so one outlier does not squash the shape; the rest is "above". Log-spaced
  // when the range spans more than a factor of 50 (latencies usually do);
  // values of 0 (an issue lateness of a query issued on time to the ns),
  // which a log axis cannot show, are then counted apart as "zeros".
  const size_t zeros = static_cast<size_t>(std::upper_bound(values.begin(), values.end(), int64_t{0}) - values.begin());
  const bool zeros_apart = values.front() == 0 && zeros < n && static_cast<double>(values.back()) / static_cast<double>(values[zeros]) > 50.0;
  const int64_t lo = zeros_apart ? values[zeros] : values.front();
  const int64_t q999 = at(values, 0.999);
  int64_t hi = (values.back() - lo <= 2 * (q999 - lo)) ? values.back() : q999;
  if (mark_ns > hi && mark_ns <= values.back()) hi = mark_ns;
  if (hi <= lo) hi = lo + 1;
  const bool log_scale = lo > 0 && static_cast<double>(hi) / static_cast<double>(lo) > 50.0;
  const size_t skipped = log_scale && zeros_apart ? zeros : 0;
  std::vector<int64_t> edges(kHistogramBins + 1);
  // Linear bins of one integer width, so each holds as many integer values
  // (token counts over a short range would otherwise alternate widths).
  const int64_t width = (hi + 1 - lo + static_cast<int64_t>(kHistogramBins) - 1) / static_cast<int64_t>(kHistogramBins);
  for (size_t i = 0; i <= kHistogramBins; ++i) {
    const double f = static_cast<double>(i) / static_cast<double>(kHistogramBins);
    edges[i] = log_scale ? static_cast<int64_t>(std::llround(static_cast<double>(lo) *
                                                             std::pow(static_cast<double>(hi) / lo, f)))
                         : std::min(hi + 1, lo + static_cast<int64_t>(i) * width);
  }
  edges.back() = hi + 1;  // bins are [edge, next edge)
  // Integer values (token counts) over a short range: no empty bins of
  // width 0, each edge above the last (one bin per value at the finest).
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  const size_t bin_count = edges.size() - 1;
  std::vector<uint64_t> bins(bin_count, 0);
  uint64_t above = 0;
  size_t b = 0;
  for (size_t i = skipped; i < n; ++i) {  // sorted: the bin index only grows
    const int64_t v = values[i];
    while (b < bin_count && v >= edges[b + 1]) ++b;
    if (b == bin_count) {
      ++above;
    } else {
      ++bins[b];
    }
  }
  o += ",\"histogram\":{\"scale\":\"" + std::string(log_scale ? "log" : "linear") + "\",\"edges\":[";
  for (size_t i = 0; i < edges.size(); ++i) o += (i ? "," : "") + num(edges[i]);
  o += "],\"counts\":[";
  for (size_t i = 0; i < bins.size(); ++i) o += (i ? "," : "") + num(bins[i]);
  o += "],\"above\":" + num(above);
  if (skipped > 0) o += ",\"zeros\":" + num(static_cast<uint64_t>(skipped));
  o += "}}";
  return o;
}

std::string report_data_path(const LogOutputSettings& log, const std::string& test_datetime) {
  std::string name = "loadgen_";
  if (log.prefix_with_datetime) name += test_datetime + "_";
  return log.outdir + "/" + name + "report_data" + log.suffix + ".json";
}

const Series* reported_series(const std::vector<std::unique_ptr<Series>>& series, const RunOutcome& outcome) {
  std::vector<const Series*> performance;
  for (const auto& s : series) {
    if (s && s->kind == SeriesKind::Performance && s->issued_queries != 0) performance.push_back(s.get());
  }
  if (performance.empty() || !outcome.has_summary) return nullptr;
  if (!outcome.peak_trials.empty()) {
    // Trials and performance series correspond one to one, in order.
    for (size_t i = std::min(outcome.peak_trials.size(), performance.size()); i-- > 0;) {
      if (outcome.peak_trials[i].target_qps == outcome.peak_qps) return performance[i];
    }
    return performance.front();  // the base trial failed its constraints: it is the one reported
  }
  return performance.back();
}

std::string report_data_json(const Series* reported, const EffectiveSettings& effective, const RunOutcome& outcome,
                             const LogOutputSettings& log) {
  std::string trace_file;
  if (log.enable_trace) {
    std::string base = log.prefix;
    if (log.prefix_with_datetime) base += outcome.test_datetime + "_";
    trace_file = base + "trace" + log.suffix + ".json";
  }
  std::string o = "{\"format\":\"loadgen-report-data\",\"version\":" + std::to_string(kReportDataVersion);
  o += ",\"test_datetime\":" + DetailLog::quote(outcome.test_datetime);
  o += ",\"scenario\":" + DetailLog::quote(to_string(effective.scenario));
  o += ",\"mode\":" + DetailLog::quote(to_string(outcome.mode));
  o += ",\"target_latency_ns\":" + num(effective.target_latency_ns);
  o += ",\"target_latency_percentile\":" + num(effective.target_latency_percentile);
  o += ",\"use_token_latencies\":" + std::string(effective.use_token_latencies ? "true" : "false");
  o += ",\"files\":{\"summary\":" + DetailLog::quote(basename_of(outcome.summary_path)) +
       ",\"detail\":" + DetailLog::quote(basename_of(outcome.detail_log_path)) +
       ",\"accuracy\":" + DetailLog::quote(basename_of(outcome.accuracy_log_path)) +
       ",\"trace\":" + DetailLog::quote(trace_file) + "}";
  o += ",\"series\":" + (reported ? series_json(*reported, effective) : std::string("null"));
  o += "}\n";
  return o;
}

bool write_report_data(const std::vector<std::unique_ptr<Series>>& series, const EffectiveSettings& effective,
                       const RunOutcome& outcome, const LogOutputSettings& log) {
  const std::string path = report_data_path(log, outcome.test_datetime);
  const std::string text = report_data_json(reported_series(series, outcome), effective, outcome, log);
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out << text;
    if (!out.flush()) {
      out.close();
      std::remove(temp.c_str());
      return false;
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    return false;
  }
  return true;
}

}  // namespace loadgen

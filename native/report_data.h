// loadgen_report_data.json: what `loadgen report` draws besides the summary
// and detail logs, computed once from the records after the run (never
// during it): latency distribution and CDF, per-window QPS and latency
// percentiles, issue-lateness and delivery-lag distributions of the reported
// performance series. Small (a few hundred KB at most) whatever the run's size.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "scratch_array.h"

namespace loadgen {

struct EffectiveSettings;
struct LogOutputSettings;
struct RunOutcome;
struct Series;

// Bumped when a field changes meaning (lib/report/report.ts reads it).
constexpr int kReportDataVersion = 1;

// "<outdir>/loadgen_[<datetime>_]report_data<suffix>.json" (lib/fs/log-files.ts
// derives the same name).
std::string report_data_path(const LogOutputSettings& log, const std::string& test_datetime);

// The JSON document for the run. `reported` is the performance series the
// summary reports (null: none, e.g. AccuracyOnly).
std::string report_data_json(const Series* reported, const EffectiveSettings& effective, const RunOutcome& outcome,
                             const LogOutputSettings& log);

// The series the summary reports: the performance run, or FindPeak's peak trial.
const Series* reported_series(const std::vector<std::unique_ptr<Series>>& series, const RunOutcome& outcome);

// One distribution: {"count","min","max","mean","p":[...],"ns":[...],
// "histogram":{"scale","edges","counts","above"[,"zeros"]}} of `values`
// (sorted here). `mark_ns` > 0 widens the histogram to show it. Bins span the
// minimum to p99.9 (the maximum when the tail is short), log-spaced when that
// spans more than a factor of 50; values of 0 beside such a span are counted
// in "zeros" (a log axis cannot show them). The CDF is given at
// cdf_fractions(), each value at rank floor(p * n) as in the summary.
std::string distribution_json(ScratchArray<int64_t>& values, int64_t mark_ns);

// The fractions a distribution's CDF is given at: 500 even steps, the
// percentiles MLPerf reports or targets, and 20 steps per decade of 1 - p
// down to 1e-4 (report.html draws the tail from p50 to p99.99 on a log axis).
const std::vector<double>& cdf_fractions();

// Writes the file; returns false (and leaves no partial file) on failure.
bool write_report_data(const std::vector<std::unique_ptr<Series>>& series, const EffectiveSettings& effective,
                       const RunOutcome& outcome, const LogOutputSettings& log);

}  // namespace loadgen

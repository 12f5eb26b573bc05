// loadgen_report_data.json: what `loadgen report` draws besides the summary
// and detail logs, computed once from the records after the run (never
// during it): latency distribution and CDF, per-window QPS and latency
// percentiles, issue-lateness and delivery-lag distributions of the reported
// performance series. Small (a few hundred KB at most) whatever the run's size.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace loadgen {

struct EffectiveSettings;
struct LogOutputSettings;
struct RunOutcome;
struct Series;

// Bumped when a field changes meaning (lib/report/report.ts reads it).
constexpr int kReportDataVersion = 1;

// "<outdir>/loadgen_[<datetime>_]report_data<suffix>.json" (lib/report/report.ts
// derives the same name).
std::string report_data_path(const LogOutputSettings& log, const std::string& test_datetime);

// The JSON document for the run. `reported` is the performance series the
// summary reports (null: none, e.g. AccuracyOnly).
std::string report_data_json(const Series* reported, const EffectiveSettings& effective, const RunOutcome& outcome,
                             const LogOutputSettings& log);

// The series the summary reports: the performance run, or FindPeak's peak trial.
const Series* reported_series(const std::vector<std::unique_ptr<Series>>& series, const RunOutcome& outcome);

// Writes the file; returns false (and leaves no partial file) on failure.
bool write_report_data(const std::vector<std::unique_ptr<Series>>& series, const EffectiveSettings& effective,
                       const RunOutcome& outcome, const LogOutputSettings& log);

}  // namespace loadgen

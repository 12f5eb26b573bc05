// The field table of PerformanceSummary: which fields the binding reports,
// under which names and when. bindings/convert.cc (the run outcome's
// `summary`) and bindings/conformance.cc (golden results_math "outputs") are
// generated from these rows.
#pragma once

#include "field_table.h"
#include "results.h"

namespace loadgen {

// When the golden results_math "outputs" carry a field: always, for one
// scenario (the rates), with use_token_latencies, or never.
enum class GoldenOutput { Always, SingleStream, Server, Offline, Tokens, Never };

// Where the run outcome reports a field: in `summary`, in `summary.tokens`
// (token runs), or not at all.
enum class OutcomeGroup { Summary, Tokens, None };

struct SummaryField {
  const char* name;  // the member's name = the golden "outputs" name
  // Exactly one of these three is set.
  Member<PerformanceSummary> scalar;
  PercentileLatency PerformanceSummary::*percentile;   // one percentile
  PercentileLatency (PerformanceSummary::*percentiles)[6];  // the six reported ones
  bool with_query;  // percentiles: golden objects carry query_latency too
  GoldenOutput golden;
  OutcomeGroup outcome;
  const char* outcome_name;        // camelCase; for percentiles, of the sample latencies
  const char* outcome_query_name;  // percentiles: of the query latencies, or nullptr
};

namespace summary_table {

constexpr SummaryField scalar(const char* name, Member<PerformanceSummary> m, GoldenOutput golden,
                              OutcomeGroup outcome, const char* outcome_name) {
  return {name, m, nullptr, nullptr, false, golden, outcome, outcome_name, nullptr};
}
constexpr SummaryField percentile(const char* name, PercentileLatency PerformanceSummary::*p, bool with_query,
                                  GoldenOutput golden, OutcomeGroup outcome, const char* outcome_name,
                                  const char* outcome_query_name) {
  return {name, {}, p, nullptr, with_query, golden, outcome, outcome_name, outcome_query_name};
}
constexpr SummaryField percentiles(const char* name, PercentileLatency (PerformanceSummary::*p)[6], bool with_query,
                                   GoldenOutput golden, OutcomeGroup outcome, const char* outcome_name,
                                   const char* outcome_query_name) {
  return {name, {}, nullptr, p, with_query, golden, outcome, outcome_name, outcome_query_name};
}

using PS = PerformanceSummary;
using G = GoldenOutput;
using O = OutcomeGroup;

// In the golden "outputs" order; the outcome-only fields where they belong.
// The outcome's minQueriesMet is min_queries_met && min_samples_met, and its
// target percentile's fraction is reported beside it (convert.cc).
inline constexpr SummaryField kRows[] = {
    scalar("sample_count", &PS::sample_count, G::Always, O::Summary, "sampleCount"),
    scalar("query_count", &PS::query_count, G::Always, O::Summary, "queryCount"),
    scalar("overlatency_query_count", &PS::overlatency_query_count, G::Always, O::Summary, "overlatencyQueryCount"),
    scalar("sample_latency_min", &PS::sample_latency_min, G::Always, O::Summary, "minLatencyNs"),
    scalar("sample_latency_max", &PS::sample_latency_max, G::Always, O::Summary, "maxLatencyNs"),
    scalar("sample_latency_mean", &PS::sample_latency_mean, G::Always, O::Summary, "meanLatencyNs"),
    scalar("query_latency_min", &PS::query_latency_min, G::Always, O::Summary, "queryMinLatencyNs"),
    scalar("query_latency_max", &PS::query_latency_max, G::Always, O::Summary, "queryMaxLatencyNs"),
    scalar("query_latency_mean", &PS::query_latency_mean, G::Always, O::Summary, "queryMeanLatencyNs"),
    percentile("target_latency_percentile", &PS::target_latency_percentile, true, G::Always, O::Summary,
               "targetPercentileLatencyNs", "targetPercentileQueryLatencyNs"),
    percentiles("latency_percentiles", &PS::latency_percentiles, true, G::Always, O::Summary, "percentilesNs",
                "queryPercentilesNs"),
    scalar("early_stopping_latency_ss", &PS::early_stopping_latency_ss, G::Always, O::Summary, "earlyStoppingLatencySsNs"),
    scalar("early_stopping_latency_ms", &PS::early_stopping_latency_ms, G::Always, O::Summary, "earlyStoppingLatencyMsNs"),
    scalar("min_duration_met", &PS::min_duration_met, G::Always, O::Summary, "minDurationMet"),
    scalar("min_queries_met", &PS::min_queries_met, G::Always, O::None, nullptr),
    scalar("min_samples_met", &PS::min_samples_met, G::Always, O::None, nullptr),
    scalar("perf_constraints_met", &PS::perf_constraints_met, G::Always, O::Summary, "perfConstraintsMet"),
    scalar("early_stopping_met", &PS::early_stopping_met, G::Always, O::Summary, "earlyStoppingMet"),
    scalar("result_valid", &PS::result_valid, G::Always, O::Summary, "resultValid"),
    scalar("early_stopping_recommendation", &PS::early_stopping_recommendation, G::Always, O::Summary, "earlyStoppingMessage"),
    scalar("early_stopping_ttft_recommendation", &PS::early_stopping_ttft_recommendation, G::Always, O::Tokens, "ttftEarlyStoppingMessage"),
    scalar("early_stopping_tpot_recommendation", &PS::early_stopping_tpot_recommendation, G::Always, O::Tokens, "tpotEarlyStoppingMessage"),
    scalar("min_duration_recommendation", &PS::min_duration_recommendation, G::Always, O::Summary, "minDurationRecommendation"),
    scalar("perf_constraints_recommendation", &PS::perf_constraints_recommendation, G::Always, O::Summary, "perfConstraintsRecommendation"),
    scalar("qps_with_loadgen_overhead", &PS::qps_with_loadgen_overhead, G::SingleStream, O::Summary, "qpsWithLoadgenOverhead"),
    scalar("qps_without_loadgen_overhead", &PS::qps_without_loadgen_overhead, G::SingleStream, O::Summary, "qpsWithoutLoadgenOverhead"),
    scalar("scheduled_samples_per_sec", &PS::scheduled_samples_per_sec, G::Server, O::Summary, "scheduledSamplesPerSecond"),
    scalar("completed_samples_per_sec", &PS::completed_samples_per_sec, G::Server, O::Summary, "completedSamplesPerSecond"),
    scalar("samples_per_second", &PS::samples_per_second, G::Offline, O::Summary, "samplesPerSecond"),
    scalar("token_count", &PS::token_count, G::Tokens, O::Tokens, "tokenCount"),
    scalar("overlatency_first_token_count", &PS::overlatency_first_token_count, G::Tokens, O::None, nullptr),
    scalar("first_token_latency_min", &PS::first_token_latency_min, G::Tokens, O::Tokens, "ttftMinNs"),
    scalar("first_token_latency_max", &PS::first_token_latency_max, G::Tokens, O::Tokens, "ttftMaxNs"),
    scalar("first_token_latency_mean", &PS::first_token_latency_mean, G::Tokens, O::Tokens, "ttftMeanNs"),
    scalar("time_per_output_token_min", &PS::time_per_output_token_min, G::Tokens, O::Tokens, "tpotMinNs"),
    scalar("time_per_output_token_max", &PS::time_per_output_token_max, G::Tokens, O::Tokens, "tpotMaxNs"),
    scalar("time_per_output_token_mean", &PS::time_per_output_token_mean, G::Tokens, O::Tokens, "tpotMeanNs"),
    percentile("token_target_latency_percentile", &PS::token_target_latency_percentile, false, G::Tokens, O::Tokens,
               "ttftTargetPercentileNs", nullptr),
    percentile("target_tpot_percentile", &PS::target_tpot_percentile, false, G::Tokens, O::Tokens,
               "tpotTargetPercentileNs", nullptr),
    percentiles("token_latency_percentiles", &PS::token_latency_percentiles, false, G::Tokens, O::Tokens,
                "ttftPercentilesNs", nullptr),
    percentiles("tpot_percentiles", &PS::tpot_percentiles, false, G::Tokens, O::Tokens, "tpotPercentilesNs", nullptr),
    scalar("tokens_per_second", &PS::tokens_per_second, G::Never, O::Tokens, "tokensPerSecond"),
    scalar("completed_tokens_per_second", &PS::completed_tokens_per_second, G::Never, O::Tokens, "completedTokensPerSecond"),
    scalar("tps_with_loadgen_overhead", &PS::tps_with_loadgen_overhead, G::Never, O::Tokens, "tpsWithLoadgenOverhead"),
    scalar("tps_without_loadgen_overhead", &PS::tps_without_loadgen_overhead, G::Never, O::Tokens, "tpsWithoutLoadgenOverhead"),
    scalar("inferred_tokens_per_second", &PS::inferred_tokens_per_second, G::Never, O::Tokens, "inferredTokensPerSecond"),
    scalar("inferred_completed_tokens_per_second", &PS::inferred_completed_tokens_per_second, G::Never, O::Tokens,
           "inferredCompletedTokensPerSecond"),
    scalar("goodput_samples", &PS::goodput_samples, G::Never, O::Tokens, "goodputSamples"),
    scalar("goodput_issued_samples", &PS::goodput_issued_samples, G::Never, O::Tokens, "goodputIssuedSamples"),
};

}  // namespace summary_table

inline constexpr const auto& kSummaryFields = summary_table::kRows;

// Whether the golden "outputs" of a summary carry a field.
inline bool in_golden_outputs(const SummaryField& f, const PerformanceSummary& s) {
  switch (f.golden) {
    case GoldenOutput::Always: return true;
    case GoldenOutput::SingleStream: return s.settings.scenario == Scenario::SingleStream;
    case GoldenOutput::Server: return s.settings.scenario == Scenario::Server;
    case GoldenOutput::Offline: return s.settings.scenario == Scenario::Offline;
    case GoldenOutput::Tokens: return s.settings.use_token_latencies;
    case GoldenOutput::Never: return false;
  }
  return false;
}

}  // namespace loadgen

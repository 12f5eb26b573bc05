// The pre-generated query trace of one issuing series: loadable sample sets
// and the query list, drawn exactly in the reference's order (spec/20 §2-§7).
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <vector>

#include "rng.h"
#include "settings.h"

namespace loadgen {

// QSL indices are 32-bit: a QSL may report at most 2^32 - 1 samples (checked
// in TypeScript before a run starts). This halves the trace's memory.
using SampleIndex = uint32_t;

struct LoadableSet {
  // Exactly the LoadSamplesToRam argument (MultiStream: padded with copies of
  // its first samples_per_query - 1 elements).
  std::vector<SampleIndex> indices;
  // Set size without the MultiStream padding ("sample_distribution_end", E).
  uint64_t distribution_end = 0;
};

// Thrown by set and query generation once its `stop` flag is set (the run
// was interrupted or aborted): a set of 10^8 samples takes seconds to
// shuffle, and a stopped run writes its logs instead of waiting for it.
class GenerationStopped : public std::exception {
 public:
  const char* what() const noexcept override { return "sample set or query generation stopped"; }
};

// The most samples one set generation shuffles, min(count, qsl_total) below
// (run setting limit loaded_sample_count, checked before a run starts).
uint64_t max_loaded_samples();

// GenerateLoadableSets: shuffle of 0..min(count, qsl_total)-1 with a fresh
// mt19937(qsl_rng_seed), cut into sets of the effective performance sample
// count. `count` is the effective performance sample count (performance runs)
// or the effective accuracy sample count (accuracy runs). More than
// max_loaded_samples() is std::invalid_argument. `stop` (may be null) is read
// at bounded intervals; once set, GenerationStopped is thrown.
std::vector<LoadableSet> generate_loadable_sets(const EffectiveSettings& s, uint64_t count,
                                                uint64_t qsl_total_count,
                                                const std::atomic<bool>* stop = nullptr);

enum class SeriesKind { Accuracy, Performance };

// Test-wide state shared by every series of one StartTest: query and sample
// sequence ids, and the accuracy-log per-sample stream (default-seeded, never
// reseeded; spec/20 §6, §7.1).
struct SequenceState {
  uint64_t next_query_id = 0;
  uint64_t next_sample_id = 0;
  Mt19937 accuracy_log_rng{Mt19937::kDefaultSeed};
};

struct QueryTrace {
  uint64_t first_query_id = 0;
  uint64_t first_sample_id = 0;
  // Every query of a series has the same number of samples (the final,
  // possibly padded, samples_per_query): query q owns samples
  // [q * samples_per_query, (q + 1) * samples_per_query).
  uint64_t samples_per_query = 0;
  std::vector<int64_t> scheduled_delta_ns;  // per query, from the start of issuing
  std::vector<SampleIndex> sample_index;    // per sample: QSL index, query order
  // Per sample: the accuracy-log value v drawn at creation (uniform [0,1)).
  // Kept only when GenerateOptions::keep_accuracy_log_values is set.
  std::vector<double> accuracy_log_value;
  // Per sample: 1 if the reference would copy this sample's response into the
  // accuracy log in performance mode (spec/20 §7.4 with this series' offset
  // and probability), else 0. Accuracy series: all 1.
  std::vector<uint8_t> accuracy_log_sampled;
  // Detail-log values generated_query_count / _samples_per_query / _query_duration.
  int64_t generated_query_duration_ns = 0;

  uint64_t query_count() const { return scheduled_delta_ns.size(); }
  uint64_t sample_count() const { return sample_index.size(); }
};

struct GenerateOptions {
  bool keep_accuracy_log_values = false;
  // Read at bounded intervals (every ~10^6 generated samples and inside
  // large shuffles); once set, generate_queries throws GenerationStopped.
  const std::atomic<bool>* stop = nullptr;
};

// GenerateQueries for one series from `set` (spec/20 §3). Advances `seq`
// (ids and the accuracy-log stream) by the generated queries/samples.
QueryTrace generate_queries(const EffectiveSettings& s, SeriesKind kind, const LoadableSet& set,
                            SequenceState& seq, const GenerateOptions& options = {});

// The per-series accuracy-log offset: first uniform [0,1) value of a fresh
// mt19937(accuracy_log_rng_seed) (spec/20 §7.2).
double accuracy_log_offset(const EffectiveSettings& s);

// The performance-mode sampling probability after accuracy_log_sampling_target
// (spec/20 §7.3).
double accuracy_log_probability(const EffectiveSettings& s);

// The decision of spec/20 §7.4 for one sample in a performance series.
inline bool accuracy_log_decision(double value, double offset, double probability) {
  const double w = (value + offset < 1.0) ? value + offset : value + offset - 1.0;
  return w <= probability;
}

}  // namespace loadgen

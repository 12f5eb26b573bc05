// Loadable sets and query generation in the reference's exact draw order
// (spec/20 §2-§7).
#include "trace.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "settings_fields.h"

namespace loadgen {

namespace {

// Positions into a loaded set; a set holds at most 2^32 - 1 samples plus the
// MultiStream padding, which is checked before positions are built.
using Position = uint32_t;

// Positions 0, stride, 2*stride, ... < end.
std::vector<Position> strided_positions(uint64_t end, uint64_t stride) {
  std::vector<Position> v;
  v.reserve(static_cast<size_t>((end + stride - 1) / stride));
  for (uint64_t p = 0; p < end; p += stride) v.push_back(static_cast<Position>(p));
  return v;
}

// double -> uint64 truncation, saturating where C++ leaves it undefined.
uint64_t truncate_to_uint64(double x) {
  if (!(x > 0.0)) return 0;
  if (x >= 18446744073709551616.0) return UINT64_MAX;
  return static_cast<uint64_t>(x);
}

// Generation is refused above this many samples per series (64 GiB of trace
// state): only nonsensical settings get here, and the reference would
// exhaust memory or loop forever instead.
constexpr uint64_t kMaxGeneratedSamples = uint64_t{1} << 32;

// Generated samples between two reads of the stop flag (tens of ms at most).
constexpr uint64_t kStopCheckSamples = uint64_t{1} << 20;

bool stop_requested(const std::atomic<bool>* stop) {
  return stop != nullptr && stop->load(std::memory_order_relaxed);
}

template <typename T>
void shuffle_unless_stopped(T* first, size_t n, Mt19937& g, const std::atomic<bool>* stop) {
  if (!shuffle(first, n, g, stop)) throw GenerationStopped();
}

}  // namespace

uint64_t max_loaded_samples() { return static_cast<uint64_t>(find_run_setting_limit("loaded_sample_count")->max); }

std::vector<LoadableSet> generate_loadable_sets(const EffectiveSettings& s, uint64_t count, uint64_t qsl_total_count,
                                                const std::atomic<bool>* stop) {
  const uint64_t n = std::min(count, qsl_total_count);
  if (n > max_loaded_samples()) {
    throw std::invalid_argument("loadable sets: at most " + std::to_string(max_loaded_samples()) +
                                " samples are supported, got " + std::to_string(n));
  }
  uint64_t padding = 0;
  if (s.scenario == Scenario::MultiStream) {
    if (s.samples_per_query == 0) {
      throw std::invalid_argument("loadable sets: MultiStream samples_per_query must be > 0");
    }
    padding = s.samples_per_query - 1;
  }
  if (stop_requested(stop)) throw GenerationStopped();

  std::vector<SampleIndex> all(static_cast<size_t>(n));
  for (uint64_t i = 0; i < n; ++i) all[i] = static_cast<SampleIndex>(i);
  Mt19937 qsl_rng(s.qsl_rng_seed);
  shuffle_unless_stopped(all.data(), all.size(), qsl_rng, stop);

  // The set size is the effective performance count, uncapped; 0 never closes
  // a set, so everything lands in one.
  const uint64_t set_size = s.performance_sample_count;
  std::vector<LoadableSet> sets;
  if (n == 0) return sets;
  if (set_size == 0 || set_size >= n) {
    LoadableSet only;
    only.distribution_end = n;
    only.indices = std::move(all);
    sets.push_back(std::move(only));
  } else {
    sets.reserve(static_cast<size_t>((n + set_size - 1) / set_size));
    for (uint64_t begin = 0; begin < n; begin += set_size) {
      const uint64_t end = std::min(n, begin + set_size);
      LoadableSet set;
      set.distribution_end = end - begin;
      set.indices.reserve(static_cast<size_t>(set.distribution_end + padding));
      set.indices.assign(all.begin() + static_cast<ptrdiff_t>(begin), all.begin() + static_cast<ptrdiff_t>(end));
      sets.push_back(std::move(set));
    }
  }

  // MultiStream: append copies of the first spq - 1 elements, reading the
  // growing vector (so a short set repeats cyclically).
  for (LoadableSet& set : sets) {
    if (padding == 0) continue;
    if (set.indices.size() + padding > uint64_t{std::numeric_limits<Position>::max()} + 1) {
      throw std::invalid_argument("loadable sets: padded MultiStream set too large");
    }
    set.indices.reserve(static_cast<size_t>(set.indices.size() + padding));
    for (uint64_t i = 0; i < padding; ++i) set.indices.push_back(set.indices[static_cast<size_t>(i)]);
  }
  return sets;
}

double accuracy_log_offset(const EffectiveSettings& s) {
  Mt19937 rng(s.accuracy_log_rng_seed);
  return uniform_real01(rng);
}

double accuracy_log_probability(const EffectiveSettings& s) {
  double probability = s.accuracy_log_probability;
  if (s.accuracy_log_sampling_target > 0) {
    uint64_t expected = truncate_to_uint64((s.target_qps * static_cast<double>(s.min_duration_ms)) / 1000.0);
    uint64_t minimum = s.min_query_count * s.samples_per_query;
    if (s.scenario != Scenario::Offline) {
      expected *= s.samples_per_query;
    } else {
      minimum = s.min_sample_count;
    }
    expected = std::max(expected, minimum);
    probability = static_cast<double>(s.accuracy_log_sampling_target) / static_cast<double>(expected);
  }
  return probability;
}

QueryTrace generate_queries(const EffectiveSettings& s, SeriesKind kind, const LoadableSet& set,
                            SequenceState& seq, const GenerateOptions& options) {
  const bool accuracy = kind == SeriesKind::Accuracy;
  const Scenario scenario = s.scenario;
  const std::vector<SampleIndex>& loaded = set.indices;
  const uint64_t loaded_size = loaded.size();  // |L|, with MultiStream padding
  const uint64_t end = set.distribution_end;   // E, without padding

  // The reference loops forever, divides by zero or reads out of range on an
  // empty set (spec/60 §2).
  if (loaded_size == 0) throw std::invalid_argument("generate_queries: the loaded sample set is empty");
  if (end == 0 || end > loaded_size) {
    throw std::invalid_argument("generate_queries: invalid sample_distribution_end");
  }
  if (loaded_size > uint64_t{std::numeric_limits<Position>::max()} + 1) {
    throw std::invalid_argument("generate_queries: loaded set too large");
  }

  // §3.1 parameters.
  uint64_t samples_per_query = s.samples_per_query;
  if (accuracy && scenario == Scenario::Offline) samples_per_query = end;
  if (s.target_duration_ms > static_cast<uint64_t>(INT64_MAX / 2000000)) {
    throw std::invalid_argument("generate_queries: target duration too large");
  }
  int64_t gen_ns = (scenario == Scenario::Server ? 1 : 2) * static_cast<int64_t>(s.target_duration_ms) * 1000000;
  uint64_t min_queries = s.min_query_count;
  if (accuracy || s.performance_issue_unique) {
    if (samples_per_query == 0) throw std::invalid_argument("generate_queries: samples_per_query is 0");
    gen_ns = 0;
    min_queries = loaded_size / samples_per_query;
  }
  if (scenario == Scenario::MultiStream && samples_per_query == 0) {
    throw std::invalid_argument("generate_queries: MultiStream samples_per_query is 0");
  }
  const uint64_t stride = scenario == Scenario::MultiStream ? samples_per_query : 1;
  const bool concat = s.sample_concatenate_permutation;
  // Refuse absurd sizes before the (min_queries-proportional) pre-draws.
  if (min_queries > kMaxGeneratedSamples / std::max<uint64_t>(samples_per_query, 1)) {
    throw std::invalid_argument("generate_queries: too many samples would be generated");
  }

  Mt19937 sample_rng(s.sample_index_rng_seed);
  Mt19937 schedule_rng(s.schedule_rng_seed);
  const std::atomic<bool>* stop = options.stop;
  if (stop_requested(stop)) throw GenerationStopped();

  // Which lists the main loop reads, and whether it draws from sample_rng
  // after them (§3.4).
  const bool stream_like = scenario == Scenario::SingleStream || scenario == Scenario::Server;
  const bool selects = !s.performance_issue_unique && !s.performance_issue_same &&
                       (scenario == Scenario::MultiStream || (stream_like && !concat));
  const bool uses_accuracy_list = accuracy && selects;
  // Performance-mode selector: uniform_int_distribution<int>(0, int(E - 1)).
  const bool draws_positions = !accuracy && selects;
  const bool uses_unique_list = s.performance_issue_unique && scenario != Scenario::Offline;
  const bool uses_equal_issue_list =
      stream_like && concat && !s.performance_issue_unique && !s.performance_issue_same;
  const bool draws_after_lists =
      draws_positions || (scenario == Scenario::Offline && concat && !s.performance_issue_same);
  // §3.2 pre-draws, in the reference's order (accuracy list, unique list,
  // equal-issue shuffles): each advances sample_rng, so one is made when its
  // list is read or anything after it draws; the others would only cost
  // time and memory (two shuffles of the whole set).
  const bool shuffles_equal_issue = uses_equal_issue_list || draws_after_lists;
  const bool shuffles_unique = uses_unique_list || shuffles_equal_issue;
  const bool shuffles_accuracy = accuracy && (uses_accuracy_list || shuffles_unique);

  std::vector<Position> accuracy_positions;
  if (shuffles_accuracy) {
    accuracy_positions = strided_positions(end, stride);
    shuffle_unless_stopped(accuracy_positions.data(), accuracy_positions.size(), sample_rng, stop);
    if (!uses_accuracy_list) std::vector<Position>().swap(accuracy_positions);
  }
  std::vector<Position> unique_positions;
  if (shuffles_unique) {
    unique_positions = strided_positions(end, stride);
    shuffle_unless_stopped(unique_positions.data(), unique_positions.size(), sample_rng, stop);
    if (!uses_unique_list) std::vector<Position>().swap(unique_positions);
  }
  std::vector<Position> equal_issue_list;
  if (shuffles_equal_issue && min_queries > 0) {
    std::vector<Position> permutation(static_cast<size_t>(loaded_size));
    for (uint64_t i = 0; i < loaded_size; ++i) permutation[i] = static_cast<Position>(i);
    if (uses_equal_issue_list) {
      const uint64_t rounds = min_queries / loaded_size + (min_queries % loaded_size != 0 ? 1 : 0);
      equal_issue_list.reserve(static_cast<size_t>(rounds * loaded_size));
    }
    for (uint64_t j = 0; j < min_queries; j += loaded_size) {
      // Cumulative, never reset.
      shuffle_unless_stopped(permutation.data(), permutation.size(), sample_rng, stop);
      if (uses_equal_issue_list) {
        equal_issue_list.insert(equal_issue_list.end(), permutation.begin(), permutation.end());
      }
    }
  }

  // §3.3 equal-issue padding (performance series only).
  if (!accuracy && concat) {
    if (scenario == Scenario::Offline) {
      if (samples_per_query % loaded_size != 0) samples_per_query += loaded_size - samples_per_query % loaded_size;
    } else {
      if (min_queries % loaded_size != 0) min_queries += loaded_size - min_queries % loaded_size;
    }
  }

  // Checks that the loop below would otherwise turn into out-of-range reads,
  // division by zero or an endless loop.
  if (uses_equal_issue_list && equal_issue_list.empty() && (min_queries > 0 || gen_ns > 0)) {
    throw std::invalid_argument(
        "generate_queries: equal-issue list is empty (min_query_count 0 with sample_concatenate_permutation)");
  }
  // Offline never consults performance_issue_unique inside the loop.
  const bool uses_same_index =
      s.performance_issue_same && (scenario == Scenario::Offline || !s.performance_issue_unique);
  if (uses_same_index) {
    const uint64_t span = scenario == Scenario::MultiStream ? samples_per_query : 1;
    if (s.performance_issue_same_index >= loaded_size || s.performance_issue_same_index + span > loaded_size) {
      throw std::invalid_argument("generate_queries: performance_issue_same_index " +
                                  std::to_string(s.performance_issue_same_index) +
                                  " is outside the loaded set of " + std::to_string(loaded_size));
    }
  }
  if (draws_positions && end - 1 > static_cast<uint64_t>(INT_MAX)) {
    throw std::invalid_argument("generate_queries: sample set too large for the int selector");
  }
  const uint64_t draw_max = draws_positions ? end - 1 : 0;  // fits in int (checked above)

  const int64_t period_ns = seconds_to_ns(1.0 / s.target_qps);
  if (scenario == Scenario::Server) {
    if (!(s.target_qps > 0.0)) throw std::invalid_argument("generate_queries: Server target_qps must be > 0");
    if (gen_ns > 0 && std::isinf(s.target_qps)) {
      throw std::invalid_argument("generate_queries: Server target_qps is infinite");
    }
  } else if (gen_ns > 0 && period_ns <= 0) {
    throw std::invalid_argument("generate_queries: query period truncates to " + std::to_string(period_ns) +
                                " ns with a non-zero duration (expected latency too small)");
  }

  // Reserve for the expected count; Server's Poisson count gets a 6-sigma margin.
  uint64_t expected_queries = min_queries;
  if (gen_ns > 0) {
    double by_duration = 0;
    if (scenario == Scenario::Server) {
      const double mean = static_cast<double>(gen_ns) * s.target_qps / 1e9;
      by_duration = mean + 6.0 * std::sqrt(mean) + 16.0;
    } else {
      by_duration = static_cast<double>(gen_ns) / static_cast<double>(period_ns) + 2.0;
    }
    expected_queries = std::max(expected_queries, truncate_to_uint64(by_duration));
  }
  if (scenario == Scenario::Offline) expected_queries = 1;
  expected_queries = std::max<uint64_t>(expected_queries, 1);
  const uint64_t max_queries = samples_per_query == 0 ? kMaxGeneratedSamples : kMaxGeneratedSamples / samples_per_query;
  if (expected_queries > max_queries) {
    throw std::invalid_argument("generate_queries: too many samples would be generated");
  }

  // Work on a copy so a refused series leaves the test's sequence untouched.
  SequenceState next_seq = seq;
  QueryTrace trace;
  trace.first_query_id = next_seq.next_query_id;
  trace.first_sample_id = next_seq.next_sample_id;
  trace.samples_per_query = samples_per_query;
  trace.scheduled_delta_ns.reserve(static_cast<size_t>(expected_queries));
  trace.sample_index.reserve(static_cast<size_t>(expected_queries * samples_per_query));
  trace.accuracy_log_sampled.reserve(static_cast<size_t>(expected_queries * samples_per_query));
  if (options.keep_accuracy_log_values) {
    trace.accuracy_log_value.reserve(static_cast<size_t>(expected_queries * samples_per_query));
  }

  const double log_offset = accuracy_log_offset(s);
  const double log_probability = accuracy_log_probability(s);

  size_t accuracy_cursor = 0;
  size_t unique_cursor = 0;
  uint64_t equal_issue_cursor = 0;
  auto next_unique = [&]() -> Position {
    if (unique_cursor >= unique_positions.size()) {
      throw std::invalid_argument("generate_queries: performance_issue_unique ran past the loaded set");
    }
    return unique_positions[unique_cursor++];
  };
  auto next_selected = [&]() -> uint64_t {
    if (accuracy) {
      if (accuracy_cursor >= accuracy_positions.size()) {
        throw std::invalid_argument("generate_queries: accuracy selection ran past the loaded set");
      }
      return accuracy_positions[accuracy_cursor++];
    }
    return uniform_int(sample_rng, 0, draw_max);
  };

  int64_t timestamp = 0;
  int64_t prev_timestamp = 0;
  uint64_t query_count = 0;
  uint64_t next_stop_check = kStopCheckSamples;  // sample count at which the stop flag is read next
  while (prev_timestamp < gen_ns || query_count < min_queries) {
    if (query_count >= max_queries) {
      throw std::invalid_argument("generate_queries: too many samples would be generated");
    }
    const size_t first_sample = trace.sample_index.size();
    if (scenario == Scenario::MultiStream) {
      const uint64_t start = s.performance_issue_unique ? next_unique()
                             : s.performance_issue_same ? s.performance_issue_same_index
                                                        : next_selected();
      for (uint64_t k = 0; k < samples_per_query; ++k) trace.sample_index.push_back(loaded[start + k]);
    } else if (scenario == Scenario::Offline) {
      if (s.performance_issue_same) {
        trace.sample_index.insert(trace.sample_index.end(), static_cast<size_t>(samples_per_query),
                                  loaded[s.performance_issue_same_index]);
      } else {
        const uint64_t full_blocks = samples_per_query / loaded_size;
        const uint64_t remainder = samples_per_query % loaded_size;
        for (uint64_t b = 0; b < full_blocks; ++b) {
          const size_t block_start = trace.sample_index.size();
          trace.sample_index.insert(trace.sample_index.end(), loaded.begin(), loaded.end());
          // Each copy of the loaded set is shuffled in place (QSL indices, not positions).
          if (concat) shuffle_unless_stopped(trace.sample_index.data() + block_start, loaded.size(), sample_rng, stop);
        }
        trace.sample_index.insert(trace.sample_index.end(), loaded.begin(),
                                  loaded.begin() + static_cast<ptrdiff_t>(remainder));
      }
    } else {
      for (uint64_t k = 0; k < samples_per_query; ++k) {
        const uint64_t position =
            s.performance_issue_unique ? next_unique()
            : s.performance_issue_same ? s.performance_issue_same_index
            : concat ? equal_issue_list[static_cast<size_t>((equal_issue_cursor++) % equal_issue_list.size())]
                     : next_selected();
        trace.sample_index.push_back(loaded[position]);
      }
    }

    // Query creation: ids and one accuracy-log value per sample, in order.
    const size_t sample_end = trace.sample_index.size();
    for (size_t i = first_sample; i < sample_end; ++i) {
      // An Offline query may hold the whole set: read the flag inside it too.
      if (i >= next_stop_check) {
        if (stop_requested(stop)) throw GenerationStopped();
        next_stop_check += kStopCheckSamples;
      }
      const double value = uniform_real01(next_seq.accuracy_log_rng);
      if (options.keep_accuracy_log_values) trace.accuracy_log_value.push_back(value);
      trace.accuracy_log_sampled.push_back(
          accuracy ? 1 : static_cast<uint8_t>(accuracy_log_decision(value, log_offset, log_probability)));
    }
    next_seq.next_sample_id += sample_end - first_sample;
    next_seq.next_query_id += 1;
    trace.scheduled_delta_ns.push_back(timestamp);
    ++query_count;

    prev_timestamp = timestamp;
    timestamp += scenario == Scenario::Server ? seconds_to_ns(exponential(schedule_rng, s.target_qps)) : period_ns;
    if (concat && query_count >= min_queries && prev_timestamp < gen_ns && scenario != Scenario::Offline) {
      min_queries += loaded_size;
    }
  }

  if (query_count == 0) {
    // The reference reads query -1 here (spec/60 §2).
    throw std::invalid_argument("generate_queries: no queries would be generated (min_query_count and duration are 0)");
  }
  trace.generated_query_duration_ns = timestamp;
  seq = next_seq;
  return trace;
}

}  // namespace loadgen

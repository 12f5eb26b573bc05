#include "bindings/progress.h"

#include "bindings/process_state.h"
#include "native/session.h"

namespace loadgen_addon {
namespace {

const char* kind_name(const loadgen::LiveSnapshot& p) {
  return p.kind == loadgen::SeriesKind::Accuracy ? "accuracy" : "performance";
}

const char* phase_name(int phase) {
  switch (phase) {
    case 1:
      return "issuing";
    case 2:
      return "draining";
    default:
      return "starting";
  }
}

// null when no run is active (or its first series has not started).
Napi::Value Progress(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  // Holds the run's session (any environment's) for the duration of the read.
  SharedSession shared;
  if (shared.get() == nullptr) return env.Null();
  const loadgen::LiveSnapshot p = shared.get()->progress();
  if (!p.has_series) return env.Null();
  Napi::Object o = Napi::Object::New(env);
  o.Set("phase", phase_name(p.phase));
  o.Set("seriesKind", kind_name(p));
  o.Set("scenario", loadgen::to_string(p.scenario));
  o.Set("seriesIndex", static_cast<double>(p.series_index));
  o.Set("seriesCount", static_cast<double>(p.series_started));
  o.Set("elapsedNs", static_cast<double>(p.elapsed_ns));
  o.Set("targetDurationNs", static_cast<double>(p.target_duration_ns));
  o.Set("generatedQueries", static_cast<double>(p.generated_queries));
  o.Set("samplesPerQuery", static_cast<double>(p.samples_per_query));
  o.Set("issuedQueries", static_cast<double>(p.issued_queries));
  o.Set("issuedSamples", static_cast<double>(p.issued_samples));
  o.Set("completedSamples", static_cast<double>(p.completed_samples));
  o.Set("outstanding", static_cast<double>(p.outstanding_samples));
  o.Set("latencyCount", static_cast<double>(p.latency_count));
  o.Set("p50Ns", static_cast<double>(p.p50_ns));
  o.Set("p99Ns", static_cast<double>(p.p99_ns));
  o.Set("maxNs", static_cast<double>(p.max_ns));
  return o;
}

}  // namespace

void register_progress(Napi::Env env, Napi::Object exports) {
  exports.Set("progress", Napi::Function::New(env, Progress, "progress"));
}

}  // namespace loadgen_addon

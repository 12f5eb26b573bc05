// _internals.rules (see rules_binding.h): the Server early-stopping verdict
// of the core (native/results.h server_early_stopping) for given counts, so
// `loadgen stats` reports exactly what a run would, without latencies.
#include "bindings/rules_binding.h"

#include <cstdint>
#include <string>

#include "bindings/conformance_io.h"
#include "native/early_stopping.h"
#include "native/results.h"

namespace loadgen_addon {
namespace {

using namespace conformance_io;  // NOLINT(build/namespaces): the shared argument readers

// earlyStoppingServer(p, n, t): n queries issued, t of them over the bound.
Napi::Value EarlyStoppingServer(const Napi::CallbackInfo& info) {
  const char* fn = "earlyStoppingServer";
  const double p = read_percentile(info, 0, fn, "p");
  const uint64_t n = read_count(info, 1, fn, "n", 0, kMaxEarlyStoppingCount);
  const uint64_t t = read_count(info, 2, fn, "t", 0, kMaxEarlyStoppingCount);
  if (t > n) range_error(info.Env(), fn, "t (over-latency queries) must not exceed n (queries issued)");
  return guarded(info, fn, [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    loadgen::MinPassingFinder finder;  // fresh, as one Server evaluation
    std::string recommendation;
    const bool met = loadgen::server_early_stopping(finder, static_cast<int64_t>(n), static_cast<int64_t>(t), p,
                                                    &recommendation);
    const int64_t h = finder.min_passing(static_cast<int64_t>(t), p);  // cached: the value the verdict used
    Napi::Object o = Napi::Object::New(env);
    o.Set("earlyStoppingMet", met);
    o.Set("minPassing", i64(env, h));
    o.Set("minTotalQueries", i64(env, h + static_cast<int64_t>(t)));
    o.Set("recommendation", recommendation);
    return o;
  });
}

}  // namespace

void register_rules(Napi::Env env, Napi::Object internals) {
  Napi::Object r = Napi::Object::New(env);
  r.Set("earlyStoppingServer", Napi::Function::New(env, EarlyStoppingServer, "earlyStoppingServer"));
  internals.Set("rules", r);
}

}  // namespace loadgen_addon

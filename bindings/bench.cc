#include "bindings/bench.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "bindings/env_teardown.h"
#include "native/clock.h"
#include "native/cpu_noise.h"
#include "native/settings_fields.h"
#include "native/wait.h"

namespace loadgen_addon {
namespace {

// Mean cost of one now_ns() in a tight native loop.
Napi::Value ClockReadNs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  double iterations = 1e6;
  if (info.Length() >= 1 && info[0].IsNumber()) iterations = info[0].As<Napi::Number>().DoubleValue();
  if (!(iterations >= 1 && iterations <= 1e9)) throw Napi::RangeError::New(env, "iterations must be in [1, 1e9]");
  const auto n = static_cast<uint64_t>(iterations);
  int64_t sink = 0;
  const int64_t start = loadgen::now_ns();
  for (uint64_t i = 0; i < n; ++i) sink += loadgen::now_ns() & 1;
  const int64_t end = loadgen::now_ns();
  if (sink == -1) return env.Null();  // keeps the loop from being optimised away
  return Napi::Number::New(env, static_cast<double>(end - start) / static_cast<double>(n));
}

// A native thread wakes the JS thread `count` times through one threadsafe
// function, `interval_us` apart, waiting for each wake to be handled; the
// promise resolves with each wake's latency in ns (posted -> JS callback).
struct WakeProbe {
  Napi::ThreadSafeFunction tsfn;
  Napi::Promise::Deferred deferred;
  std::vector<double> lags;
  std::thread thread;
  std::atomic<bool> handled{false};
  uint64_t count = 0;
  int64_t interval_ns = 0;
  explicit WakeProbe(Napi::Env env) : deferred(Napi::Promise::Deferred::New(env)) {}
};

Napi::Value TsfnWake(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsNumber())
    throw Napi::TypeError::New(env, "tsfnWake(count, intervalUs) expects two numbers");
  const double count = info[0].As<Napi::Number>().DoubleValue();
  const double interval_us = info[1].As<Napi::Number>().DoubleValue();
  if (!(count >= 1 && count <= 1e6)) throw Napi::RangeError::New(env, "count must be in [1, 1e6]");
  if (!(interval_us >= 0 && interval_us <= 1e6)) throw Napi::RangeError::New(env, "intervalUs must be in [0, 1e6]");

  auto* probe = new WakeProbe(env);
  probe->count = static_cast<uint64_t>(count);
  probe->interval_ns = static_cast<int64_t>(interval_us * 1000);
  probe->lags.reserve(probe->count);
  Napi::Function noop = Napi::Function::New(env, [](const Napi::CallbackInfo&) {});
  probe->tsfn = Napi::ThreadSafeFunction::New(env, noop, "loadgen-bench", 0, 1, [probe](Napi::Env env) {
    probe->thread.join();
    run_in_env(
        env,
        [&] {
          auto lags = Napi::Float64Array::New(env, probe->lags.size());
          std::copy(probe->lags.begin(), probe->lags.end(), lags.Data());
          probe->deferred.Resolve(lags);
        },
        [&](const std::string& message) { probe->deferred.Reject(Napi::Error::New(env, message).Value()); });
    delete probe;
  });
  Napi::Promise promise = probe->deferred.Promise();
  probe->thread = std::thread([probe] {
    loadgen::prepare_issue_thread(-1);
    for (uint64_t i = 0; i < probe->count; ++i) {
      loadgen::wait_until_ns(loadgen::now_ns() + probe->interval_ns, 120000);
      probe->handled.store(false, std::memory_order_release);
      auto* posted = new int64_t(loadgen::now_ns());
      const napi_status status = probe->tsfn.NonBlockingCall(posted, [probe](Napi::Env, Napi::Function, int64_t* t0) {
        probe->lags.push_back(static_cast<double>(loadgen::now_ns() - *t0));
        delete t0;
        probe->handled.store(true, std::memory_order_release);
      });
      if (status != napi_ok) {
        delete posted;
        break;
      }
      // One wake in flight at a time, as a run's coalesced wakes are; give up
      // if the JS thread stops answering (environment shutting down).
      const int64_t give_up = loadgen::now_ns() + 5000000000LL;
      while (!probe->handled.load(std::memory_order_acquire)) {
        if (loadgen::now_ns() > give_up) break;
        std::this_thread::yield();
      }
      if (!probe->handled.load(std::memory_order_acquire)) break;
    }
    probe->tsfn.Release();
  });
  return promise;
}

// cpuNoise(cpu, durationMs): a native thread (pinned to `cpu` when >= 0)
// spins for durationMs; how often and how long it lost the CPU, and the
// delay an event due at a random instant would see there (cpu_noise.h).
Napi::Value CpuNoise(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsNumber())
    throw Napi::TypeError::New(env, "cpuNoise(cpu, durationMs) expects two numbers");
  const double cpu = info[0].As<Napi::Number>().DoubleValue();
  const double duration_ms = info[1].As<Napi::Number>().DoubleValue();
  const loadgen::RunSettingLimit& cpus = *loadgen::find_run_setting_limit("issue_thread_cpu");
  if (!(cpu >= static_cast<double>(cpus.min) && cpu <= static_cast<double>(cpus.max) && cpu == static_cast<int>(cpu)))
    throw Napi::RangeError::New(env, "cpu must be an integer in [" + std::to_string(cpus.min) + ", " +
                                         std::to_string(cpus.max) + "] (-1: unpinned)");
  if (!(duration_ms >= 1 && duration_ms <= 60000)) throw Napi::RangeError::New(env, "durationMs must be in [1, 60000]");
  const loadgen::CpuNoise n =
      loadgen::measure_cpu_noise(static_cast<int>(cpu), static_cast<int64_t>(duration_ms * 1e6));
  const auto num = [&](double v) { return Napi::Number::New(env, v); };
  const double seconds = static_cast<double>(n.duration_ns) / 1e9;
  Napi::Object out = Napi::Object::New(env);
  out.Set("cpu", num(n.cpu));
  out.Set("pinned", Napi::Boolean::New(env, n.pinned));
  if (!n.warning.empty()) out.Set("warning", Napi::String::New(env, n.warning));
  out.Set("durationNs", num(static_cast<double>(n.duration_ns)));
  out.Set("gapsPerSecond", num(seconds > 0 ? static_cast<double>(n.gaps) / seconds : 0));
  out.Set("lostFraction",
          num(n.duration_ns > 0 ? static_cast<double>(n.lost_ns) / static_cast<double>(n.duration_ns) : 0));
  Napi::Object gap = Napi::Object::New(env);
  gap.Set("p50", num(static_cast<double>(n.gap_p50_ns)));
  gap.Set("p99", num(static_cast<double>(n.gap_p99_ns)));
  gap.Set("max", num(static_cast<double>(n.gap_max_ns)));
  out.Set("gapNs", gap);
  Napi::Object residual = Napi::Object::New(env);
  residual.Set("p50", num(static_cast<double>(n.residual_p50_ns)));
  residual.Set("p99", num(static_cast<double>(n.residual_p99_ns)));
  residual.Set("p999", num(static_cast<double>(n.residual_p999_ns)));
  out.Set("residualNs", residual);
  return out;
}

}  // namespace

void register_bench(Napi::Env env, Napi::Object internals) {
  Napi::Object bench = Napi::Object::New(env);
  bench.Set("clockReadNs", Napi::Function::New(env, ClockReadNs, "clockReadNs"));
  bench.Set("tsfnWake", Napi::Function::New(env, TsfnWake, "tsfnWake"));
  bench.Set("cpuNoise", Napi::Function::New(env, CpuNoise, "cpuNoise"));
  internals.Set("bench", bench);
}

}  // namespace loadgen_addon

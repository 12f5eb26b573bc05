// idleRuntimeThreads() -> Promise<{ idle, note }>: moves the threads that
// existed when the addon was first loaded to SCHED_IDLE (once per process),
// except the main thread, the loading thread and libuv's thread pool. The
// pool runs what JS awaits (fs writes of the request log, dns, crypto, a
// mapping module's async work): starved at idle priority on a busy CPU,
// those would stall or fail. Its threads cannot be told from V8's by name
// (all are "node"), so a probe finds them: as many work items as the pool
// has threads (UV_THREADPOOL_SIZE, as libuv reads it), each noting its
// thread and waiting until all have arrived (at most kProbeWaitMs). When
// the probe does not see the whole pool (a thread busy with other work),
// nothing is moved: `note` says why.
#include "bindings/runtime_threads.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bindings/process_state.h"
#include "native/core_threads.h"
#include "native/platform.h"

#if LOADGEN_PLATFORM_LINUX
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace loadgen_addon {
namespace {

constexpr int kProbeWaitMs = 250;

// libuv's pool size: UV_THREADPOOL_SIZE (0 -> 1, at most 1024), 4 unset.
size_t thread_pool_size() {
  const char* value = std::getenv("UV_THREADPOOL_SIZE");
  if (value == nullptr || *value == '\0') return 4;
  const long n = std::strtol(value, nullptr, 10);
  return n <= 0 ? 1 : n > 1024 ? 1024 : static_cast<size_t>(n);
}

struct PoolProbe {
  explicit PoolProbe(Napi::Env env, size_t expected) : deferred(Napi::Promise::Deferred::New(env)), expected(expected), remaining(expected) {}
  Napi::Promise::Deferred deferred;
  const size_t expected;
  size_t remaining;  // work items not finished (main thread)
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int64_t> tids;  // distinct pool threads seen
};

void settle(Napi::Env env, PoolProbe& probe) {
  Napi::Object out = Napi::Object::New(env);
  int idle = 0;
  std::string note;
  if (probe.tids.size() == probe.expected) {
    idle = ProcessState::instance().idle_runtime_threads(probe.tids);
    if (idle < 0) note = "this OS has no idle scheduling policy";
  } else {
    note = "libuv's thread pool answered with " + std::to_string(probe.tids.size()) + " of its " +
           std::to_string(probe.expected) + " threads (others busy): none moved, so as never to starve the pool";
  }
  out.Set("idle", static_cast<double>(idle));
  out.Set("note", note);
  probe.deferred.Resolve(out);
}

class PoolProbeWork : public Napi::AsyncWorker {
 public:
  PoolProbeWork(Napi::Env env, std::shared_ptr<PoolProbe> probe)
      : Napi::AsyncWorker(env, "loadgen-thread-pool-probe"), probe_(std::move(probe)) {}

  void Execute() override {
#if LOADGEN_PLATFORM_LINUX
    const int64_t tid = static_cast<int64_t>(syscall(SYS_gettid));
#else
    const int64_t tid = 0;
#endif
    std::unique_lock<std::mutex> lock(probe_->mu);
    if (std::find(probe_->tids.begin(), probe_->tids.end(), tid) == probe_->tids.end()) probe_->tids.push_back(tid);
    probe_->cv.notify_all();
    probe_->cv.wait_for(lock, std::chrono::milliseconds(kProbeWaitMs),
                        [this] { return probe_->tids.size() >= probe_->expected; });
  }

  void OnOK() override {
    if (--probe_->remaining == 0) settle(Env(), *probe_);
  }
  void OnError(const Napi::Error&) override { OnOK(); }

 private:
  std::shared_ptr<PoolProbe> probe_;
};

Napi::Value IdleRuntimeThreads(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int done = ProcessState::instance().runtime_threads_idle();
  auto probe = std::make_shared<PoolProbe>(env, thread_pool_size());
  if (done != -2 || !LOADGEN_PLATFORM_LINUX) {
    // Once per process: the first answer stands (or there is nothing to do here).
    Napi::Object out = Napi::Object::New(env);
    out.Set("idle", static_cast<double>(LOADGEN_PLATFORM_LINUX ? done : -1));
    out.Set("note", LOADGEN_PLATFORM_LINUX ? "" : "this OS has no idle scheduling policy");
    probe->deferred.Resolve(out);
    return probe->deferred.Promise();
  }
  for (size_t i = 0; i < probe->expected; ++i) (new PoolProbeWork(env, probe))->Queue();
  return probe->deferred.Promise();
}

// yieldJsThread(nice) -> { nice, sliceNs, note }: the calling JS thread to
// nice `nice` (1..19) and the core's threads to the short slice, once per
// process (native/core_threads.h).
Napi::Value YieldJsThread(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) throw Napi::TypeError::New(env, "yieldJsThread(nice): nice must be a number");
  const double nice = info[0].As<Napi::Number>().DoubleValue();
  if (!(nice >= 1 && nice <= 19) || nice != static_cast<double>(static_cast<int>(nice)))
    throw Napi::RangeError::New(env, "yieldJsThread(nice): nice must be an integer from 1 to 19");
  const loadgen::YieldResult r = loadgen::yield_calling_thread(static_cast<int>(nice));
  Napi::Object out = Napi::Object::New(env);
  out.Set("nice", static_cast<double>(r.nice));
  out.Set("sliceNs", static_cast<double>(r.slice_ns));
  out.Set("note", r.note);
  return out;
}

}  // namespace

void register_runtime_threads(Napi::Env env, Napi::Object exports) {
  ProcessState::instance().note_runtime_threads();
  exports.Set("idleRuntimeThreads", Napi::Function::New(env, IdleRuntimeThreads, "idleRuntimeThreads"));
  exports.Set("yieldJsThread", Napi::Function::New(env, YieldJsThread, "yieldJsThread"));
}

}  // namespace loadgen_addon

#include "core_threads.h"

#include "platform.h"
#include "runtime_threads.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>
#include <utility>

#if defined(__linux__) || defined(__APPLE__)
#include <pthread.h>
#endif

#if LOADGEN_PLATFORM_LINUX
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#endif

namespace loadgen {

namespace {
// A plain thread that names itself first.
std::thread named_thread(std::string name, std::function<void()> body) {
  return std::thread([name = std::move(name), body = std::move(body)] {
    name_current_thread(name);
    body();
  });
}
}  // namespace

#if LOADGEN_PLATFORM_LINUX
namespace {

// struct sched_attr of sched_setattr(2) (SCHED_ATTR_SIZE_VER0: 48 bytes);
// for the normal policy, sched_runtime asks for a custom slice (Linux >= 6.12;
// older kernels take the call and keep their own slice).
struct SchedAttr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;
  uint64_t sched_deadline;
  uint64_t sched_period;
};
static_assert(sizeof(SchedAttr) == 48, "sched_attr version 0");

int64_t current_tid() { return static_cast<int64_t>(syscall(SYS_gettid)); }

// The short slice for thread `tid` when it runs under the normal policy,
// keeping its nice value. False when the kernel refused.
bool give_short_slice(int64_t tid) {
  const pid_t id = static_cast<pid_t>(tid);
  if (sched_getscheduler(id) != SCHED_OTHER) return false;
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(id));
  if (errno != 0) return false;
  SchedAttr attr{};
  attr.size = sizeof(attr);
  attr.sched_policy = SCHED_OTHER;
  attr.sched_nice = nice;
  attr.sched_runtime = static_cast<uint64_t>(kCoreThreadSliceNs);
  return syscall(SYS_sched_setattr, id, &attr, 0) == 0;
}

// Starts the core's threads from the priority the process started with.
class ThreadStarter {
 public:
  ThreadStarter() {
    thread_ = std::thread([this] {
      name_current_thread("loadgen-start");
      loop();
    });
    // Never joined: it lives as long as the process (see started_threads()).
    thread_.detach();
  }

  std::thread start(std::string name, std::function<void()> body) {
    std::promise<std::thread> started;
    std::future<std::thread> result = started.get_future();
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(Request{std::move(name), std::move(body), std::move(started)});
    }
    cv_.notify_one();
    return result.get();
  }

 private:
  void loop() {
    for (;;) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return !requests_.empty(); });
      auto request = std::move(requests_.front());
      requests_.pop_front();
      lock.unlock();
      try {
        request.started.set_value(std::thread([name = std::move(request.name), body = std::move(request.body)] {
          name_current_thread(name);
          give_short_slice(current_tid());
          body();
        }));
      } catch (...) {
        request.started.set_exception(std::current_exception());
      }
    }
  }

  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  struct Request {
    std::string name;
    std::function<void()> body;
    std::promise<std::thread> started;
  };
  std::deque<Request> requests_;
};

std::mutex g_yield_mu;
bool g_yielded = false;
YieldResult g_yield_result;
// Set once, never destroyed: the starter's thread outlives static destruction.
ThreadStarter* g_starter = nullptr;

ThreadStarter* starter() {
  std::lock_guard<std::mutex> lock(g_yield_mu);
  return g_starter;
}

// A line "<name> : <value>" of /proc/self/task/<tid>/sched, or -1.
int64_t sched_field(int64_t tid, const char* name) {
  const std::string path = "/proc/self/task/" + std::to_string(tid) + "/sched";
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return -1;
  char line[256];
  int64_t value = -1;
  const size_t n = std::strlen(name);
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, name, n) != 0 || (line[n] != ' ' && line[n] != ':')) continue;
    const char* colon = std::strchr(line, ':');
    if (colon != nullptr) value = std::strtoll(colon + 1, nullptr, 10);
    break;
  }
  std::fclose(f);
  return value;
}

}  // namespace

YieldResult yield_calling_thread(int nice) {
  std::lock_guard<std::mutex> lock(g_yield_mu);
  if (g_yielded) return g_yield_result;
  g_yielded = true;
  YieldResult result;
  const int64_t self = current_tid();
  errno = 0;
  const int before = getpriority(PRIO_PROCESS, static_cast<id_t>(self));
  result.nice = errno == 0 ? before : 0;
  // First the starter, at the priority the caller has now.
  g_starter = new ThreadStarter();
  // Every other thread under the normal policy (the core's running ones, the
  // runtime's pool, the starter; not the main thread) gets the short slice;
  // idle-priority ones stay. The kernel shows the slice it took (se.slice):
  // kCoreThreadSliceNs where it has custom slices.
  for (const ProcessThread& t : other_process_threads())
    if (give_short_slice(t.tid) && thread_slice_ns(t.tid) == kCoreThreadSliceNs) result.slice_ns = kCoreThreadSliceNs;
  if (result.slice_ns == 0) result.note = "this kernel keeps its own slices (custom slices need Linux 6.12 or later)";
  if (setpriority(PRIO_PROCESS, static_cast<id_t>(self), nice) == 0) {
    result.nice = nice;
  } else {
    const std::string why = std::strerror(errno);
    result.note = result.note.empty() ? "nice " + std::to_string(nice) + " was refused: " + why
                                       : result.note + "; nice " + std::to_string(nice) + " was refused: " + why;
  }
  g_yield_result = result;
  return result;
}

std::thread start_core_thread(std::string name, std::function<void()> body) {
  ThreadStarter* s = starter();
  if (s == nullptr) return named_thread(std::move(name), std::move(body));
  return s->start(std::move(name), std::move(body));
}

int thread_nice(int64_t tid) {
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
  return errno == 0 ? nice : 0;
}

int64_t thread_slice_ns(int64_t tid) {
  const int64_t slice = sched_field(tid, "se.slice");
  return slice > 0 ? slice : 0;
}

#else

YieldResult yield_calling_thread(int) {
  YieldResult result;
  result.note = "only on Linux";
  return result;
}

std::thread start_core_thread(std::string name, std::function<void()> body) {
  return named_thread(std::move(name), std::move(body));
}

int thread_nice(int64_t) { return 0; }
int64_t thread_slice_ns(int64_t) { return 0; }

#endif

// pthread names exist on Linux and macOS (LOADGEN_FORCE_PORTABLE builds
// still name threads: naming is not timing code, and the portable branch
// must not lose it on the systems that run it).
void name_current_thread(const std::string& name) {
#if defined(__linux__) || defined(__APPLE__)
  // Linux refuses names over 15 bytes (ERANGE): the start is kept.
  char buf[16];
  const size_t n = std::min<size_t>(name.size(), sizeof(buf) - 1);
  std::memcpy(buf, name.data(), n);
  buf[n] = '\0';
#if defined(__APPLE__)
  pthread_setname_np(buf);
#else
  pthread_setname_np(pthread_self(), buf);
#endif
#else
  (void)name;
#endif
}

std::string current_thread_name() {
#if defined(__linux__) || defined(__APPLE__)
  char buf[64] = {0};
  if (pthread_getname_np(pthread_self(), buf, sizeof(buf)) != 0) return "";
  return buf;
#else
  return "";
#endif
}

}  // namespace loadgen

#include "runtime_threads.h"

#include "platform.h"

#if LOADGEN_PLATFORM_LINUX
#include <dirent.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#endif

namespace loadgen {

#if LOADGEN_PLATFORM_LINUX
namespace {

// Field 22 of /proc/self/task/<tid>/stat (after the command in parentheses,
// which may itself hold spaces and parentheses: read from the last ')').
bool start_ticks_of(int64_t tid, uint64_t* out) {
  const std::string path = "/proc/self/task/" + std::to_string(tid) + "/stat";
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return false;
  char text[1024];
  const size_t n = std::fread(text, 1, sizeof(text) - 1, f);
  std::fclose(f);
  text[n] = '\0';
  const char* p = std::strrchr(text, ')');
  if (p == nullptr) return false;
  // After ')': field 3 (state) onward; start time is field 22.
  for (int field = 2; field < 22 && p != nullptr; ++field) p = std::strchr(p + 1, ' ');
  if (p == nullptr) return false;
  char* end = nullptr;
  const unsigned long long ticks = std::strtoull(p + 1, &end, 10);
  if (end == p + 1) return false;
  *out = ticks;
  return true;
}

}  // namespace

std::vector<ProcessThread> other_process_threads() {
  std::vector<ProcessThread> threads;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return threads;
  const int64_t main_tid = getpid();
  const int64_t self = static_cast<int64_t>(syscall(SYS_gettid));
  while (dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long long tid = std::strtoll(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || tid == main_tid || tid == self) continue;
    ProcessThread t;
    t.tid = tid;
    if (start_ticks_of(tid, &t.start_ticks)) threads.push_back(t);
  }
  closedir(dir);
  return threads;
}

int idle_threads(const std::vector<ProcessThread>& threads) {
  int idle = 0;
  for (const ProcessThread& t : threads) {
    uint64_t ticks = 0;
    // Gone, or the id now belongs to a later thread: left alone.
    if (!start_ticks_of(t.tid, &ticks) || ticks != t.start_ticks) continue;
    const pid_t tid = static_cast<pid_t>(t.tid);
    if (sched_getscheduler(tid) == SCHED_IDLE) {
      ++idle;
      continue;
    }
    sched_param param{};
    param.sched_priority = 0;
    if (sched_setscheduler(tid, SCHED_IDLE, &param) == 0) ++idle;
  }
  return idle;
}

bool thread_is_idle(int64_t tid) { return sched_getscheduler(static_cast<pid_t>(tid)) == SCHED_IDLE; }

#else

std::vector<ProcessThread> other_process_threads() { return {}; }
int idle_threads(const std::vector<ProcessThread>&) { return -1; }
bool thread_is_idle(int64_t) { return false; }

#endif

}  // namespace loadgen

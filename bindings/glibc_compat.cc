// glibc >= 2.28 for the Linux addon (cmake/portable_link.cmake): built on a
// newer glibc, the addon and the static libstdc++/libgcc in it would bind some
// calls to versions that older glibcs lack. The linker sends each call named
// in portable_link.cmake (-Wl,--wrap=<name>, the calls inside libstdc++.a and
// libgcc_eh.a too) to __wrap_<name> here, which calls that function's oldest
// version or does the same without it. test/platform.test.ts reads the
// result with objdump -T.
#if defined(LOADGEN_GLIBC_COMPAT) && defined(__linux__)

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#include <cstdint>

#if defined(__x86_64__)
#define LOADGEN_GLIBC_BASE "GLIBC_2.2.5"
#define LOADGEN_GLIBC_AFFINITY "GLIBC_2.3.4"
#define LOADGEN_GLIBC_THREAD_NAME "GLIBC_2.12"
#define LOADGEN_STAT_VER 1  // _STAT_VER_LINUX
#elif defined(__aarch64__)
#define LOADGEN_GLIBC_BASE "GLIBC_2.17"
#define LOADGEN_GLIBC_AFFINITY "GLIBC_2.17"
#define LOADGEN_GLIBC_THREAD_NAME "GLIBC_2.17"
#define LOADGEN_STAT_VER 0  // _STAT_VER_KERNEL (generic ABI)
#else
#error "glibc_compat.cc: add this architecture's oldest glibc symbol versions"
#endif

#define LOADGEN_HIDDEN __attribute__((visibility("hidden")))

// __wrap_<name> calls <name>@<version> (the name loadgen_old_<name> is bound
// to that version by .symver).
#define LOADGEN_OLD_VERSION(ret, name, version, params, args)              \
  ret loadgen_old_##name params;                                           \
  __asm__(".symver loadgen_old_" #name ", " #name "@" version);            \
  LOADGEN_HIDDEN ret __wrap_##name params { return loadgen_old_##name args; }

#if defined(DLFO_EH_SEGMENT_TYPE)
// The static unwinder (libgcc_eh.a) finds a throwing function's unwind table
// with _dl_find_object (glibc >= 2.35) and has no fallback when that fails:
// __wrap__dl_find_object looks the object up with dl_iterate_phdr instead
// (what the unwinders of glibc < 2.35 do).
namespace {
struct FindObject {
  uintptr_t pc;
  struct dl_find_object* result;
  bool found;
};

int find_object_in(struct dl_phdr_info* info, size_t, void* data) {
  auto* query = static_cast<FindObject*>(data);
  uintptr_t low = UINTPTR_MAX;
  uintptr_t high = 0;
  bool contains = false;
  const void* eh_frame = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD) {
      const uintptr_t end = start + ph.p_memsz;
      if (start < low) low = start;
      if (end > high) high = end;
      if (query->pc >= start && query->pc < end) contains = true;
    } else if (ph.p_type == DLFO_EH_SEGMENT_TYPE) {
      eh_frame = reinterpret_cast<const void*>(start);
    }
  }
  if (!contains) return 0;
  query->result->dlfo_flags = 0;
  query->result->dlfo_map_start = reinterpret_cast<void*>(low);
  query->result->dlfo_map_end = reinterpret_cast<void*>(high);
  query->result->dlfo_link_map = nullptr;
  query->result->dlfo_eh_frame = const_cast<void*>(eh_frame);
  query->found = true;
  return 1;
}
}  // namespace
#endif

extern "C" {

// libstdc++'s header code reads it (glibc >= 2.32) to skip atomics in a
// single-threaded process. Defined here (not exported), it stays 0: "maybe
// threaded", always correct.
LOADGEN_HIDDEN char __libc_single_threaded = 0;

// Moved from libpthread into libc in glibc 2.34, with a new version.
LOADGEN_OLD_VERSION(int, pthread_create, LOADGEN_GLIBC_BASE,
                    (pthread_t * t, const pthread_attr_t* a, void* (*f)(void*), void* arg), (t, a, f, arg))
LOADGEN_OLD_VERSION(int, pthread_join, LOADGEN_GLIBC_BASE, (pthread_t t, void** r), (t, r))
LOADGEN_OLD_VERSION(int, pthread_detach, LOADGEN_GLIBC_BASE, (pthread_t t), (t))
LOADGEN_OLD_VERSION(int, pthread_once, LOADGEN_GLIBC_BASE, (pthread_once_t * o, void (*f)(void)), (o, f))
LOADGEN_OLD_VERSION(int, pthread_key_create, LOADGEN_GLIBC_BASE, (pthread_key_t * k, void (*d)(void*)), (k, d))
LOADGEN_OLD_VERSION(int, __pthread_key_create, LOADGEN_GLIBC_BASE, (pthread_key_t * k, void (*d)(void*)), (k, d))
LOADGEN_OLD_VERSION(int, pthread_key_delete, LOADGEN_GLIBC_BASE, (pthread_key_t k), (k))
LOADGEN_OLD_VERSION(void*, pthread_getspecific, LOADGEN_GLIBC_BASE, (pthread_key_t k), (k))
LOADGEN_OLD_VERSION(int, pthread_setspecific, LOADGEN_GLIBC_BASE, (pthread_key_t k, const void* v), (k, v))
LOADGEN_OLD_VERSION(int, pthread_setaffinity_np, LOADGEN_GLIBC_AFFINITY,
                    (pthread_t t, size_t n, const cpu_set_t* s), (t, n, s))
// The core's thread names (native/core_threads.cc).
LOADGEN_OLD_VERSION(int, pthread_setname_np, LOADGEN_GLIBC_THREAD_NAME, (pthread_t t, const char* name), (t, name))
LOADGEN_OLD_VERSION(int, pthread_getname_np, LOADGEN_GLIBC_THREAD_NAME, (pthread_t t, char* name, size_t n), (t, name, n))

// glibc 2.29 gave exp/log/pow new versions without the SVID error handling;
// the old versions compute the same values (conformance-golden checks).
LOADGEN_OLD_VERSION(double, exp, LOADGEN_GLIBC_BASE, (double x), (x))
LOADGEN_OLD_VERSION(double, log, LOADGEN_GLIBC_BASE, (double x), (x))
LOADGEN_OLD_VERSION(double, pow, LOADGEN_GLIBC_BASE, (double x, double y), (x, y))

// stat/lstat/fstat64 are functions only since glibc 2.33; before, the
// headers called __xstat and friends with a layout version.
int loadgen_old_xstat(int ver, const char* path, struct stat* buf);
int loadgen_old_lxstat(int ver, const char* path, struct stat* buf);
int loadgen_old_fxstat64(int ver, int fd, struct stat64* buf);
__asm__(".symver loadgen_old_xstat, __xstat@" LOADGEN_GLIBC_BASE);
__asm__(".symver loadgen_old_lxstat, __lxstat@" LOADGEN_GLIBC_BASE);
__asm__(".symver loadgen_old_fxstat64, __fxstat64@" LOADGEN_GLIBC_BASE);
LOADGEN_HIDDEN int __wrap_stat(const char* path, struct stat* buf) { return loadgen_old_xstat(LOADGEN_STAT_VER, path, buf); }
LOADGEN_HIDDEN int __wrap_lstat(const char* path, struct stat* buf) { return loadgen_old_lxstat(LOADGEN_STAT_VER, path, buf); }
LOADGEN_HIDDEN int __wrap_fstat64(int fd, struct stat64* buf) { return loadgen_old_fxstat64(LOADGEN_STAT_VER, fd, buf); }

// pthread_cond_clockwait is glibc >= 2.30; std::condition_variable waits on
// steady_clock call it. pthread_cond_timedwait (CLOCK_REALTIME) with the
// remaining time does the same unless the wall clock is stepped meanwhile.
int loadgen_old_pthread_cond_timedwait(pthread_cond_t*, pthread_mutex_t*, const struct timespec*);
__asm__(".symver loadgen_old_pthread_cond_timedwait, pthread_cond_timedwait@" LOADGEN_GLIBC_BASE);
LOADGEN_HIDDEN int __wrap_pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                                                 const struct timespec* abstime) {
  struct timespec deadline = *abstime;
  if (clock != CLOCK_REALTIME) {
    struct timespec now_clock;
    struct timespec now_real;
    clock_gettime(clock, &now_clock);
    clock_gettime(CLOCK_REALTIME, &now_real);
    const long long ns = (static_cast<long long>(abstime->tv_sec) - now_clock.tv_sec) * 1000000000LL +
                         (abstime->tv_nsec - now_clock.tv_nsec) + now_real.tv_nsec;
    deadline.tv_sec = now_real.tv_sec + static_cast<time_t>(ns / 1000000000LL);
    deadline.tv_nsec = static_cast<long>(ns % 1000000000LL);
    if (deadline.tv_nsec < 0) {
      deadline.tv_nsec += 1000000000L;
      deadline.tv_sec -= 1;
    }
  }
  return loadgen_old_pthread_cond_timedwait(cond, mutex, &deadline);
}

// std::random_device uses arc4random (glibc >= 2.36); getrandom is 2.25.
LOADGEN_HIDDEN uint32_t __wrap_arc4random(void) {
  uint32_t value = 0;
  while (getrandom(&value, sizeof(value), 0) != static_cast<ssize_t>(sizeof(value))) {
  }
  return value;
}

#if defined(DLFO_EH_SEGMENT_TYPE)
LOADGEN_HIDDEN int __wrap__dl_find_object(void* pc, struct dl_find_object* result) {
  FindObject query{reinterpret_cast<uintptr_t>(pc), result, false};
  dl_iterate_phdr(find_object_in, &query);
  return query.found ? 0 : -1;
}
#endif

}  // extern "C"

#endif

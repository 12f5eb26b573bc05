// The test binary's replacement of the global operator new (alloc_count.h).
#include "alloc_count.h"

#if defined(LG_COUNT_ALLOCATIONS)

#include <cstdlib>
#include <new>

#if defined(__GNUC__) && !defined(__clang__)
// GCC takes the replaced operators' malloc/free pairing for a mismatch.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace loadgen_test {

std::atomic<uint64_t> g_allocations{0};
thread_local bool t_count_allocations = false;

}  // namespace loadgen_test

void* operator new(size_t size) {
  if (loadgen_test::t_count_allocations) loadgen_test::g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

#endif

// Heap allocations through operator new by the threads that ask for them to
// be counted: the test binary replaces the global operator new
// (alloc_count.cc), except under the sanitizers, which replace it themselves
// (LG_COUNT_ALLOCATIONS is then not defined and nothing is counted).
#pragma once

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define LG_COUNT_ALLOCATIONS 1

#include <atomic>
#include <cstdint>

namespace loadgen_test {

// Allocations made so far by threads while their t_count_allocations was set.
extern std::atomic<uint64_t> g_allocations;
extern thread_local bool t_count_allocations;

}  // namespace loadgen_test

#endif

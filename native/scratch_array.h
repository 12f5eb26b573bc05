// A fixed-capacity array for a run's large temporaries (the sorted copies of
// its records that the summary and the report compute from). Large ones are
// mapped from the OS and unmapped when freed: through malloc, whose mmap
// threshold adapts upwards after the first such free, each temporary in turn
// would stay resident and a run's peak memory would grow by all of them
// instead of by the largest (measured: +16 bytes a sample with two).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

#if defined(__linux__) || defined(__APPLE__)
#include <sys/mman.h>
#define LOADGEN_SCRATCH_MMAP 1
#endif

namespace loadgen {

template <typename T>
class ScratchArray {
  static_assert(std::is_trivially_copyable<T>::value && std::is_trivially_destructible<T>::value,
                "ScratchArray holds plain values");

 public:
  ScratchArray() = default;
  // Room for `capacity` values; size() is 0 until push_back or fill.
  explicit ScratchArray(size_t capacity) : capacity_(capacity) {
    if (capacity == 0) return;
    const size_t bytes = capacity * sizeof(T);
#if LOADGEN_SCRATCH_MMAP
    if (bytes >= kMapFromBytes) {
      void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      data_ = static_cast<T*>(p);
      mapped_ = true;
      return;
    }
#endif
    data_ = static_cast<T*>(::operator new(bytes));
  }
  ~ScratchArray() { release(); }
  ScratchArray(const ScratchArray&) = delete;
  ScratchArray& operator=(const ScratchArray&) = delete;
  ScratchArray(ScratchArray&& o) noexcept { take(o); }
  ScratchArray& operator=(ScratchArray&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }

  // Callers size the array for what they append (never past capacity()).
  void push_back(T v) { data_[size_++] = v; }
  // Every slot is in use (values written through operator[] by the caller).
  void use_all() { size_ = capacity_; }

  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  const T& front() const { return data_[0]; }
  const T& back() const { return data_[size_ - 1]; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }

 private:
  static constexpr size_t kMapFromBytes = size_t{1} << 20;

  void release() {
    if (data_ == nullptr) return;
#if LOADGEN_SCRATCH_MMAP
    if (mapped_) {
      munmap(data_, capacity_ * sizeof(T));
    } else {
      ::operator delete(data_);
    }
#else
    ::operator delete(data_);
#endif
    data_ = nullptr;
    size_ = capacity_ = 0;
    mapped_ = false;
  }
  void take(ScratchArray& o) {
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    capacity_ = std::exchange(o.capacity_, 0);
    mapped_ = std::exchange(o.mapped_, false);
  }

  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  bool mapped_ = false;
};

}  // namespace loadgen

// HttpClient's request table (http_client.h): one arena of request bytes and
// a table indexed by QSL index, loaded before a series.
#include "http_client.h"

#include "http_client_impl.h"

#include <algorithm>
#include <vector>

namespace loadgen {

#if defined(__linux__)
using http_internal::Request;
#endif

bool HttpClient::set_request(uint32_t index, const uint8_t* line, size_t line_size, const uint8_t* rest,
                             size_t rest_size) {
#if defined(__linux__)
  // Also after start(), between series (the QSL loads then): nothing is
  // outstanding, and the issue thread's next send() is ordered after this by
  // the session. Entries are nodes of a map: queued requests' pointers stay valid.
  if (index > kMaxRequestIndex || line_size == 0 || line_size > UINT32_MAX || rest_size > UINT32_MAX) return false;
  std::vector<Request>& table = impl_->table->requests;
  std::vector<uint8_t>& arena = impl_->table->arena;
  if (index >= table.size()) table.resize(static_cast<size_t>(index) + 1);
  Request& r = table[index];
  r.offset = arena.size();
  r.line_size = static_cast<uint32_t>(line_size);
  r.rest_size = static_cast<uint32_t>(rest_size);
  arena.insert(arena.end(), line, line + line_size);
  arena.insert(arena.end(), rest, rest + rest_size);
  return true;
#else
  return false;
#endif
}

bool HttpClient::set_requests(const uint32_t* indices, size_t count, const uint8_t* data, const uint32_t* layout) {
#if defined(__linux__)
  // Sized once for the whole load; nothing is stored when one entry is out of range.
  uint32_t max_index = 0;
  uint64_t bytes = 0;
  for (size_t i = 0; i < count; ++i) {
    if (indices[i] > kMaxRequestIndex || layout[4 * i + 1] == 0) return false;
    max_index = std::max(max_index, indices[i]);
    bytes += uint64_t{layout[4 * i + 1]} + layout[4 * i + 3];
  }
  if (count == 0) return true;
  std::vector<Request>& table = impl_->table->requests;
  if (max_index >= table.size()) table.resize(static_cast<size_t>(max_index) + 1);
  impl_->table->arena.reserve(impl_->table->arena.size() + bytes);
  for (size_t i = 0; i < count; ++i) {
    const uint32_t* at = layout + 4 * i;
    set_request(indices[i], data + at[0], at[1], data + at[2], at[3]);
  }
  return true;
#else
  (void)indices, (void)count, (void)data, (void)layout;
  return false;
#endif
}

void HttpClient::clear_requests() {
#if defined(__linux__)
  if (impl_->outstanding.load(std::memory_order_acquire) != 0) return;
  // Released, not kept: the next load may be of another size.
  std::vector<Request>().swap(impl_->table->requests);
  std::vector<uint8_t>().swap(impl_->table->arena);
#endif
}

void HttpClient::share_requests(const HttpClient& source) {
#if defined(__linux__)
  impl_->table = source.impl_->table;
#else
  (void)source;
#endif
}

}  // namespace loadgen

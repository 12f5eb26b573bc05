// HttpResponseParser (http_client.h): an incremental HTTP/1.1 response
// parser. The head is taken line by line (each line is handled as soon as
// its '\n' arrives, so no second pass over the head), the body by length,
// by chunks or until the peer closes. Buffers are reserved once and reused:
// no allocation per response once warmed.
#include <cstring>

#include "http_client.h"

namespace loadgen {

namespace {

// Body framing (body_mode_).
constexpr int kBodyNone = 0;
constexpr int kBodyLength = 1;
constexpr int kBodyChunked = 2;
constexpr int kBodyUntilClose = 3;

// Chunked sub-states (chunk_state_).
constexpr int kChunkSize = 0;      // reading "HEX[;ext]\r\n"
constexpr int kChunkData = 1;      // `remaining_` data bytes
constexpr int kChunkDataEnd = 2;   // the "\r\n" after the data
constexpr int kChunkTrailer = 3;   // trailer lines until an empty one

// A kept body past kDirectReserveFrom bytes gets room for the whole body
// limit at once when that is at most kDirectReserveUpTo (take_body).
constexpr size_t kDirectReserveFrom = 1 << 20;
constexpr uint64_t kDirectReserveUpTo = uint64_t{256} << 20;

// A chunk-size line longer than this (extensions included) is an error:
// nothing legitimate needs more, and it bounds chunk_line_.
constexpr size_t kMaxChunkLineBytes = 4096;

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool equals_lower(const char* s, size_t n, const char* lower_word, size_t m) {
  if (n != m) return false;
  for (size_t i = 0; i < n; ++i)
    if (lower(s[i]) != lower_word[i]) return false;
  return true;
}

bool equals_lower(const char* s, size_t n, const char* lower_word) {
  return equals_lower(s, n, lower_word, std::strlen(lower_word));
}

bool is_space(char c) { return c == ' ' || c == '\t'; }

void trim(const char*& s, size_t& n) {
  while (n > 0 && is_space(s[0])) ++s, --n;
  while (n > 0 && is_space(s[n - 1])) --n;
}

// Calls fn(token, size) for each comma-separated, trimmed, non-empty token.
template <typename Fn>
void for_each_token(const char* s, size_t n, Fn fn) {
  size_t start = 0;
  for (size_t i = 0; i <= n; ++i) {
    if (i == n || s[i] == ',') {
      const char* t = s + start;
      size_t len = i - start;
      trim(t, len);
      if (len > 0) fn(t, len);
      start = i + 1;
    }
  }
}

// A Content-Length value: decimal digits only, at most 2^53 - 1 (a length
// a JS number holds exactly, as llhttp and undici read it).
bool parse_content_length(const char* s, size_t n, uint64_t* out) {
  constexpr uint64_t kMax = (uint64_t{1} << 53) - 1;
  if (n == 0 || n > 16) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + static_cast<uint64_t>(s[i] - '0');
  }
  if (v > kMax) return false;
  *out = v;
  return true;
}

// RFC 9110 tchar: the characters of a header name.
bool is_token_char(unsigned char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  return c != 0 && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

// Field values and reason phrases: HTAB, SP, visible ASCII and obs-text
// (bytes >= 0x80, e.g. UTF-8); no other control character (CR, NUL, DEL).
bool is_text_char(unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7f); }

bool all_text(const char* s, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!is_text_char(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

void HttpResponseParser::reset(std::vector<uint8_t>* body_out, size_t body_keep_limit, uint64_t max_body_bytes) {
  if (head_.capacity() < 1024) head_.reserve(1024);
  if (chunk_line_.capacity() < 64) chunk_line_.reserve(64);
  body_out_ = body_out;
  if (body_out_ != nullptr) body_out_->clear();
  body_keep_limit_ = body_keep_limit;
  max_body_bytes_ = max_body_bytes;
  start_response();
}

void HttpResponseParser::start_response() {
  state_ = State::Head;
  status_ = 0;
  keep_alive_ = true;
  body_bytes_ = 0;
  error_ = "";
  over_body_limit_ = false;
  head_.clear();
  head_bytes_ = 0;
  head_lines_ = 0;
  http10_ = false;
  connection_close_ = false;
  connection_keep_alive_ = false;
  has_length_ = false;
  chunked_ = false;
  has_transfer_encoding_ = false;
  transfer_codings_ = 0;
  body_mode_ = kBodyNone;
  remaining_ = 0;
  chunk_state_ = kChunkSize;
  chunk_line_.clear();
  head_complete_ = false;
  captured_size_ = 0;
}

void HttpResponseParser::fail(const char* reason) {
  state_ = State::Error;
  error_ = reason;
}

void HttpResponseParser::fail_over_body_limit() {
  fail("response body over the size limit");
  over_body_limit_ = true;
}

// Handles one head line (without its CRLF). The first is the status line.
void HttpResponseParser::head_line(const char* s, size_t n) {
  if (head_lines_++ == 0) {
    // "HTTP/1.x SSS[ reason]"
    if (n < 12 || std::memcmp(s, "HTTP/1.", 7) != 0 || (s[7] != '0' && s[7] != '1') || s[8] != ' ')
      return fail("malformed status line");
    int status = 0;
    for (int i = 9; i < 12; ++i) {
      if (s[i] < '0' || s[i] > '9') return fail("malformed status code");
      status = status * 10 + (s[i] - '0');
    }
    if (status < 100 || (n > 12 && s[12] != ' ')) return fail("malformed status code");
    if (n > 13 && !all_text(s + 13, n - 13)) return fail("malformed status line (a control character)");
    status_ = status;
    http10_ = s[7] == '0';
    return;
  }
  if (is_space(s[0])) return fail("obsolete folded header line");
  const char* colon = static_cast<const char*>(std::memchr(s, ':', n));
  if (colon == nullptr || colon == s) return fail("malformed header line");
  const size_t name_size = static_cast<size_t>(colon - s);
  for (size_t i = 0; i < name_size; ++i)
    if (!is_token_char(static_cast<unsigned char>(s[i]))) return fail("malformed header name");
  const char* value = colon + 1;
  size_t value_size = n - name_size - 1;
  if (!all_text(value, value_size)) return fail("invalid character in a header value");
  trim(value, value_size);
  if (equals_lower(s, name_size, "content-length")) {
    // One Content-Length, one number: llhttp refuses a second one even when
    // equal, and lists; two lengths are a request-smuggling shape.
    if (has_length_) return fail("duplicate Content-Length");
    if (!parse_content_length(value, value_size, &remaining_)) return fail("invalid Content-Length");
    has_length_ = true;
  } else if (equals_lower(s, name_size, "transfer-encoding")) {
    has_transfer_encoding_ = true;
    for_each_token(value, value_size, [&](const char* t, size_t len) {
      ++transfer_codings_;
      chunked_ = equals_lower(t, len, "chunked");
    });
  } else if (equals_lower(s, name_size, "connection")) {
    for_each_token(value, value_size, [&](const char* t, size_t len) {
      if (equals_lower(t, len, "close")) connection_close_ = true;
      if (equals_lower(t, len, "keep-alive")) connection_keep_alive_ = true;
    });
  }
  // Only a 2xx response's: the protocol's reader reads no other (as undici's onHeaders).
  if (capture_names_ != nullptr && status_ >= 200 && status_ <= 299) capture(s, name_size, value, value_size);
}

void HttpResponseParser::capture(const char* name, size_t name_size, const char* value, size_t value_size) {
  const std::vector<std::string>& names = *capture_names_;
  for (size_t k = 0; k < names.size() && k < kMaxCapturedNames; ++k) {
    if (!equals_lower(name, name_size, names[k].data(), names[k].size())) continue;
    // A value cut short would be read as another one: refused instead.
    if (value_size > kMaxCapturedValueBytes) return fail("a response header the protocol reads is over 256 bytes");
    if (3 + value_size > kCaptureBytes - captured_size_) return fail("the response headers the protocol reads are over 1 KiB");
    uint8_t* at = captured_.data() + captured_size_;
    at[0] = static_cast<uint8_t>(k);
    at[1] = static_cast<uint8_t>(value_size & 0xff);
    at[2] = static_cast<uint8_t>(value_size >> 8);
    if (value_size > 0) std::memcpy(at + 3, value, value_size);
    captured_size_ += 3 + value_size;
    return;
  }
}

// The blank line ended the head: decide the framing of the body.
void HttpResponseParser::head_done() {
  if (head_lines_ == 0) return fail("empty response head");
  if (status_ == 101) return fail("unexpected 101 Switching Protocols");
  if (status_ < 200) {
    // An interim response: the real one follows.
    start_response();
    return;
  }
  keep_alive_ = !connection_close_ && (!http10_ || connection_keep_alive_);
  // Framing two ways at once is a smuggling shape (RFC 9112 6.3); a coding
  // other than chunked alone is one nothing here decodes (none was asked for).
  if (has_transfer_encoding_ && has_length_) return fail("Transfer-Encoding with Content-Length");
  if (has_transfer_encoding_ && (transfer_codings_ != 1 || !chunked_))
    return fail("unsupported Transfer-Encoding (only chunked)");
  head_complete_ = true;
  if (status_ == 204 || status_ == 304) {
    state_ = State::Done;
    return;
  }
  if (has_transfer_encoding_) {
    body_mode_ = kBodyChunked;
    chunk_state_ = kChunkSize;
    remaining_ = 0;
  } else if (has_length_) {
    if (remaining_ > max_body_bytes_) {
      head_complete_ = false;
      return fail_over_body_limit();
    }
    body_mode_ = kBodyLength;
    if (remaining_ == 0) {
      state_ = State::Done;
      return;
    }
  } else {
    body_mode_ = kBodyUntilClose;
    keep_alive_ = false;
  }
  state_ = State::Body;
}

bool HttpResponseParser::take_body(const uint8_t* data, size_t size) {
  if (size > max_body_bytes_ - body_bytes_) {
    fail_over_body_limit();
    return false;
  }
  body_bytes_ += size;
  if (body_out_ != nullptr && body_out_->size() < body_keep_limit_) {
    const size_t room = body_keep_limit_ - body_out_->size();
    const size_t keep = size < room ? size : room;
    const size_t need = body_out_->size() + keep;
    if (need > body_out_->capacity()) {
      // Doubling while small; past 1 MiB, room for the whole limit at once
      // (address space: pages count only once written), so a large body is
      // never copied to a bigger buffer while the old one is still held.
      // Never past the limit: a body beyond it is an error.
      const uint64_t most = max_body_bytes_ < body_keep_limit_ ? max_body_bytes_ : body_keep_limit_;
      uint64_t grown = 2 * static_cast<uint64_t>(body_out_->capacity());
      if (need > kDirectReserveFrom && most <= kDirectReserveUpTo) grown = most;
      if (grown > most) grown = most;
      body_out_->reserve(static_cast<size_t>(grown > need ? grown : need));
    }
    body_out_->insert(body_out_->end(), data, data + keep);
  }
  return true;
}

size_t HttpResponseParser::feed(const uint8_t* data, size_t size) {
  size_t at = 0;
  while (at < size && (state_ == State::Head || state_ == State::Body)) {
    if (state_ == State::Head) {
      const uint8_t* start = data + at;
      const void* nl = std::memchr(start, '\n', size - at);
      const size_t take = nl != nullptr ? static_cast<size_t>(static_cast<const uint8_t*>(nl) - start) + 1 : size - at;
      if (take > kMaxHeadBytes - head_bytes_) {
        fail("response head over 64 KiB");
        return at;
      }
      head_bytes_ += take;
      head_.append(reinterpret_cast<const char*>(start), take);
      at += take;
      if (nl == nullptr) break;
      // Lines end in CRLF: a bare LF is where parsers disagree (llhttp refuses it).
      if (head_.size() < 2 || head_[head_.size() - 2] != '\r') {
        fail("bare LF line ending");
        return at;
      }
      const size_t n = head_.size() - 2;
      if (n == 0) {
        head_done();
      } else {
        head_line(head_.data(), n);
      }
      head_.clear();
      continue;
    }
    // Body.
    if (body_mode_ == kBodyLength) {
      const size_t take = remaining_ < size - at ? static_cast<size_t>(remaining_) : size - at;
      if (!take_body(data + at, take)) return at;
      at += take;
      remaining_ -= take;
      if (remaining_ == 0) state_ = State::Done;
    } else if (body_mode_ == kBodyUntilClose) {
      if (!take_body(data + at, size - at)) return at;
      at = size;
    } else {
      at += feed_chunked(data + at, size - at);
    }
  }
  return at;
}

size_t HttpResponseParser::feed_chunked(const uint8_t* data, size_t size) {
  if (chunk_state_ == kChunkData) {
    const size_t take = remaining_ < size ? static_cast<size_t>(remaining_) : size;
    if (!take_body(data, take)) return 0;
    remaining_ -= take;
    if (remaining_ == 0) chunk_state_ = kChunkDataEnd;
    return take;
  }
  // A line: the chunk size, the data's line end or a trailer.
  const void* nl = std::memchr(data, '\n', size);
  const size_t take = nl != nullptr ? static_cast<size_t>(static_cast<const uint8_t*>(nl) - data) + 1 : size;
  const size_t limit = chunk_state_ == kChunkTrailer ? kMaxHeadBytes : kMaxChunkLineBytes;
  if (take > limit - chunk_line_.size() || (chunk_state_ == kChunkTrailer && take > kMaxHeadBytes - head_bytes_)) {
    fail(chunk_state_ == kChunkTrailer ? "response trailers over 64 KiB" : "chunk size line too long");
    return 0;
  }
  if (chunk_state_ == kChunkTrailer) head_bytes_ += take;
  chunk_line_.append(reinterpret_cast<const char*>(data), take);
  if (nl == nullptr) return take;
  if (chunk_line_.size() < 2 || chunk_line_[chunk_line_.size() - 2] != '\r') {
    fail("bare LF line ending");
    return 0;
  }
  const size_t n = chunk_line_.size() - 2;
  const char* line = chunk_line_.data();
  if (chunk_state_ == kChunkSize) {
    uint64_t v = 0;
    size_t digits = 0;
    for (; digits < n; ++digits) {
      const int h = hex_value(line[digits]);
      if (h < 0) break;
      if (v >> 60) {
        fail("chunk size too large");
        return 0;
      }
      v = (v << 4) | static_cast<uint64_t>(h);
    }
    // White space only before an extension (RFC 9112 7.1.1: BWS ";").
    size_t rest = digits;
    while (rest < n && is_space(line[rest])) ++rest;
    if (digits == 0 || (digits < n && (rest == n || line[rest] != ';'))) {
      fail("malformed chunk size");
      return 0;
    }
    if (v > max_body_bytes_ - body_bytes_) {
      fail_over_body_limit();
      return 0;
    }
    remaining_ = v;
    chunk_state_ = v == 0 ? kChunkTrailer : kChunkData;
    if (v == 0) head_bytes_ = 0;  // the trailers have their own 64 KiB
  } else if (chunk_state_ == kChunkDataEnd) {
    if (n != 0) {
      fail("missing line end after chunk data");
      return 0;
    }
    chunk_state_ = kChunkSize;
  } else if (n == 0) {
    state_ = State::Done;  // the empty line after the trailers
  }
  chunk_line_.clear();
  return take;
}

void HttpResponseParser::end_of_stream() {
  if (state_ == State::Body && body_mode_ == kBodyUntilClose) {
    state_ = State::Done;
  } else if (state_ == State::Head || state_ == State::Body) {
    fail(state_ == State::Head && head_bytes_ == 0 && head_lines_ == 0 ? "connection closed before a response"
                                                                       : "connection closed mid-response");
  }
}

}  // namespace loadgen

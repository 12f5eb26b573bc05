#include "json.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace loadgen_test {

namespace {

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error("json: " + what); }

const char* kind_name(Json::Kind kind) {
  switch (kind) {
    case Json::Kind::Null: return "null";
    case Json::Kind::Bool: return "a boolean";
    case Json::Kind::Number: return "a number";
    case Json::Kind::String: return "a string";
    case Json::Kind::Array: return "an array";
    case Json::Kind::Object: return "an object";
  }
  return "?";
}

void append_utf8(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// A decimal integer text (optional '-', digits only): the integer readers
// parse it directly; anything else goes through a double.
bool is_plain_integer(const std::string& s) {
  size_t i = s.size() > 0 && s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

}  // namespace

class JsonParser {
 public:
  explicit JsonParser(const std::string& text) : s_(text) {}

  Json document() {
    Json v = value(0);
    skip_space();
    if (at_ != s_.size()) error("unexpected text after the document");
    return v;
  }

 private:
  [[noreturn]] void error(const std::string& what) const { fail(what + " at offset " + std::to_string(at_)); }

  void skip_space() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\n' || s_[at_] == '\r' || s_[at_] == '\t')) ++at_;
  }

  bool consume(const char* word) {
    size_t n = 0;
    while (word[n] != '\0') ++n;
    if (s_.compare(at_, n, word) != 0) return false;
    at_ += n;
    return true;
  }

  Json value(int depth) {
    if (depth > 200) error("nesting too deep");
    skip_space();
    if (at_ >= s_.size()) error("unexpected end");
    Json v;
    const char c = s_[at_];
    if (c == '{') {
      v.kind_ = Json::Kind::Object;
      ++at_;
      skip_space();
      if (at_ < s_.size() && s_[at_] == '}') {
        ++at_;
        return v;
      }
      for (;;) {
        skip_space();
        if (at_ >= s_.size() || s_[at_] != '"') error("expected a member name");
        std::string key = string_body();
        skip_space();
        if (at_ >= s_.size() || s_[at_] != ':') error("expected ':'");
        ++at_;
        v.members_.emplace_back(std::move(key), value(depth + 1));
        skip_space();
        if (at_ < s_.size() && s_[at_] == ',') {
          ++at_;
        } else if (at_ < s_.size() && s_[at_] == '}') {
          ++at_;
          return v;
        } else {
          error("expected ',' or '}'");
        }
      }
    }
    if (c == '[') {
      v.kind_ = Json::Kind::Array;
      ++at_;
      skip_space();
      if (at_ < s_.size() && s_[at_] == ']') {
        ++at_;
        return v;
      }
      for (;;) {
        v.items_.push_back(value(depth + 1));
        skip_space();
        if (at_ < s_.size() && s_[at_] == ',') {
          ++at_;
        } else if (at_ < s_.size() && s_[at_] == ']') {
          ++at_;
          return v;
        } else {
          error("expected ',' or ']'");
        }
      }
    }
    if (c == '"') {
      v.kind_ = Json::Kind::String;
      v.text_ = string_body();
      return v;
    }
    if (consume("true")) {
      v.kind_ = Json::Kind::Bool;
      v.bool_ = true;
      return v;
    }
    if (consume("false")) {
      v.kind_ = Json::Kind::Bool;
      return v;
    }
    if (consume("null")) return v;
    if (c == '-' || (c >= '0' && c <= '9')) {
      const size_t start = at_;
      ++at_;
      while (at_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[at_])) || s_[at_] == '.' ||
                                 s_[at_] == 'e' || s_[at_] == 'E' || s_[at_] == '+' || s_[at_] == '-'))
        ++at_;
      v.kind_ = Json::Kind::Number;
      v.text_ = s_.substr(start, at_ - start);
      return v;
    }
    error(std::string("unexpected character '") + c + "'");
  }

  // At an opening quote: the decoded string; leaves `at_` after the closing quote.
  std::string string_body() {
    ++at_;
    std::string out;
    for (;;) {
      if (at_ >= s_.size()) error("unterminated string");
      const char c = s_[at_++];
      if (c == '"') return out;
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (at_ >= s_.size()) error("unterminated escape");
      const char e = s_[at_++];
      switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && s_.compare(at_, 2, "\\u") == 0) {
            at_ += 2;
            const uint32_t low = hex4();
            if (low < 0xDC00 || low >= 0xE000) error("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(&out, cp);
          break;
        }
        default: error("bad escape");
      }
    }
  }

  uint32_t hex4() {
    if (at_ + 4 > s_.size()) error("short \\u escape");
    uint32_t cp = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = s_[at_++];
      cp <<= 4;
      if (h >= '0' && h <= '9') cp |= static_cast<uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f') cp |= static_cast<uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') cp |= static_cast<uint32_t>(h - 'A' + 10);
      else error("bad \\u escape");
    }
    return cp;
  }

  const std::string& s_;
  size_t at_ = 0;
};

Json parse_json(const std::string& text) { return JsonParser(text).document(); }

bool Json::as_bool() const {
  if (kind_ != Kind::Bool) fail(std::string("expected a boolean, got ") + kind_name(kind_));
  return bool_;
}

double Json::as_double() const {
  if (kind_ != Kind::Number) fail(std::string("expected a number, got ") + kind_name(kind_));
  char* end = nullptr;
  const double d = std::strtod(text_.c_str(), &end);
  if (end != text_.c_str() + text_.size()) fail("bad number " + text_);
  return d;
}

int64_t Json::as_int64() const {
  if (kind_ != Kind::Number && kind_ != Kind::String) fail(std::string("expected an integer, got ") + kind_name(kind_));
  if (is_plain_integer(text_)) {
    errno = 0;
    const long long v = std::strtoll(text_.c_str(), nullptr, 10);
    if (errno == ERANGE) fail("integer out of range: " + text_);
    return static_cast<int64_t>(v);
  }
  if (kind_ == Kind::String) fail("expected an integer, got \"" + text_ + "\"");
  const double d = as_double();
  if (std::floor(d) != d || std::fabs(d) > 9007199254740992.0) fail("expected an integer, got " + text_);
  return static_cast<int64_t>(d);
}

uint64_t Json::as_uint64() const {
  if (kind_ != Kind::Number && kind_ != Kind::String) fail(std::string("expected an integer, got ") + kind_name(kind_));
  if (is_plain_integer(text_) && text_[0] != '-') {
    errno = 0;
    const unsigned long long v = std::strtoull(text_.c_str(), nullptr, 10);
    if (errno == ERANGE) fail("integer out of range: " + text_);
    return static_cast<uint64_t>(v);
  }
  const int64_t v = as_int64();
  if (v < 0) fail("expected a non-negative integer, got " + text_);
  return static_cast<uint64_t>(v);
}

const std::string& Json::as_string() const {
  if (kind_ != Kind::String) fail(std::string("expected a string, got ") + kind_name(kind_));
  return text_;
}

const std::vector<Json>& Json::items() const {
  if (kind_ != Kind::Array) fail(std::string("expected an array, got ") + kind_name(kind_));
  return items_;
}

const std::vector<std::pair<std::string, Json>>& Json::members() const {
  if (kind_ != Kind::Object) fail(std::string("expected an object, got ") + kind_name(kind_));
  return members_;
}

const Json* Json::find(const std::string& key) const {
  for (const auto& m : members_)
    if (m.first == key) return &m.second;
  return nullptr;
}

const Json& Json::at(const std::string& key) const {
  const Json* v = find(key);
  if (v == nullptr) fail("missing member \"" + key + "\"");
  return *v;
}

std::string Json::describe() const {
  switch (kind_) {
    case Kind::Null: return "null";
    case Kind::Bool: return bool_ ? "true" : "false";
    case Kind::Number: return text_;
    case Kind::String: return "\"" + text_ + "\"";
    case Kind::Array: return "[" + std::to_string(items_.size()) + " items]";
    case Kind::Object: return "{" + std::to_string(members_.size()) + " members}";
  }
  return "?";
}

}  // namespace loadgen_test

// A small JSON reader for the core's tests (the golden vectors). A number
// keeps its text, so it is read exactly as an int64, a uint64 or a double
// (strtod rounds correctly) only when the test knows which it is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace loadgen_test {

class Json {
 public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::Null; }
  bool is_array() const { return kind_ == Kind::Array; }
  bool is_object() const { return kind_ == Kind::Object; }
  bool is_string() const { return kind_ == Kind::String; }

  // Each throws std::runtime_error when the value is of another kind or out
  // of range. The integer readers also take a decimal string (64-bit seeds
  // are strings in the vectors) and an integral number written as a double.
  bool as_bool() const;
  int64_t as_int64() const;
  uint64_t as_uint64() const;
  double as_double() const;
  const std::string& as_string() const;
  const std::vector<Json>& items() const;
  const std::vector<std::pair<std::string, Json>>& members() const;

  // Object member `key`, or nullptr when absent (or not an object).
  const Json* find(const std::string& key) const;
  // Object member `key`; throws when absent.
  const Json& at(const std::string& key) const;
  // The value as JSON-like text, for failure messages.
  std::string describe() const;

  friend Json parse_json(const std::string& text);

 private:
  friend class JsonParser;
  Kind kind_ = Kind::Null;
  bool bool_ = false;
  std::string text_;  // a string's value or a number's text
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;
};

// Parses one JSON document; throws std::runtime_error naming the offset of
// the first error.
Json parse_json(const std::string& text);

}  // namespace loadgen_test

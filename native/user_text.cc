#include "user_text.h"

#include <cstdio>

namespace loadgen {

namespace {

void append_hex(std::string* out, const char* format, unsigned value) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), format, value);
  *out += buf;
}

}  // namespace

std::string escape_control_characters(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      append_hex(&out, "\\x%02x", c);
    } else if (c == 0xc2 && i + 1 < n && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      // C1 control U+0080..U+009F: C2 80..C2 9F in UTF-8 (U+0085 is a line break to some readers).
      append_hex(&out, "\\u%04x", static_cast<unsigned char>(text[i + 1]));
      ++i;
    } else if (c == 0xe2 && i + 2 < n && static_cast<unsigned char>(text[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(text[i + 2]) == 0xa8 || static_cast<unsigned char>(text[i + 2]) == 0xa9)) {
      // U+2028 LINE SEPARATOR / U+2029 PARAGRAPH SEPARATOR: E2 80 A8 / E2 80 A9.
      append_hex(&out, "\\u%04x", 0x2000u + static_cast<unsigned char>(text[i + 2]) - 0x80u);
      i += 2;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

std::string echo_input(const std::string& text, size_t limit) {
  if (text.size() <= limit) return escape_control_characters(text);
  size_t cut = limit;
  // Back up over UTF-8 continuation bytes so no character is split.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
  return escape_control_characters(text.substr(0, cut)) + "\xE2\x80\xA6 (" + std::to_string(text.size() - cut) +
         " more bytes)";
}

}  // namespace loadgen

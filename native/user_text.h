// How text that came from a user (names, config paths) appears in the logs
// and messages: control characters escaped so it cannot start a line of its
// own, and a long input capped so a 1 MB value makes no 1 MB message.
#pragma once

#include <cstddef>
#include <string>

namespace loadgen {

// Most bytes of one piece of user input a message quotes.
constexpr size_t kEchoLimit = 80;

// Paths are shown whole up to Linux's PATH_MAX: an openable path is never cut.
constexpr size_t kPathEchoLimit = 4096;

// `text` (UTF-8) with every control character escaped: \n, \r and \t by name,
// other C0 controls and DEL as \xNN, C1 controls (U+0080..U+009F) and
// U+2028/U+2029 as \uXXXX. Everything else, backslashes included, is kept,
// so text without control characters comes back unchanged.
std::string escape_control_characters(const std::string& text);

// The first `limit` bytes of `text` (cut at a UTF-8 character boundary),
// escaped as above, then "… (N more bytes)" when something was cut. Costs
// O(limit) whatever the input's length.
std::string echo_input(const std::string& text, size_t limit = kEchoLimit);

}  // namespace loadgen

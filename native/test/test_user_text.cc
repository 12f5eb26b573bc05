// User text in the logs and messages: control characters escaped, long input capped.
#include <string>
#include <vector>

#include "check.h"
#include "config.h"
#include "detail_log.h"
#include "results.h"
#include "user_text.h"

using namespace loadgen;

TEST(escape_control_characters_keeps_printable_text) {
  CHECK_EQ(escape_control_characters("GoldenSUT"), std::string("GoldenSUT"));
  CHECK_EQ(escape_control_characters("a\\b \"c\" \xC3\xA9\xE2\x82\xAC"), std::string("a\\b \"c\" \xC3\xA9\xE2\x82\xAC"));
}

TEST(escape_control_characters_escapes_every_control) {
  CHECK_EQ(escape_control_characters("a\nb\rc\td"), std::string("a\\nb\\rc\\td"));
  CHECK_EQ(escape_control_characters(std::string("\x01\x1b\x7f", 3)), std::string("\\x01\\x1b\\x7f"));
  CHECK_EQ(escape_control_characters(std::string("\0", 1)), std::string("\\x00"));
  // C1 controls (NEL U+0085), U+2028 and U+2029; U+00A0 and U+2027 are kept.
  CHECK_EQ(escape_control_characters("x\xC2\x85y\xC2\x80\xC2\x9F"), std::string("x\\u0085y\\u0080\\u009f"));
  CHECK_EQ(escape_control_characters("\xE2\x80\xA8|\xE2\x80\xA9"), std::string("\\u2028|\\u2029"));
  CHECK_EQ(escape_control_characters("\xC2\xA0\xE2\x80\xA7"), std::string("\xC2\xA0\xE2\x80\xA7"));
  // A truncated sequence at the end is kept as it is.
  CHECK_EQ(escape_control_characters("z\xC2"), std::string("z\xC2"));
}

TEST(echo_input_caps_long_input) {
  CHECK_EQ(echo_input("short"), std::string("short"));
  const std::string exact(kEchoLimit, 'k');
  CHECK_EQ(echo_input(exact), exact);
  const std::string big(1 << 20, 'x');
  const std::string shown = echo_input(big);
  CHECK_EQ(shown, std::string(kEchoLimit, 'x') + "\xE2\x80\xA6 (" + std::to_string(big.size() - kEchoLimit) + " more bytes)");
  CHECK(shown.size() < 200);
  // Never cuts a UTF-8 character: 79 ASCII bytes then a 2-byte character.
  const std::string accented = std::string(kEchoLimit - 1, 'a') + "\xC3\xA9" + "tail";
  CHECK_EQ(echo_input(accented), std::string(kEchoLimit - 1, 'a') + "\xE2\x80\xA6 (6 more bytes)");
  CHECK_EQ(echo_input("l1\nl2", 3), std::string("l1\\n\xE2\x80\xA6 (2 more bytes)"));
}

TEST(summary_escapes_control_characters_in_the_sut_name) {
  PerformanceSummary s;
  s.settings.scenario = Scenario::Offline;
  s.sut_name = "evil\nResult is : VALID\r\xE2\x80\xA8";
  const std::string text = format_summary_results(s, Mode::PerformanceOnly);
  CHECK(text.find("SUT name : evil\\nResult is : VALID\\r\\u2028\n") != std::string::npos);
  // No line of the summary starts with the forged verdict.
  CHECK(text.find("\nResult is : VALID") == std::string::npos);
  s.sut_name = "plain name";
  CHECK(format_summary_results(s, Mode::PerformanceOnly).find("SUT name : plain name\n") != std::string::npos);
}

TEST(config_cannot_open_message_caps_the_path) {
  ConfigLoader loader("");
  TestSettings settings;
  std::vector<LogMessage> messages;
  const std::string path = "/nonexistent/" + std::string(100000, 'p');
  CHECK_EQ(loader.from_config_file(settings, path, "*", "Offline", kConfTypeUser, &messages), kConfigNotFound);
  CHECK(!messages.empty());
  CHECK(messages.back().text.size() < kPathEchoLimit + 100);
  CHECK(messages.back().text.find("more bytes)") != std::string::npos);
  // An ordinary path is shown whole, as the reference does.
  messages.clear();
  ConfigLoader loader2("");
  loader2.from_config_file(settings, "/nonexistent/user.conf", "*", "Offline", kConfTypeUser, &messages);
  CHECK_EQ(messages.back().text, std::string("can't open file /nonexistent/user.conf"));
}

TEST(detail_log_quotes_names_as_json_strings) {
  // The detail log already escapes (DetailLog::quote): a name cannot end its line.
  CHECK_EQ(DetailLog::quote("x\nResult is : VALID\r\t\"\\"), std::string("\"x\\nResult is : VALID\\r\\t\\\"\\\\\""));
  CHECK_EQ(DetailLog::quote(std::string("\x01", 1)), std::string("\"\\u0001\""));
}

// The native client's redaction of secrets (http_secrets.h): exactly the
// texts lib/net/secrets.ts gives on the shared cases
// (test/fixtures/secret-redaction.json, which test/secrets.test.ts reads
// too), plus what only bytes can show (UTF-8 that is not valid) and a long
// text.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "check.h"
#include "http_secrets.h"
#include "json.h"

#ifndef LOADGEN_TEST_FIXTURES_DIR
#define LOADGEN_TEST_FIXTURES_DIR "test/fixtures"
#endif

using loadgen::SecretRedactor;
using loadgen::utf16_of;

namespace {

SecretRedactor redactor_of(const std::vector<std::string>& secrets) {
  std::vector<std::u16string> units;
  for (const std::string& s : secrets) units.push_back(utf16_of(s));
  return SecretRedactor(units);
}

bool read_fixture(loadgen_test::Json* out) {
  const std::string path = std::string(LOADGEN_TEST_FIXTURES_DIR) + "/secret-redaction.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    loadgen_test::report_failure(__FILE__, __LINE__, "cannot open " + path);
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  *out = loadgen_test::parse_json(text.str());
  return true;
}

}  // namespace

TEST(http_secrets_the_shared_cases_exactly_as_js) {
  loadgen_test::Json fixture;
  if (!read_fixture(&fixture)) return;
  CHECK_EQ(fixture.at("redacted").as_string(), std::string(SecretRedactor::kRedacted));
  size_t texts = 0;
  for (const loadgen_test::Json& c : fixture.at("cases").items()) {
    std::vector<std::string> secrets;
    for (const loadgen_test::Json& s : c.at("secrets").items()) secrets.push_back(s.as_string());
    const SecretRedactor redactor = redactor_of(secrets);
    CHECK_EQ(redactor.size(), secrets.size());
    for (const loadgen_test::Json& pair : c.at("texts").items()) {
      const std::string& text = pair.items().at(0).as_string();
      const std::string& expected = pair.items().at(1).as_string();
      const std::string got = redactor.redact(text);
      CHECK_EQ(got, expected);
      if (got != expected) std::cerr << "  case: " << c.at("name").as_string() << "\n  text: " << text << "\n";
      ++texts;
    }
  }
  CHECK(texts >= 50);
}

TEST(http_secrets_repeats_and_empty_secrets) {
  CHECK(SecretRedactor().empty());
  CHECK(redactor_of({"", ""}).empty());
  CHECK_EQ(redactor_of({"abcdefgh12", "abcdefgh12", "xy"}).size(), size_t{2});
  CHECK_EQ(SecretRedactor().redact("sk-anything-at-all"), std::string("sk-anything-at-all"));
}

TEST(http_secrets_bytes_that_are_not_utf8_match_nothing_and_stay) {
  const SecretRedactor r = redactor_of({"sk-proj-Zq7Wm3Xv9Lp2Rt5Yb8Nc4"});
  // A byte that is not UTF-8 inside a quoted key: the runs either side of it (8+ each) go, it stays.
  CHECK_EQ(r.redact("key sk-proj-Zq7W\xff" "m3Xv9Lp2Rt5 end"), std::string("key <redacted>\xff<redacted> end"));
  // 7 characters either side: no run.
  CHECK_EQ(r.redact("k sk-proj\xffZq7Wm3X k"), std::string("k sk-proj\xffZq7Wm3X k"));
  // A lead byte cut off at the end of an excerpt.
  CHECK_EQ(r.redact("Rt5Yb8Nc4\xe2\x82"), std::string("<redacted>\xe2\x82"));
  // A secret with a character beyond ASCII, its run starting after a cut one.
  const SecretRedactor u = redactor_of({"cl\xc3\xa9-secr\xc3\xa8te-42"});
  CHECK_EQ(u.redact("\xa9-secr\xc3\xa8te-42!"), std::string("\xa9<redacted>!"));
}

TEST(http_secrets_a_long_text_in_one_pass) {
  const std::string key = "sk-proj-Zq7Wm3Xv9Lp2Rt5Yb8Nc4Hd6Jf1Kg0123456789";
  const SecretRedactor r = redactor_of({key});
  const std::string text = std::string(100'000, 'x') + key.substr(5, 15) + std::string(100'000, 'y');
  const std::string out = r.redact(text);
  CHECK_EQ(out.size(), size_t{200'000} + std::string(SecretRedactor::kRedacted).size());
  CHECK_EQ(out.substr(100'000, 10), std::string(SecretRedactor::kRedacted));
}

TEST(http_secrets_utf16_of_decodes_strictly) {
  CHECK(utf16_of("a\xc3\xa9") == std::u16string(u"a\u00e9"));
  CHECK(utf16_of("\xf0\x9f\x94\x91") == std::u16string(u"\U0001F511"));
  // Overlong, surrogate and cut sequences: one U+FFFD per byte.
  CHECK(utf16_of("\xc0\xaf") == std::u16string(u"\ufffd\ufffd"));
  CHECK(utf16_of("\xed\xa0\x80") == std::u16string(u"\ufffd\ufffd\ufffd"));
  CHECK(utf16_of("\xe2\x82") == std::u16string(u"\ufffd\ufffd"));
}

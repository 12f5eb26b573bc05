// The redaction of secrets (the API key, secret request headers' values)
// from the messages the native HTTP client writes itself (an error status's
// body excerpt, which may quote them): the rule of lib/net/secrets.ts, so
// that both transports write the same text. Every run of kMinRun or more
// characters that occur contiguously in a secret is replaced with
// kRedacted; a secret shorter than kMinRun only where it occurs whole.
// Characters are UTF-16 code units, as JS strings count them: the secrets
// come as UTF-16, a message's UTF-8 is decoded for the matching (a byte that
// is not valid UTF-8 matches nothing) and its bytes are kept as they are
// outside what is replaced. Shared cases: test/fixtures/secret-redaction.json.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

namespace loadgen {

class SecretRedactor {
 public:
  static constexpr size_t kMinRun = 8;
  static constexpr const char* kRedacted = "<redacted>";

  SecretRedactor() = default;
  // Empty secrets and repeats are dropped, as Secrets.add() does.
  explicit SecretRedactor(const std::vector<std::u16string>& secrets);

  bool empty() const { return count_ == 0; }
  // How many distinct secrets it hides.
  size_t size() const { return count_; }

  // `text` (UTF-8) with the secrets' runs replaced.
  std::string redact(const std::string& text) const;

 private:
  // Eight UTF-16 code units, exactly (16 bits each): a window's identity.
  struct Window {
    uint64_t high = 0;
    uint64_t low = 0;
    bool operator==(const Window& o) const { return high == o.high && low == o.low; }
    void push(char16_t unit) {
      high = (high << 16) | (low >> 48);
      low = (low << 16) | unit;
    }
  };
  struct WindowHash {
    size_t operator()(const Window& w) const {
      return static_cast<size_t>(w.high * 0x9e3779b97f4a7c15ULL ^ (w.low + 0x7f4a7c159e3779b9ULL + (w.high << 6)));
    }
  };

  std::string redact_runs(const std::string& text) const;

  size_t count_ = 0;
  std::unordered_set<Window, WindowHash> windows_;
  // Secrets shorter than a window, as UTF-8, longest first (ties in the
  // order given, as a stable sort leaves them).
  std::vector<std::string> short_;
};

// UTF-8 to UTF-16 code units (tests, and hosts that hold UTF-8); a byte
// that is not valid UTF-8 becomes U+FFFD.
std::u16string utf16_of(const std::string& utf8);

}  // namespace loadgen

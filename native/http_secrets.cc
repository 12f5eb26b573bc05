// SecretRedactor (http_secrets.h): the same matching as lib/net/secrets.ts,
// runs of windows merged where they overlap or touch, then short secrets
// replaced whole. Used on the failure path only (a response with an error
// status): it allocates freely.
#include "http_secrets.h"

#include <algorithm>

namespace loadgen {

namespace {

// One UTF-16 code unit of a decoded text and the bytes of the character it
// belongs to (both halves of a surrogate pair have the whole character's).
struct Unit {
  char16_t value;
  bool valid;  // false: a byte that is not UTF-8, which matches nothing
  uint32_t begin;
  uint32_t end;
};

bool continuation(unsigned char b) { return (b & 0xC0) == 0x80; }

// Decodes `text` strictly (no overlong forms, no surrogates, <= U+10FFFF).
std::vector<Unit> decode(const std::string& text) {
  std::vector<Unit> units;
  units.reserve(text.size());
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char b = s[i];
    uint32_t cp = 0;
    size_t len = 0;
    uint32_t least = 0;
    if (b < 0x80) {
      cp = b, len = 1;
    } else if (b >= 0xC2 && b <= 0xDF) {
      cp = b & 0x1F, len = 2, least = 0x80;
    } else if (b >= 0xE0 && b <= 0xEF) {
      cp = b & 0x0F, len = 3, least = 0x800;
    } else if (b >= 0xF0 && b <= 0xF4) {
      cp = b & 0x07, len = 4, least = 0x10000;
    }
    bool ok = len > 0 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k) {
      if (!continuation(s[i + k])) ok = false;
      else cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if (ok && len > 1 && (cp < least || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) ok = false;
    const auto begin = static_cast<uint32_t>(i);
    if (!ok) {
      units.push_back(Unit{0xFFFD, false, begin, begin + 1});
      ++i;
      continue;
    }
    const auto end = static_cast<uint32_t>(i + len);
    if (cp < 0x10000) {
      units.push_back(Unit{static_cast<char16_t>(cp), true, begin, end});
    } else {
      cp -= 0x10000;
      units.push_back(Unit{static_cast<char16_t>(0xD800 + (cp >> 10)), true, begin, end});
      units.push_back(Unit{static_cast<char16_t>(0xDC00 + (cp & 0x3FF)), true, begin, end});
    }
    i += len;
  }
  return units;
}

// UTF-16 to UTF-8; false when `units` has a lone surrogate (no UTF-8 text
// holds one: such a secret cannot occur in a message).
bool utf8_of(const std::u16string& units, std::string* out) {
  out->clear();
  for (size_t i = 0; i < units.size(); ++i) {
    uint32_t cp = units[i];
    if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < units.size() && units[i + 1] >= 0xDC00 && units[i + 1] <= 0xDFFF) {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (units[++i] - 0xDC00);
    } else if (cp >= 0xD800 && cp <= 0xDFFF) {
      return false;
    }
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
  return true;
}

}  // namespace

SecretRedactor::SecretRedactor(const std::vector<std::u16string>& secrets) {
  std::unordered_set<std::u16string> seen;
  std::vector<std::u16string> shorter;
  for (const std::u16string& secret : secrets) {
    if (secret.empty() || !seen.insert(secret).second) continue;
    ++count_;
    if (secret.size() < kMinRun) {
      shorter.push_back(secret);
      continue;
    }
    Window w;
    for (size_t i = 0; i < secret.size(); ++i) {
      w.push(secret[i]);
      if (i + 1 >= kMinRun) windows_.insert(w);
    }
  }
  // Longest first: a short secret inside another is not left half shown.
  std::stable_sort(shorter.begin(), shorter.end(),
                   [](const std::u16string& a, const std::u16string& b) { return a.size() > b.size(); });
  std::string utf8;
  for (const std::u16string& secret : shorter)
    if (utf8_of(secret, &utf8)) short_.push_back(utf8);
}

std::string SecretRedactor::redact(const std::string& text) const {
  if (count_ == 0) return text;
  std::string out = windows_.empty() ? text : redact_runs(text);
  for (const std::string& secret : short_) {
    // Every occurrence, left to right, none overlapping (String.split/join).
    size_t at = out.find(secret);
    if (at == std::string::npos) continue;
    std::string replaced;
    size_t copied = 0;
    for (; at != std::string::npos; at = out.find(secret, copied)) {
      replaced.append(out, copied, at - copied);
      replaced += kRedacted;
      copied = at + secret.size();
    }
    replaced.append(out, copied, std::string::npos);
    out.swap(replaced);
  }
  return out;
}

std::string SecretRedactor::redact_runs(const std::string& text) const {
  const std::vector<Unit> units = decode(text);
  if (units.size() < kMinRun) return text;
  std::string out;
  size_t copied = 0;  // text's bytes [0, copied) are in `out` already
  // The run being grown, in units: windows that overlap or touch join it.
  size_t run_start = 0, run_end = 0;
  bool in_run = false;
  auto flush = [&] {
    out.append(text, copied, units[run_start].begin - copied);
    out += kRedacted;
    copied = units[run_end - 1].end;
  };
  Window w;
  size_t valid_from = 0;  // the first unit after the last invalid one
  for (size_t j = 0; j < units.size(); ++j) {
    w.push(units[j].value);
    if (!units[j].valid) valid_from = j + 1;
    if (j + 1 < kMinRun) continue;
    const size_t i = j + 1 - kMinRun;  // the window's first unit
    if (i < valid_from || windows_.count(w) == 0) continue;
    if (in_run && i <= run_end) {
      run_end = i + kMinRun;
    } else {
      if (in_run) flush();
      in_run = true;
      run_start = i;
      run_end = i + kMinRun;
    }
  }
  if (!in_run) return text;
  flush();
  out.append(text, copied, std::string::npos);
  return out;
}

std::u16string utf16_of(const std::string& utf8) {
  std::u16string out;
  for (const Unit& u : decode(utf8)) out.push_back(u.value);
  return out;
}

}  // namespace loadgen

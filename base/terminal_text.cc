#include "base/terminal_text.h"

#include <cstdint>
#include <cstdio>

namespace odin {
namespace {

// Decodes the UTF-8 sequence at text[i]: its code point and length, or a
// length of 0 if the bytes there are not UTF-8 (overlong forms, surrogates and
// truncated sequences included).
size_t DecodeUtf8(std::string_view text, size_t i, uint32_t* cp) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char b = byte(i);
  if (b < 0x80) {
    *cp = b;
    return 1;
  }
  size_t len = (b & 0xe0) == 0xc0 ? 2 : (b & 0xf0) == 0xe0 ? 3 : (b & 0xf8) == 0xf0 ? 4 : 0;
  if (len == 0 || i + len > text.size()) return 0;
  uint32_t c = b & (0xff >> (len + 1));
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    c = (c << 6) | (byte(i + k) & 0x3f);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < kMin[len] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
  *cp = c;
  return len;
}

bool IsBidiControl(uint32_t c) {
  return c == 0x061c || c == 0x200e || c == 0x200f || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

void AppendHex(std::string* out, const char* format, unsigned value) {
  char buf[16];
  snprintf(buf, sizeof buf, format, value);
  *out += buf;
}

}  // namespace

std::string VisibleControls(std::string_view text, Layout layout) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    uint32_t c = 0;
    size_t len = DecodeUtf8(text, i, &c);
    if (len == 0) {  // not UTF-8: the byte, in hex
      AppendHex(&out, "\\x%02x", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if (c == '\n' || c == '\t') {
      if (layout == Layout::kKeep)
        out += static_cast<char>(c);
      else
        out += c == '\n' ? "\\n" : "\\t";
    } else if (c == 0) {
      out += "\\0";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      AppendHex(&out, "\\x%02x", c);
    } else if ((c >= 0x80 && c <= 0x9f) || IsBidiControl(c)) {
      AppendHex(&out, "\\u%04x", c);
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

std::string_view CutAtCharacter(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  // Back up over continuation bytes to the start of the character cut.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) --end;
  return text.substr(0, end);
}

std::string JsonForTerminal(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size();) {
    uint32_t c = 0;
    size_t len = DecodeUtf8(json, i, &c);
    if (len == 0) len = 1;  // not expected in valid JSON; passed through
    if (len > 0 && (c == 0x7f || (c >= 0x80 && c <= 0x9f) || IsBidiControl(c))) {
      AppendHex(&out, "\\u%04x", c);
    } else {
      out.append(json.substr(i, len));
    }
    i += len;
  }
  return out;
}

}  // namespace odin

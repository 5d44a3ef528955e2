#include "tools/text_file.h"

#include <algorithm>
#include <cstring>

#include "base/canonical_json.h"

namespace odin {

bool LooksBinary(std::string_view bytes) {
  return memchr(bytes.data(), '\0', std::min<size_t>(bytes.size(), 8192)) != nullptr;
}

bool UsesCrlf(std::string_view text) {
  size_t crlf = 0, lf = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++lf;
      if (i > 0 && text[i - 1] == '\r') ++crlf;
    }
  }
  return crlf > 0 && crlf == lf;
}

LineIndex::LineIndex(std::string_view text) : size_(text.size()) {
  if (text.empty()) return;
  starts_.push_back(0);
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] == '\n') starts_.push_back(i + 1);
  }
}

uint32_t LineIndex::LineOf(size_t offset) const {
  auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
  return static_cast<uint32_t>(it - starts_.begin());
}

std::string ToDisplayText(std::string_view bytes) {
  if (IsValidUtf8(bytes)) return std::string(bytes);
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    // Take the longest valid sequence at i (1 to 4 bytes), else one bad byte.
    size_t len = 0;
    for (size_t n = 1; n <= 4 && i + n <= bytes.size(); ++n) {
      if (IsValidUtf8(bytes.substr(i, n))) {
        len = n;
        break;
      }
    }
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(bytes.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace odin

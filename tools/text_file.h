#pragma once
// Text files as the file tools see them: bytes split into lines (a line keeps
// its terminator, "\n" or "\r\n"), binary detection, and line-number
// arithmetic. Bytes are never changed: a file that is not UTF-8 or uses CRLF
// comes back byte for byte.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace odin {

// Files larger than this are refused by the file tools (and their cache).
constexpr uint64_t kMaxFileBytes = 10u << 20;

// True iff the bytes look binary: a NUL byte in the first 8 KiB.
bool LooksBinary(std::string_view bytes);

// True iff the text ends its lines with "\r\n" (and never with a bare "\n").
bool UsesCrlf(std::string_view text);

class LineIndex {
 public:
  explicit LineIndex(std::string_view text);
  // Number of lines; a last line without terminator counts, an empty text has 0.
  uint32_t lines() const { return static_cast<uint32_t>(starts_.size()); }
  // Byte offset where line n (1-based) starts; n == lines()+1 gives the size.
  size_t Start(uint32_t n) const { return n <= lines() ? starts_[n - 1] : size_; }
  // The 1-based line holding byte offset.
  uint32_t LineOf(size_t offset) const;

 private:
  std::vector<size_t> starts_;
  size_t size_;
};

// Text for the model: invalid UTF-8 replaced by U+FFFD, so it can travel as a
// JSON string. Valid text comes back unchanged.
std::string ToDisplayText(std::string_view bytes);

}  // namespace odin

#pragma once
// OutputCapture: keeps the first and the last bytes of a stream of output and
// counts all of it, in bounded memory however much is written.
//
// Thread-safety: none.

#include <cstdint>
#include <string>
#include <string_view>

namespace odin {

class OutputCapture {
 public:
  OutputCapture(size_t head_limit, size_t tail_limit) : head_limit_(head_limit), tail_limit_(tail_limit) {}

  void Append(std::string_view data);

  // The first min(total, head_limit) bytes.
  const std::string& head() const { return head_; }
  // The last bytes after the head, at most tail_limit of them; empty when the
  // head holds everything.
  std::string tail() const;
  // Everything ever appended, in bytes.
  uint64_t total() const { return total_; }
  // True iff head and tail together hold the whole output.
  bool complete() const { return total_ <= head_limit_ + tail_limit_; }

 private:
  size_t head_limit_;
  size_t tail_limit_;
  std::string head_;
  std::string tail_;  // grows to 2 * tail_limit_, then is trimmed to the last tail_limit_
  uint64_t total_ = 0;
};

}  // namespace odin

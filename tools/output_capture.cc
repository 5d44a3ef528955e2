#include "tools/output_capture.h"

namespace odin {

void OutputCapture::Append(std::string_view data) {
  total_ += data.size();
  if (head_.size() < head_limit_) {
    size_t take = std::min(head_limit_ - head_.size(), data.size());
    head_.append(data.substr(0, take));
    data.remove_prefix(take);
  }
  if (data.empty() || tail_limit_ == 0) return;
  if (data.size() >= tail_limit_) {
    tail_.assign(data.substr(data.size() - tail_limit_));
    return;
  }
  tail_.append(data);
  // Trim only when twice the limit, so appends stay amortized O(size).
  if (tail_.size() > 2 * tail_limit_) tail_.erase(0, tail_.size() - tail_limit_);
}

std::string OutputCapture::tail() const {
  if (tail_.size() <= tail_limit_) return tail_;
  return tail_.substr(tail_.size() - tail_limit_);
}

}  // namespace odin

#include "llm/sse_parser.h"

namespace odin {

void SseParser::Feed(std::string_view bytes) {
  if (overflowed_) return;
  if (line_.size() + current_.data.size() + bytes.size() > kMaxEventBytes) {
    // (A piece that only might cross it is looked at closely.)
    size_t nl = bytes.rfind('\n');
    if (nl == std::string_view::npos || line_.size() + current_.data.size() + nl > kMaxEventBytes) {
      overflowed_ = true;
      line_.clear();
      current_ = SseEvent();
      return;
    }
  }
  for (char c : bytes) {
    if (c == '\n') {
      if (!line_.empty() && line_.back() == '\r') line_.pop_back();
      Line(line_);
      line_.clear();
    } else {
      line_ += c;
    }
  }
}

void SseParser::Line(std::string_view line) {
  if (line.empty()) {
    current_.id = last_id_;
    if (has_data_ || !current_.event.empty()) on_event_(current_);
    current_ = SseEvent();
    has_data_ = false;
    return;
  }
  if (line[0] == ':') return;  // a comment (keep-alive)
  size_t colon = line.find(':');
  std::string_view field = line.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
  if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  if (field == "data") {
    if (has_data_) current_.data += '\n';
    current_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    current_.event = std::string(value);
  } else if (field == "id" && value.find('\0') == std::string_view::npos) {
    last_id_ = std::string(value);
  }
}

}  // namespace odin

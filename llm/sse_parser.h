#pragma once
// Server-sent events, as both model APIs stream them: "event:" and "data:"
// lines, an event ending at a blank line. Fed bytes as they arrive, in pieces
// of any size.

#include <functional>
#include <string>
#include <string_view>

namespace odin {

struct SseEvent {
  std::string event;  // "" if the server named none
  std::string data;   // data lines joined with "\n"
  std::string id;     // the last event id the stream set ("id:"), kept across events
};

class SseParser {
 public:
  explicit SseParser(std::function<void(const SseEvent&)> on_event) : on_event_(std::move(on_event)) {}
  void Feed(std::string_view bytes);
  // True iff bytes of an unfinished event are pending (a cut-off stream).
  bool pending() const { return !line_.empty() || !current_.data.empty() || !current_.event.empty(); }
  // An event (or a line) grew past kMaxEventBytes: it and all that follows
  // are dropped.
  bool overflowed() const { return overflowed_; }
  static constexpr size_t kMaxEventBytes = 64u << 20;

 private:
  void Line(std::string_view line);
  std::function<void(const SseEvent&)> on_event_;
  std::string line_;
  SseEvent current_;
  std::string last_id_;
  bool has_data_ = false;
  bool overflowed_ = false;
};

}  // namespace odin

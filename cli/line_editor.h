#pragma once
// The interactive session's input line, on a terminal: libedit (emacs keys,
// history kept per workspace, tab completion of slash commands and of the
// workspace's paths), fed by the session's own poll loop rather than by
// blocking reads, so the agent keeps working, and printing, while the user
// types.
//
// Bytes from the terminal pass through Feed before libedit sees them:
//   - a bracketed paste ("\e[200~" ... "\e[201~") of several lines becomes
//     one placeholder ("[pasted 12 lines #1]") that ReadLine expands, so a
//     pasted block is one message, never one per line;
//   - a lone Esc (no byte follows within 40 ms) is not a meta prefix: it
//     goes to on_escape (the session interrupts the turn);
//   - UTF-8 is decoded here (libedit reads wide characters).
// Output printed while a line is being edited goes through Print, which
// clears the line, prints, and has libedit draw the prompt and the line
// again below it.

#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "base/clock.h"

struct editline;
struct history;

namespace odin {

class LineEditor {
 public:
  struct Options {
    std::string history_path;             // "" keeps no history
    std::string workspace;                // paths complete below it
    std::vector<std::string> commands;    // slash commands, for completion ("/help", ...)
    std::function<std::string()> prompt;  // asked at each redraw
    // Runs the session until something happens (at most max_wait):
    // stdin's bytes reach Feed or FeedEof.
    std::function<void(Duration max_wait)> pump;
    std::function<void()> on_escape;  // a lone Esc
  };
  explicit LineEditor(Options options);
  ~LineEditor();
  LineEditor(const LineEditor&) = delete;
  LineEditor& operator=(const LineEditor&) = delete;

  // The next line (pastes expanded, without its newline), or false at the
  // end of input (Ctrl-D on an empty line, stdin closed) or after Leave.
  bool ReadLine(std::string* line);
  // Adds a message to the history (and saves it).
  void Remember(const std::string& entry);
  // Prints text (whole lines) above the line being edited.
  void Print(const std::string& text);
  // Draws the prompt again (its text changed).
  void Redraw() { redraw_due_ = true; }
  // ReadLine returns false as soon as it can.
  void Leave() { leave_ = true; }

  // The terminal's bytes, as they arrive; the end of input.
  void Feed(const char* data, size_t size);
  void FeedEof() { eof_ = true; }
  // When Feed holds a possible lone Esc, the session's next poll must come
  // by this time (SteadyTime::max() if none).
  SteadyTime EscapeDeadline() const;
  void CheckEscape(SteadyTime now);

  // For libedit's callbacks.
  int GetChar(wchar_t* out);
  std::string Prompt() const;
  unsigned char Complete();

 private:
  void ProcessRaw();
  void Paste(const std::string& text);
  std::string ExpandPastes(const std::string& line) const;

  Options o_;
  editline* el_ = nullptr;
  history* hist_ = nullptr;
  std::string raw_;   // bytes not yet sorted (an escape sequence may be incomplete)
  std::string keys_;  // bytes for libedit, in order
  bool in_paste_ = false;
  std::string paste_;                // the paste so far
  std::vector<std::string> pastes_;  // multi-line pastes, by number - 1
  SteadyTime escape_since_{};        // when a lone ESC arrived (if raw_ is "\e")
  bool redraw_due_ = false;
  bool eof_ = false;
  bool leave_ = false;
  bool reading_ = false;  // inside ReadLine
};

// Where the workspace's input history lives:
// $XDG_STATE_HOME/odin/history/<hash of the workspace's path> ("" if there
// is no state directory).
std::string HistoryPath(const std::string& workspace);

}  // namespace odin

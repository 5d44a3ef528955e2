#pragma once
// Terminal text: what commands and models wrote, made safe to print on the
// user's terminal.
//
// Recorded output and arguments are someone else's bytes. Printed raw, an
// escape sequence can clear the screen, move the cursor, retitle the window
// or rewrite what an earlier line said, and a bidi override can make a
// command read differently from what runs. So every control character is
// shown as text instead: C0 controls (NUL as \0, CR as \r, ESC as \x1b, the
// others and DEL as \xNN), C1 controls (U+0080..U+009F as \u0080..\u009f),
// the bidi controls (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069
// as \u202e and so on), and bytes that are not UTF-8 (\xNN). Backslashes are
// left alone: this is for people to read, not to decode.
//
// Thread-safety: pure functions.

#include <string>
#include <string_view>

namespace odin {

enum class Layout {
  kKeep,     // newline and tab stay (multi-line output)
  kOneLine,  // newline and tab shown as \n and \t too
};

// Returns text with its control characters made visible (see above).
std::string VisibleControls(std::string_view text, Layout layout = Layout::kKeep);

// Returns the first at most max_bytes bytes of text, cut at a character
// boundary (never inside a UTF-8 sequence).
std::string_view CutAtCharacter(std::string_view text, size_t max_bytes);

// A JSON document as printed for a terminal: JSON escapes control characters
// below U+0020 already; this also escapes DEL, the C1 controls and the bidi
// controls (as \u007f, \u009b, \u202e, ...), which JSON allows raw. The
// document means the same. REQUIRES: json is valid JSON in UTF-8.
std::string JsonForTerminal(std::string_view json);

}  // namespace odin

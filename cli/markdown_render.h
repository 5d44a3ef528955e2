#pragma once
// The model's markdown, rendered for a terminal.
//
// The text is parsed with cmark-gfm (CommonMark plus the GFM table,
// strikethrough and autolink extensions) and drawn line by line: headings,
// emphasis, code, links, lists, block quotes, thematic breaks and tables.
// With color, styles are SGR escape sequences; without (NO_COLOR, a pipe),
// the layout is the same and the output holds no escape sequence at all:
// headings keep their "#" marks and inline markup keeps markdown's markers
// (*emphasis*, **strong**, `code`, ~~struck~~), so the text reads as written.
//
// The model's text is untrusted: every control character in it (ESC, the
// other C0 controls but newline and tab, DEL, C1, bidi controls, bytes that
// are not UTF-8) is shown as text (base/terminal_text.h's VisibleControls),
// never sent raw. Rendering walks the tree with cmark's iterator (no
// recursion) and indents at most a fixed number of nesting levels, so deeply
// nested input costs time and output linear in its size.
//
// Thread-safety: pure functions.

#include <cstddef>
#include <string>
#include <string_view>

namespace odin {

struct RenderStyle {
  bool color = true;  // SGR escape sequences; false: plain text
  int width = 80;     // columns paragraphs wrap at; <= 0: no wrapping
};

// Returns markdown rendered for a terminal: lines that each end in "\n", no
// blank line first or last ("" for blank input). Paragraphs and headings wrap
// at style.width (a word longer than a line stays whole); code blocks and
// tables never wrap.
std::string RenderMarkdown(std::string_view markdown, const RenderStyle& style);

// For streamed text: returns the length of the prefix made of complete
// top-level blocks, which can be rendered now; the rest (a paragraph, list
// or table still arriving, an open code fence) waits for more text. The
// prefix ends at a blank line outside any fenced code block once the next
// line has begun at its first column: until then the blank line may sit
// inside a list item whose next paragraph or code block is indented. Returns
// 0 when no such point exists yet. Fences are recognized at any indentation
// (inside list items they are indented); line ends may be "\n" or "\r\n".
// Render each prefix on its own and separate consecutive non-empty renders
// with an empty line: the result matches rendering the whole text, except
// that a loose list's items render as separate lists and reference links
// whose definition comes in a later block stay unresolved.
size_t CompleteBlocksPrefix(std::string_view streamed);

}  // namespace odin

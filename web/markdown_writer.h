#pragma once
// MarkdownWriter: Markdown text being written, for HtmlToMarkdown.
//
// Inline text goes into the current paragraph with whitespace collapsed as a
// browser collapses it; blocks end paragraphs and ask for a newline or a
// blank line before the next; lines are written under a stack of prefixes
// (blockquote "> ", a list item's marker then its indentation). Inline
// markers ("**", "[") are held until content follows them, so an element
// with nothing in it writes nothing. The output stops at a byte limit.
//
// Thread-safety: none; one writer per conversion.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace odin {

class MarkdownWriter {
 public:
  explicit MarkdownWriter(size_t max_output);

  // Whether the output has reached its limit: nothing more is written.
  bool full() const { return out_.size() + para_.size() >= max_; }
  // Bytes left before the limit.
  size_t room() const { return full() ? 0 : max_ - out_.size() - para_.size(); }

  // Inline text: whitespace runs become one space, none at line starts.
  void Text(std::string_view text);
  // A space, as whitespace in Text would be.
  void Space() { space_ = true; }
  // Inline content written as it is (an image, a code span, a rule).
  void Put(std::string_view s);
  // Opens an inline marker ("**", "[", "## "): written with the next
  // content.
  void Open(std::string_view marker) { open_ += marker; }
  // Closes what Open(marker) opened by writing `closing`, or takes the
  // marker back if nothing was written since.
  void Close(std::string_view marker, std::string_view closing);
  // <br>: a new line within the paragraph (none at its start).
  void LineBreak();
  // Ends the paragraph; the next line comes after a newline (lines = 1) or
  // a blank line (lines = 2).
  void Break(int lines);
  // Lines written as they are (a code block, a table), after the paragraph.
  void Lines(std::string_view text);
  // A prefix for the lines of a block: `first` on its first line, `rest` on
  // the others (and, trimmed, on the blank lines within it).
  void PushPrefix(std::string first, std::string rest);
  void PopPrefix();

  // The Markdown, ending in one newline (or empty), at most max_output
  // bytes, cut at a UTF-8 character boundary.
  std::string Finish();

 private:
  struct Prefix {
    std::string first;
    std::string rest;
    bool started = false;  // its first line is written
  };

  // How much may still be appended: up to the limit plus the three bytes a
  // UTF-8 character can have past it, so Finish can cut at a boundary.
  size_t Slack() const;
  void Flush();
  void EmitLine(std::string_view line);

  size_t max_;
  std::string out_;     // finished lines
  std::string para_;    // the paragraph being written; '\n' at <br>
  std::string open_;    // markers opened, not yet written
  bool space_ = false;  // a space is due before the next content
  int separation_ = 0;  // newlines due before the next line
  std::vector<Prefix> prefixes_;
};

}  // namespace odin

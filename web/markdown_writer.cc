#include "web/markdown_writer.h"

#include <algorithm>
#include <cstdint>

namespace odin {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

}  // namespace

// The limit is kept well under SIZE_MAX so that the slack cannot overflow.
MarkdownWriter::MarkdownWriter(size_t max_output) : max_(std::min<size_t>(max_output, SIZE_MAX / 2)) {}

void MarkdownWriter::Text(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    if (IsSpace(text[i])) {
      space_ = true;
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && !IsSpace(text[end])) ++end;
    Put(text.substr(i, end - i));
    i = end;
  }
}

void MarkdownWriter::Put(std::string_view s) {
  if (Slack() == 0 || s.empty()) return;
  if (space_ && !para_.empty() && para_.back() != '\n') para_ += ' ';
  space_ = false;
  para_ += open_;
  open_.clear();
  para_.append(s.substr(0, Slack()));
}

void MarkdownWriter::Close(std::string_view marker, std::string_view closing) {
  if (open_.size() >= marker.size() && open_.compare(open_.size() - marker.size(), marker.size(), marker) == 0) {
    open_.resize(open_.size() - marker.size());
    return;
  }
  para_.append(closing.substr(0, Slack()));
}

void MarkdownWriter::LineBreak() {
  if (para_.empty() || para_.back() == '\n' || Slack() == 0) return;
  para_ += '\n';
  space_ = false;
}

void MarkdownWriter::Break(int lines) {
  Flush();
  separation_ = std::max(separation_, lines);
}

void MarkdownWriter::Lines(std::string_view text) {
  Flush();
  size_t start = 0;
  while (start <= text.size() && !full()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    EmitLine(text.substr(start, nl - start));
    start = nl + 1;
  }
}

void MarkdownWriter::PushPrefix(std::string first, std::string rest) {
  Flush();
  prefixes_.push_back({std::move(first), std::move(rest)});
}

void MarkdownWriter::PopPrefix() {
  Flush();
  prefixes_.pop_back();
}

std::string MarkdownWriter::Finish() {
  Flush();
  if (out_.size() > max_) {
    // Cut before the character that crosses the limit (the slack holds its
    // continuation bytes, so they can be told apart).
    size_t cut = max_;
    while (cut > 0 && (static_cast<unsigned char>(out_[cut]) & 0xC0) == 0x80) --cut;
    out_.resize(cut);
  } else if (!out_.empty() && out_.size() < max_) {
    out_ += '\n';
  }
  return std::move(out_);
}

size_t MarkdownWriter::Slack() const {
  size_t used = out_.size() + para_.size();
  return used >= max_ + 3 ? 0 : max_ + 3 - used;
}

void MarkdownWriter::Flush() {
  open_.clear();
  space_ = false;
  std::string para = std::move(para_);
  para_.clear();
  while (!para.empty() && (para.back() == ' ' || para.back() == '\n')) para.pop_back();
  if (para.empty()) return;
  size_t start = 0;
  while (start <= para.size()) {
    size_t nl = para.find('\n', start);
    if (nl == std::string::npos) nl = para.size();
    EmitLine(std::string_view(para).substr(start, nl - start));
    start = nl + 1;
  }
}

void MarkdownWriter::EmitLine(std::string_view line) {
  if (out_.size() >= max_) return;
  if (!out_.empty()) {
    out_ += '\n';
    if (separation_ >= 2) {
      // A blank line keeps the prefixes of the blocks it is inside.
      std::string blank;
      for (const Prefix& p : prefixes_) {
        if (p.started) blank += p.rest;
      }
      while (!blank.empty() && blank.back() == ' ') blank.pop_back();
      out_ += blank;
      out_ += '\n';
    }
  }
  separation_ = 0;
  for (Prefix& p : prefixes_) {
    out_ += p.started ? p.rest : p.first;
    p.started = true;
  }
  out_.append(line.substr(0, Slack()));
}

}  // namespace odin

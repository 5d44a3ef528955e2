#include "tools/edit_apply.h"

#include <algorithm>

#include "tools/text_file.h"

namespace odin {
namespace {

// Bytes the agent has not read: [begin, end) in the current text, and where
// they began in the original file (for messages, which must name lines of
// the file on disk).
struct Interval {
  size_t first;
  size_t second;
  size_t original;
};

// "\n" without a preceding "\r" becomes "\r\n".
std::string ToCrlf(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r')) out += '\r';
    out += s[i];
  }
  return out;
}

// Byte intervals of the lines not covered by read ranges, merged.
std::vector<Interval> UnreadIntervals(std::string_view text, const ReadCoverage& read) {
  std::vector<Interval> out;
  if (read.full) return out;
  LineIndex index(text);
  std::vector<bool> covered(index.lines() + 2, false);
  for (auto [start, end] : read.ranges) {
    for (uint32_t l = std::max<uint32_t>(start, 1); l <= end && l <= index.lines(); ++l) covered[l] = true;
  }
  for (uint32_t l = 1; l <= index.lines(); ++l) {
    if (covered[l]) continue;
    size_t b = index.Start(l), e = index.Start(l + 1);
    if (!out.empty() && out.back().second == b) {
      out.back().second = e;
    } else {
      out.push_back({b, e, b});
    }
  }
  return out;
}

// Occurrences, overlapping ones included: "}\n}" occurs twice in "}\n}\n}".
size_t CountOverlapping(std::string_view text, std::string_view needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string_view::npos; pos = text.find(needle, pos + 1)) ++n;
  return n;
}

std::vector<size_t> FindAll(std::string_view text, std::string_view needle) {
  std::vector<size_t> at;
  for (size_t pos = text.find(needle); pos != std::string_view::npos; pos = text.find(needle, pos + needle.size())) {
    at.push_back(pos);
  }
  return at;
}

std::string LineList(const LineIndex& index, const std::vector<size_t>& at) {
  std::string out;
  for (size_t i = 0; i < at.size() && i < 10; ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(index.LineOf(at[i]));
  }
  if (at.size() > 10) out += ", ...";
  return out;
}

EditOutcome Failed(EditFailure kind, std::string message) {
  EditOutcome o;
  o.failure = kind;
  o.message = std::move(message);
  return o;
}

}  // namespace

std::string DescribeRanges(const std::vector<std::pair<uint32_t, uint32_t>>& ranges) {
  std::string out = "lines ";
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(ranges[i].first);
    if (ranges[i].second != ranges[i].first) out += "-" + std::to_string(ranges[i].second);
  }
  return ranges.empty() ? "no lines" : out;
}

EditOutcome ApplyEdits(std::string_view original, const std::vector<EditSpec>& edits, const ReadCoverage& read,
                       const std::string& path) {
  bool crlf = UsesCrlf(original);
  std::string content(original);
  std::vector<Interval> unread = UnreadIntervals(original, read);
  int replacements = 0;

  for (size_t i = 0; i < edits.size(); ++i) {
    std::string which = edits.size() > 1 ? "edit " + std::to_string(i + 1) + ": " : "";
    std::string old_s = crlf ? ToCrlf(edits[i].old_string) : edits[i].old_string;
    std::string new_s = crlf ? ToCrlf(edits[i].new_string) : edits[i].new_string;
    if (old_s.empty()) {
      return Failed(EditFailure::kEmptyOldString,
                    which + "old_string is empty; to create or replace a whole file use WriteFile");
    }
    if (old_s == new_s) {
      return Failed(EditFailure::kIdentical, which + "old_string and new_string are identical; nothing would change");
    }
    std::vector<size_t> at = FindAll(content, old_s);
    LineIndex index(content);
    if (at.empty()) {
      return Failed(EditFailure::kNotFound, which + "old_string not found in " + path +
                                                "; it must match the file exactly, whitespace included");
    }
    size_t count = at.size() > 1 ? at.size() : CountOverlapping(content, old_s);
    if (count > 1 && !edits[i].replace_all) {
      if (at.size() == 1) at = {at[0], content.find(old_s, at[0] + 1)};
      return Failed(EditFailure::kAmbiguous, which + "old_string matches " + std::to_string(count) + " times in " +
                                                 path + " (lines " + LineList(index, at) +
                                                 (i > 0 ? ", counted after the earlier edits of this call" : "") +
                                                 "); add surrounding lines to make it unique, or set replace_all");
    }
    LineIndex original_index(original);
    for (size_t pos : at) {
      for (const Interval& u : unread) {
        if (pos < u.second && u.first < pos + old_s.size()) {
          // Name the unread lines as they are numbered in the file on disk.
          size_t begin = u.original + (std::max(pos, u.first) - u.first);
          size_t end = u.original + (std::min(pos + old_s.size(), u.second) - u.first);
          uint32_t first = original_index.LineOf(begin), last = original_index.LineOf(end - 1);
          uint32_t from = first > 3 ? first - 3 : 1;
          uint32_t to = std::min(last + 3, original_index.lines());
          return Failed(EditFailure::kOutsideRead,
                        which + "old_string is at line" +
                            (first == last ? " " + std::to_string(first)
                                           : "s " + std::to_string(first) + "-" + std::to_string(last)) +
                            " of " + path + ", which you have not read (you read " + DescribeRanges(read.ranges) +
                            "). Read lines " + std::to_string(from) + "-" + std::to_string(to) +
                            " first (Read with offset=" + std::to_string(from) +
                            " limit=" + std::to_string(to - from + 1) + "), then retry");
        }
      }
    }
    // Replace, and move the unread intervals with the text around them.
    std::string next;
    next.reserve(content.size() + at.size() * (new_s.size() + 1));
    size_t cursor = 0;
    for (size_t pos : at) {
      next.append(content, cursor, pos - cursor);
      next += new_s;
      cursor = pos + old_s.size();
    }
    next.append(content, cursor, std::string::npos);
    for (Interval& u : unread) {
      long shift = 0;
      for (size_t pos : at) {
        if (pos + old_s.size() <= u.first) shift += static_cast<long>(new_s.size()) - static_cast<long>(old_s.size());
      }
      u.first = static_cast<size_t>(static_cast<long>(u.first) + shift);
      u.second = static_cast<size_t>(static_cast<long>(u.second) + shift);
    }
    content = std::move(next);
    replacements += static_cast<int>(at.size());
  }

  EditOutcome o;
  o.replacements = replacements;
  // The changed lines: between the common prefix and the common suffix.
  size_t prefix = 0;
  while (prefix < content.size() && prefix < original.size() && content[prefix] == original[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < content.size() - prefix && suffix < original.size() - prefix &&
         content[content.size() - 1 - suffix] == original[original.size() - 1 - suffix]) {
    ++suffix;
  }
  LineIndex after(content);
  if (after.lines() > 0) {
    o.first_changed_line = after.LineOf(std::min(prefix, content.size() - 1));
    size_t last = content.size() - suffix;
    o.last_changed_line = after.LineOf(last > 0 ? last - 1 : 0);
    if (o.last_changed_line < o.first_changed_line) o.last_changed_line = o.first_changed_line;
  }
  o.content = std::move(content);
  return o;
}

}  // namespace odin

#include "tools/unified_diff.h"

#include <utility>

#include <dtl/dtl.hpp>

#include <vector>

#include "tools/text_file.h"

namespace odin {
namespace {

constexpr size_t kContext = 3;
constexpr double kMaxDiffCells = 25e6;  // changed lines before x after

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    lines.emplace_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

// The numbers of leading and trailing lines a and b share (not overlapping).
std::pair<size_t, size_t> CommonEnds(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  return {prefix, suffix};
}

}  // namespace

DiffResult UnifiedDiff(std::string_view before, std::string_view after, const std::string& label) {
  DiffResult out;
  if (before == after) return out;
  std::vector<std::string> a = SplitLines(before), b = SplitLines(after);
  // Only the region between the common prefix and suffix needs the diff
  // algorithm; keep the context lines around it.
  auto [prefix, suffix] = CommonEnds(a, b);
  size_t lead = prefix > kContext ? prefix - kContext : 0;
  size_t tail = suffix > kContext ? suffix - kContext : 0;
  std::vector<std::string> ma(a.begin() + static_cast<long>(lead), a.end() - static_cast<long>(tail));
  std::vector<std::string> mb(b.begin() + static_cast<long>(lead), b.end() - static_cast<long>(tail));

  out.text = "--- a/" + label + "\n+++ b/" + label + "\n";
  if (static_cast<double>(ma.size()) * static_cast<double>(mb.size()) > kMaxDiffCells) {
    // dtl's cost grows with the product of the changed regions: a rewrite of
    // a large file is summarized rather than diffed line by line.
    out.removed = static_cast<int>(ma.size() - std::min(ma.size(), lead == 0 ? prefix : kContext) -
                                   std::min(ma.size(), tail == 0 ? suffix : kContext));
    out.added = static_cast<int>(mb.size() - std::min(mb.size(), lead == 0 ? prefix : kContext) -
                                 std::min(mb.size(), tail == 0 ? suffix : kContext));
    out.text += "@@ -" + std::to_string(prefix + 1) + "," + std::to_string(out.removed) + " +" +
                std::to_string(prefix + 1) + "," + std::to_string(out.added) + " @@ (" + std::to_string(out.removed) +
                " lines replaced by " + std::to_string(out.added) + "; too large to diff line by line)\n";
    return out;
  }
  dtl::Diff<std::string> diff(ma, mb);
  diff.enableHuge();
  diff.compose();
  diff.composeUnifiedHunks();
  for (const auto& hunk : diff.getUniHunks()) {
    // dtl numbers lines within the slices; shift by what was cut off.
    long long a_start = hunk.a + static_cast<long long>(lead), b_start = hunk.c + static_cast<long long>(lead);
    out.text += "@@ -" + std::to_string(hunk.b == 0 ? a_start - 1 : a_start) + "," + std::to_string(hunk.b) + " +" +
                std::to_string(hunk.d == 0 ? b_start - 1 : b_start) + "," + std::to_string(hunk.d) + " @@\n";
    auto emit = [&out](const auto& elems) {
      for (const auto& e : elems) {
        char mark = e.second.type == dtl::SES_ADD ? '+' : e.second.type == dtl::SES_DELETE ? '-' : ' ';
        if (mark == '+') ++out.added;
        if (mark == '-') ++out.removed;
        out.text += mark;
        out.text += e.first;
        if (e.first.empty() || e.first.back() != '\n') out.text += "\n\\ No newline at end of file\n";
      }
    };
    emit(hunk.common[0]);
    emit(hunk.change);
    emit(hunk.common[1]);
  }
  return out;
}

std::vector<MovedLine> MapLines(std::string_view before, std::string_view after) {
  std::vector<std::string> a = SplitLines(before), b = SplitLines(after);
  std::vector<MovedLine> map(a.size());
  auto [prefix, suffix] = CommonEnds(a, b);
  auto line = [](size_t index) { return static_cast<uint32_t>(index + 1); };
  for (size_t i = 0; i < prefix; ++i) map[i] = {true, line(i), line(i)};
  for (size_t k = 0; k < suffix; ++k) {
    map[a.size() - 1 - k] = {true, line(b.size() - 1 - k), line(b.size() - 1 - k)};
  }
  std::vector<std::string> ma(a.begin() + static_cast<long>(prefix), a.end() - static_cast<long>(suffix));
  std::vector<std::string> mb(b.begin() + static_cast<long>(prefix), b.end() - static_cast<long>(suffix));
  if (ma.empty()) return map;
  if (static_cast<double>(ma.size()) * static_cast<double>(mb.size()) > kMaxDiffCells) {
    // Too large to diff line by line: the whole region was replaced.
    for (size_t i = 0; i < ma.size(); ++i) {
      map[prefix + i] = {false, line(prefix), static_cast<uint32_t>(prefix + mb.size())};
    }
    return map;
  }
  dtl::Diff<std::string> diff(ma, mb);
  diff.enableHuge();
  diff.compose();
  size_t i = 0, j = 0, hunk_start = 0;
  std::vector<size_t> deleted;
  auto flush = [&] {
    for (size_t d : deleted) {
      map[prefix + d] = {false, line(prefix + hunk_start), static_cast<uint32_t>(prefix + j)};
    }
    deleted.clear();
  };
  for (const auto& e : diff.getSes().getSequence()) {
    if (e.second.type == dtl::SES_COMMON) {
      flush();
      map[prefix + i] = {true, line(prefix + j), line(prefix + j)};
      ++i;
      ++j;
      hunk_start = j;
    } else if (e.second.type == dtl::SES_DELETE) {
      deleted.push_back(i++);
    } else {
      ++j;
    }
  }
  flush();
  return map;
}

}  // namespace odin

#include "cli/diff_view.h"

#include <cstdlib>
#include <vector>

#include "base/terminal_text.h"

namespace odin {
namespace {

constexpr const char* kBold = "\033[1m";
constexpr const char* kCyan = "\033[36m";
constexpr const char* kGreen = "\033[32m";
constexpr const char* kRed = "\033[31m";
constexpr const char* kDim = "\033[2m";
constexpr const char* kReset = "\033[0m";

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// Parses "@@ -a[,b] +c[,d] @@...": the lines the hunk holds of the old and
// the new file (b and d, 1 when left out). False if line is no hunk header.
bool HunkCounts(std::string_view line, long* old_lines, long* new_lines) {
  if (line.substr(0, 4) != "@@ -") return false;
  std::string header(line);
  char* end = nullptr;
  strtol(header.c_str() + 4, &end, 10);
  long a = *end == ',' ? strtol(end + 1, &end, 10) : 1;
  if (end[0] != ' ' || end[1] != '+') return false;
  strtol(end + 2, &end, 10);
  long b = *end == ',' ? strtol(end + 1, &end, 10) : 1;
  if (end[0] != ' ') return false;
  *old_lines = a;
  *new_lines = b;
  return true;
}

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

DiffView RenderDiff(std::string_view unified_diff, bool color, int max_lines) {
  DiffView view;
  std::vector<std::string_view> lines = SplitLines(unified_diff);
  view.lines_total = static_cast<int>(lines.size());
  view.lines_shown = max_lines > 0 && view.lines_total > max_lines ? max_lines : view.lines_total;
  long old_left = 0, new_left = 0;  // lines the current hunk still holds
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    // A file header always starts a file, even after a hunk that was
    // summarized rather than listed (its counts then promise lines that
    // never come).
    bool file_header = StartsWith(line, "--- ") && i + 2 < lines.size() && StartsWith(lines[i + 1], "+++ ") &&
                       StartsWith(lines[i + 2], "@@ ");
    // Hunk lines start with ' ', '+' or '-' (an empty one is context whose
    // space was stripped); anything else ends the hunk.
    char mark = line.empty() ? ' ' : line[0];
    bool in_hunk = (old_left > 0 || new_left > 0) && !file_header && (mark == ' ' || mark == '+' || mark == '-');
    const char* colour = kBold;
    if (HunkCounts(line, &old_left, &new_left)) {
      colour = kCyan;
    } else if (mark == '\\') {
      colour = kDim;  // "\ No newline at end of file", also after a hunk's last line
    } else if (in_hunk && mark == '+') {
      colour = kGreen;
      --new_left;
    } else if (in_hunk && mark == '-') {
      colour = kRed;
      --old_left;
    } else if (in_hunk) {
      colour = nullptr;  // context
      --old_left;
      --new_left;
    } else {
      old_left = new_left = 0;
    }
    if (static_cast<int>(i) >= view.lines_shown) break;
    std::string text = VisibleControls(line);
    if (color && colour != nullptr && !text.empty()) {
      view.text += colour + text + kReset + "\n";
    } else {
      view.text += text + "\n";
    }
  }
  if (view.lines_shown < view.lines_total) {
    int more = view.lines_total - view.lines_shown;
    std::string note =
        "… " + std::to_string(more) + (more == 1 ? " more line" : " more lines") + " (/diff shows the whole change)";
    view.text += color ? kDim + note + kReset + "\n" : note + "\n";
  }
  return view;
}

}  // namespace odin

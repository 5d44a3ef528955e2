#pragma once
// A unified diff as shown in the terminal: coloured like git's (file headers
// bold, hunk headers cyan, added lines green, removed lines red) and folded
// after a number of lines. The diffs themselves come from
// tools/unified_diff.h's UnifiedDiff, the one place that computes them.
//
// A diff shows someone else's bytes: control characters in it are shown as
// text (base/terminal_text.h's VisibleControls), never sent raw.
//
// Thread-safety: pure functions.

#include <string>
#include <string_view>

namespace odin {

struct DiffView {
  std::string text;     // lines that each end in "\n"
  int lines_total = 0;  // lines in the diff
  int lines_shown = 0;  // of which text shows (the fold note not counted)
};

// Returns unified_diff for the terminal, with SGR colours iff color. When
// max_lines > 0 and the diff is longer, shows its first max_lines lines and
// then one line "… N more lines (/diff shows the whole change)". A line is
// a header or a hunk body line by the hunk header's counts, so a removed
// line that reads "--- x" is still red.
DiffView RenderDiff(std::string_view unified_diff, bool color, int max_lines);

}  // namespace odin

#pragma once
// Unified diffs of file changes (the ledger's diff artifact), computed with
// dtl (Debian's libdtl-dev) over the changed region only.

#include <cstdint>
#include <string>
#include <vector>
#include <string_view>

namespace odin {

struct DiffResult {
  std::string text;  // "--- a/...\n+++ b/...\n@@ ... @@\n..." ; empty if equal
  int added = 0;     // lines
  int removed = 0;   // lines
};

// label is the path shown in the header (a/label, b/label). 3 lines of context.
DiffResult UnifiedDiff(std::string_view before, std::string_view after, const std::string& label);

// Where a line of `before` went in `after`.
struct MovedLine {
  bool kept = false;   // unchanged, now at line `first`
  uint32_t first = 0;  // 1-based. Not kept: the lines that replaced it are
  uint32_t last = 0;   // first..last (none when last < first)
};
// For each line of before (index 0 is line 1), where it is in after: the
// same diff as UnifiedDiff's, so moved lines keep their identity.
std::vector<MovedLine> MapLines(std::string_view before, std::string_view after);

}  // namespace odin

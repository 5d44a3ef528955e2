#pragma once
// Unified diffs of file changes (the ledger's diff artifact), computed with
// dtl (Debian's libdtl-dev) over the changed region only.

#include <string>
#include <string_view>

namespace odin {

struct DiffResult {
  std::string text;  // "--- a/...\n+++ b/...\n@@ ... @@\n..." ; empty if equal
  int added = 0;     // lines
  int removed = 0;   // lines
};

// label is the path shown in the header (a/label, b/label). 3 lines of context.
DiffResult UnifiedDiff(std::string_view before, std::string_view after, const std::string& label);

}  // namespace odin

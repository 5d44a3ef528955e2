#pragma once
// Applying string edits to a file's content, with the checks of the
// read-before-edit gate that need the content itself: every matched
// old_string must be unique (unless replace_all) and lie inside what the agent
// has read. Pure: bytes in, bytes or a named failure out. MultiEditTool's edits
// apply in order to one in-memory copy; any failure fails them all.
//
// Bytes outside the replaced spans are never touched, so files that are not
// UTF-8 keep their bytes. In a file with CRLF line endings, a "\n" in
// old_string or new_string means "\r\n", as the model cannot see the "\r".

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/file_tool_args.h"

namespace odin {

// What the agent has read of the file: all of it, or these line ranges
// (1-based, inclusive).
struct ReadCoverage {
  bool full = false;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
};

enum class EditFailure {
  kNone,
  kEmptyOldString,  // old_string is ""
  kIdentical,       // old_string == new_string
  kNotFound,        // old_string does not occur
  kAmbiguous,       // it occurs more than once and replace_all is not set
  kOutsideRead,     // it occurs where the agent has not read
};

struct EditOutcome {
  EditFailure failure = EditFailure::kNone;
  std::string message;  // for the model, when failed
  std::string content;  // the new content, when not failed
  int replacements = 0;
  uint32_t first_changed_line = 0;  // in the new content, 1-based; 0 if none
  uint32_t last_changed_line = 0;
};

EditOutcome ApplyEdits(std::string_view original, const std::vector<EditSpec>& edits, const ReadCoverage& read,
                       const std::string& display_path);

// "lines 3-9, 20-25" (or "lines 4" for one line).
std::string DescribeRanges(const std::vector<std::pair<uint32_t, uint32_t>>& ranges);

}  // namespace odin

#include "gates/read_before_edit_gate.h"

#include <sys/stat.h>

#include "odin/v1/worker.pb.h"
#include "tools/edit_apply.h"
#include "tools/tool_input.h"
#include "tools/tool_catalog.h"
#include "tools/workspace_path.h"

namespace odin {

StatusOr<std::string> ResolveWriteTarget(const v1::ToolInput& input, const std::string& ws, std::string* given) {
  *given = WritePathOf(input);
  if (given->empty()) return Status::InvalidArgument("the call", "writes no file");
  return ResolveWorkspacePath(*given, ws);
}

Status CheckReadBeforeEdit(const std::string& tool, const std::string& path, const std::string& ws, FileCache* cache,
                           v1::FileExpectation* expect) {
  std::string shown = DisplayPath(path, ws);
  // WriteFile and InitTool replace the whole file.
  WriteForm form = WriteFormOf(tool);
  bool whole = form == WriteForm::kWhole || form == WriteForm::kInit;

  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (!whole) {
      return Status::NotFound(tool, shown + " does not exist; use WriteFile to create it");
    }
    expect->set_must_not_exist(true);
    return Status::OK();
  }
  if (S_ISDIR(st.st_mode)) return Status::InvalidArgument(tool, shown + " is a directory, not a file");

  const CachedFile* entry = cache->Find(path);
  if (entry == nullptr) {
    return Status::FailedPrecondition(
        tool, "you have not read " + shown + ". Read it first (Read with file_path=\"" + shown + "\"), then retry");
  }
  if (!cache->IsFresh(path)) {
    std::string by = cache->ChangedBy(path);
    cache->Invalidate(path);
    return Status::FailedPrecondition(tool, shown + " changed since you read it" +
                                                (by.empty() ? "" : " (by " + by + ")") +
                                                ". Read it again (Read with file_path=\"" + shown + "\"), then retry");
  }
  if (whole && !entry->full) {
    return Status::FailedPrecondition(tool, tool + " replaces all of " + shown + ", but you have read only " +
                                                DescribeRanges(entry->ReadRanges()) +
                                                ". Read all of it first, or change it with EditTool");
  }
  expect->set_sha256(entry->sha256);
  expect->set_full_read(entry->full);
  if (!entry->full) {
    for (auto [start, end] : entry->ReadRanges()) {
      v1::LineRange* r = expect->add_read_ranges();
      r->set_start(start);
      r->set_end(end);
    }
  }
  return Status::OK();
}

}  // namespace odin

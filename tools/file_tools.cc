#include "tools/file_tools.h"

#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/image_type.h"
#include "base/sha256.h"
#include "odin/v1/worker.pb.h"
#include "tools/edit_apply.h"
#include "tools/file_tool_args.h"
#include "tools/tool_input.h"
#include "tools/locked_file.h"
#include "tools/text_file.h"
#include "tools/tool_result.h"
#include "tools/unified_diff.h"
#include "tools/workspace_path.h"

namespace odin {
namespace {

using nlohmann::json;

constexpr size_t kMaxLineChars = 2000;

std::string Fail(v1::ToolResult* r, v1::ToolStatus status, const Status& s) { return FailResult(r, status, s); }
std::string Fail(v1::ToolResult* r, const Status& s) { return FailResult(r, v1::TOOL_STATUS_ERROR, s); }

void Snapshot(const std::string& path, std::string_view content, const FileStat& st, v1::FileSnapshot* snap) {
  snap->set_path(path);
  snap->set_sha256(Sha256Hex(content));
  snap->set_size_bytes(content.size());
  snap->set_mtime_ns(st.mtime_ns);
  snap->set_total_lines(LineIndex(content).lines());
}

std::string RunRead(const v1::ToolRequest& req, const std::string& ws, v1::ToolResult* r) {
  if (!req.input().has_read()) return Fail(r, MissingInput(req.tool()));
  ReadArgs args = ArgsOf(req.input().read());
  StatusOr<std::string> path = ResolveToolPath(args.file_path, ws, req.approved_outside_path());
  if (!path.ok()) return Fail(r, path.status());
  std::string shown = DisplayPath(*path, ws);
  // A path outside the workspace (approved) is opened below its own directory.
  StatusOr<std::unique_ptr<LockedFile>> file =
      LockedFile::Open(IsInsideDir(*path, ws) ? ws : DirName(*path), *path, kMaxFileBytes, LockedFile::Lock::kShared);
  if (!file.ok()) return Fail(r, file.status().WithContext("Read"));
  if (!(*file)->exists()) {
    return Fail(r, Status::NotFound("Read", shown + " does not exist" +
                                                (IsInsideDir(*path, ws) ? ""
                                                                        : " in the sandbox (it hides HOME, /root and "
                                                                          "sandbox.hide)")));
  }
  const std::string& content = (*file)->content();
  // An image: its type, size and hash. The model's side sends it to a
  // model that sees images (planner/agent_images.cc), after checking these
  // bytes' hash; its contents are not text for a result.
  if (std::optional<std::string> type = ImageMediaType(content)) {
    v1::FileSnapshot* snap = r->add_files_read();
    Snapshot(*path, content, (*file)->stat(), snap);
    snap->set_full(false);
    r->set_status(v1::TOOL_STATUS_OK);
    r->set_exit_reason(v1::EXIT_REASON_NORMAL);
    r->set_output_json(
        json({{"file", shown}, {"image", *type}, {"sha256", snap->sha256()}, {"size", content.size()}}).dump());
    return "(" + shown + " is an image: " + *type + ", " + std::to_string(content.size()) + " bytes)\n";
  }
  if (LooksBinary(content)) {
    return Fail(r, Status::InvalidArgument("Read", shown + " is a binary file (" + std::to_string(content.size()) +
                                                       " bytes); its contents are not shown"));
  }
  LineIndex index(content);
  uint32_t total = index.lines();
  uint32_t first = args.offset;
  uint32_t count = args.limit != 0 ? args.limit : kDefaultReadLines;
  if (total > 0 && first > total) {
    return Fail(r, Status::InvalidArgument("Read", "offset " + std::to_string(first) + " is past the end of " + shown +
                                                       " (" + std::to_string(total) + " lines)"));
  }
  uint32_t last = total == 0 ? 0 : std::min<uint64_t>(total, static_cast<uint64_t>(first) + count - 1);

  v1::FileSnapshot* snap = r->add_files_read();
  Snapshot(*path, content, (*file)->stat(), snap);
  std::string text;
  if (total == 0) {
    text = "(" + shown + " is empty)\n";
    snap->set_full(true);
  } else {
    // A line cut for display was not seen whole: it does not count as read,
    // so the lines shown become one segment per run of whole lines.
    char number[16];
    std::vector<std::pair<uint32_t, uint32_t>> runs;
    for (uint32_t n = first; n <= last; ++n) {
      std::string_view line(content.data() + index.Start(n), index.Start(n + 1) - index.Start(n));
      while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
      snprintf(number, sizeof number, "%6u\t", n);
      text += number;
      if (line.size() > kMaxLineChars) {
        text += ToDisplayText(line.substr(0, kMaxLineChars));
        text += "... [line truncated: " + std::to_string(line.size()) + " bytes]";
      } else {
        text += ToDisplayText(line);
        if (!runs.empty() && runs.back().second + 1 == n) {
          runs.back().second = n;
        } else {
          runs.push_back({n, n});
        }
      }
      text += '\n';
    }
    bool full = runs.size() == 1 && runs[0].first == 1 && runs[0].second == total;
    snap->set_full(full);
    if (full) {
      snap->set_content(content);
    } else {
      for (auto [a, b] : runs) {
        v1::Segment* seg = snap->add_segments();
        seg->set_start_line(a);
        seg->set_end_line(b);
        seg->set_content(content.substr(index.Start(a), index.Start(b + 1) - index.Start(a)));
      }
    }
    if (first != 1 || last != total) {
      text += "(Showing lines " + std::to_string(first) + "-" + std::to_string(last) + " of " + std::to_string(total) +
              ". Use offset and limit to read more.)\n";
    }
  }
  r->set_status(v1::TOOL_STATUS_OK);
  r->set_exit_reason(v1::EXIT_REASON_NORMAL);
  r->set_output_json(json({{"file", shown},
                           {"start_line", total == 0 ? 0 : first},
                           {"end_line", last},
                           {"total_lines", total},
                           {"sha256", snap->sha256()},
                           {"size", content.size()}})
                         .dump());
  return text;
}

// Shared end of WriteFile and the edit tools: write, and describe the change.
std::string Commit(LockedFile* file, const std::string& path, const std::string& shown, const std::string& before,
                   bool existed, const std::string& after, const std::string& what, v1::ToolResult* r) {
  // The diff first: once the file is replaced, nothing may fail or stall.
  DiffResult diff = UnifiedDiff(before, after, shown);
  Status s = file->Replace(after);
  if (s.code() == StatusCode::kAlreadyExists) {
    r->set_stale_read(true);
    return Fail(r, v1::TOOL_STATUS_REJECTED,
                Status::FailedPrecondition(shown, "was created by someone else since you checked; Read it first"));
  }
  if (!s.ok()) return Fail(r, s);
  StatusOr<FileStat> st = file->StatNow();
  Snapshot(path, after, st.ok() ? *st : FileStat{}, r->mutable_file_written());
  r->mutable_file_written()->set_full(true);
  r->mutable_file_written()->set_content(after);
  if (existed) {
    r->set_sha256_before(Sha256Hex(before));
    r->set_content_before(before);
  }
  r->set_diff(diff.text);
  r->set_status(v1::TOOL_STATUS_OK);
  r->set_exit_reason(v1::EXIT_REASON_NORMAL);
  r->set_output_json(json({{"file", shown},
                           {"created", !existed},
                           {"lines_added", diff.added},
                           {"lines_removed", diff.removed},
                           {"sha256_before", existed ? json(r->sha256_before()) : json()},
                           {"sha256_after", r->file_written().sha256()}})
                         .dump());
  return what + " (+" + std::to_string(diff.added) + " -" + std::to_string(diff.removed) + " lines)\n" + diff.text;
}

// The gate's expectation, checked against the file as it is under the lock.
Status CheckExpectation(const v1::FileExpectation& expect, const LockedFile& file, const std::string& shown) {
  if (expect.must_not_exist() && file.exists()) {
    return Status::FailedPrecondition(shown, "exists now, though it did not when checked; Read it first");
  }
  if (!expect.sha256().empty() && file.exists() && Sha256Hex(file.content()) != expect.sha256()) {
    return Status::FailedPrecondition(shown, "changed since you read it; Read it again, then retry");
  }
  return Status::OK();
}

// The file a writing tool changes: resolved inside the workspace and locked
// for writing.
struct Target {
  std::string path;   // absolute
  std::string shown;  // as the model names it
  std::unique_ptr<LockedFile> file;
};
StatusOr<Target> LockTarget(const std::string& tool, const std::string& file_path, const std::string& ws) {
  ASSIGN_OR_RETURN(std::string path, ResolveWorkspacePath(file_path, ws));
  StatusOr<std::unique_ptr<LockedFile>> file = LockedFile::Open(ws, path, kMaxFileBytes, LockedFile::Lock::kExclusive);
  if (!file.ok()) return file.status().WithContext(tool);
  std::string shown = DisplayPath(path, ws);
  return Target{std::move(path), std::move(shown), std::move(*file)};
}

std::string RunWrite(const v1::ToolRequest& req, const std::string& ws, v1::ToolResult* r) {
  if (!req.input().has_write()) return Fail(r, MissingInput(req.tool()));
  WriteArgs args = ArgsOf(req.input().write());
  if (args.content.size() > kMaxFileBytes) {
    return Fail(
        r, Status::ResourceExhausted("WriteFile", "content is " + std::to_string(args.content.size()) +
                                                      " bytes, over the limit of " + std::to_string(kMaxFileBytes)));
  }
  StatusOr<Target> t = LockTarget("WriteFile", args.file_path, ws);
  if (!t.ok()) return Fail(r, t.status());
  LockedFile* file = t->file.get();
  const std::string& shown = t->shown;
  Status expected = CheckExpectation(req.expect(), *file, shown);
  if (!expected.ok()) {
    r->set_stale_read(true);
    return Fail(r, v1::TOOL_STATUS_REJECTED, expected);
  }
  bool existed = file->exists();
  std::string before = existed ? file->content() : "";
  uint32_t lines = LineIndex(args.content).lines();
  std::string what = std::string(existed ? "Wrote " : "Created ") + shown + " (" + std::to_string(lines) + " lines)";
  return Commit(file, t->path, shown, before, existed, args.content, what, r);
}

std::string RunEdit(const v1::ToolRequest& req, const std::string& ws, v1::ToolResult* r) {
  if (!req.input().has_edit()) return Fail(r, MissingInput(req.tool()));
  EditArgs args = ArgsOf(req.input().edit());
  StatusOr<Target> t = LockTarget(req.tool(), args.file_path, ws);
  if (!t.ok()) return Fail(r, t.status());
  LockedFile* file = t->file.get();
  const std::string& shown = t->shown;
  if (!file->exists()) {
    return Fail(r, Status::NotFound(req.tool(), shown + " does not exist; use WriteFile to create it"));
  }
  if (LooksBinary(file->content())) {
    return Fail(r, Status::InvalidArgument(req.tool(), shown + " is a binary file; it cannot be edited as text"));
  }
  Status expected = CheckExpectation(req.expect(), *file, shown);
  if (!expected.ok()) {
    r->set_stale_read(true);
    return Fail(r, v1::TOOL_STATUS_REJECTED, expected);
  }

  ReadCoverage coverage;
  coverage.full = req.expect().full_read() || req.expect().sha256().empty();
  for (const v1::LineRange& range : req.expect().read_ranges()) coverage.ranges.push_back({range.start(), range.end()});
  EditOutcome out = ApplyEdits(file->content(), args.edits, coverage, shown);
  switch (out.failure) {
    case EditFailure::kNone: break;
    case EditFailure::kOutsideRead:
      return Fail(r, v1::TOOL_STATUS_REJECTED, Status::FailedPrecondition(req.tool(), out.message));
    case EditFailure::kNotFound: return Fail(r, Status::NotFound(req.tool(), out.message));
    default: return Fail(r, Status::InvalidArgument(req.tool(), out.message));
  }
  std::string what = "Edited " + shown + ": " + std::to_string(out.replacements) + " replacement" +
                     (out.replacements == 1 ? "" : "s") + ", lines " + std::to_string(out.first_changed_line) + "-" +
                     std::to_string(out.last_changed_line);
  return Commit(file, t->path, shown, file->content(), true, out.content, what, r);
}

// EditSymbol: the span the coordinator found in the index, spliced under
// the file's lock if the file and the span are still what the model saw.
std::string RunEditSymbol(const v1::ToolRequest& req, const std::string& ws, v1::ToolResult* r) {
  if (!req.input().has_edit_symbol()) return Fail(r, MissingInput(req.tool()));
  EditSymbolArgs args = ArgsOf(req.input().edit_symbol());
  StatusOr<Target> t = LockTarget(req.tool(), args.file_path, ws);
  if (!t.ok()) return Fail(r, t.status());
  LockedFile* file = t->file.get();
  const std::string& shown = t->shown;
  if (!file->exists()) return Fail(r, Status::NotFound(req.tool(), shown + " does not exist any more"));
  const std::string& before = file->content();
  if (!req.expect().sha256().empty() && Sha256Hex(before) != req.expect().sha256()) {
    r->set_stale_read(true);
    return Fail(r, v1::TOOL_STATUS_REJECTED,
                Status::FailedPrecondition(req.tool(), shown + " changed since the symbol's span was checked; query "
                                                               "the symbol again (symbols or outline), then retry"));
  }
  if (args.end_byte < args.start_byte) return Fail(r, Status::InvalidArgument(req.tool(), "the span is reversed"));
  if (args.end_byte > before.size()) {
    return Fail(r, v1::TOOL_STATUS_REJECTED, Status::FailedPrecondition(req.tool(), "the span is past the file's end"));
  }
  std::string_view span = std::string_view(before).substr(args.start_byte, args.end_byte - args.start_byte);
  if (Sha256Hex(span) != args.span_sha256) {
    return Fail(r, v1::TOOL_STATUS_REJECTED,
                Status::FailedPrecondition(req.tool(), "the symbol's span changed since it was queried"));
  }
  std::string after;
  std::string verb;
  switch (args.operation) {
    case SpanOperation::kReplace:
      after = before.substr(0, args.start_byte) + args.content + before.substr(args.end_byte);
      verb = "replaced";
      break;
    case SpanOperation::kInsertBefore:
      after = before.substr(0, args.start_byte) + args.content + before.substr(args.start_byte);
      verb = "inserted before";
      break;
    case SpanOperation::kInsertAfter:
      after = before.substr(0, args.end_byte) + args.content + before.substr(args.end_byte);
      verb = "inserted after";
      break;
    case SpanOperation::kDelete:
      after = before.substr(0, args.start_byte) + before.substr(args.end_byte);
      verb = "deleted";
      break;
  }
  std::string what = "EditSymbol " + shown + ": " + verb + " " + args.symbol_id;
  return Commit(file, t->path, shown, before, true, after, what, r);
}

}  // namespace

std::string RunFileTool(const v1::ToolRequest& req, const std::string& workspace, v1::ToolResult* r) {
  r->set_execution_id(req.execution_id());
  switch (req.input().kind_case()) {
    case v1::ToolInput::kRead: return RunRead(req, workspace, r);
    case v1::ToolInput::kWrite: return RunWrite(req, workspace, r);
    case v1::ToolInput::kEditSymbol: return RunEditSymbol(req, workspace, r);
    case v1::ToolInput::kEdit: return RunEdit(req, workspace, r);
    default: return Fail(r, MissingInput(req.tool()));
  }
}

}  // namespace odin

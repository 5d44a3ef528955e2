// The symbol index's side of the coordinator (issue 20): the query tools
// (symbols, references, impact, outline) run here, each an execution in
// the ledger, once the index is up to date; bringing it up to date is a set
// of IndexParse executions in read-only workers, whose answers only the
// coordinator writes to .odin/index.db.

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/ids.h"
#include "coordinator/coordinator.h"
#include "coordinator/symbol_index.h"
#include "index/index_query.h"
#include "odin/v1/worker.pb.h"
#include "tools/file_tool_args.h"
#include "tools/text_file.h"
#include "tools/tool_result.h"
#include "tools/workspace_path.h"
#include "tools/tool_catalog.h"

namespace odin {

using nlohmann::json;

void Coordinator::MarkIndexDirty(const std::string& path) {
  if (!indexer_) return;  // the first look will find it
  // Relative (a change set's paths) or absolute (a file tool's).
  if (path.empty()) return;
  if (path[0] != '/') return indexer_->MarkDirty(path);
  if (path != o_.workspace && IsInsideDir(path, o_.workspace)) indexer_->MarkDirty(DisplayPath(path, o_.workspace));
}

index::ReadWorkspaceFile Coordinator::IndexFileReader() const {
  std::string workspace = o_.workspace;
  return [workspace](const std::string& rel) -> StatusOr<std::string> {
    // Resolved inside the workspace: a file swapped for a symlink out of it
    // is not read.
    ASSIGN_OR_RETURN(std::string path, ResolveWorkspacePath(rel, workspace));
    if (path != workspace + "/" + rel) return Status::InvalidArgument(rel, "reached through a symlink");
    return ReadRegularFile(path, kMaxFileBytes);
  };
}

void Coordinator::RefreshSymbolIndex(bool rebuild, std::function<void(const Status&, size_t)> done) {
  index_done_.push_back(std::move(done));
  index_rebuild_ = index_rebuild_ || rebuild;
  if (index_parsing_ == 0) StartIndexRefresh();
}

index::IndexDb* Coordinator::symbol_index() { return indexer_ ? indexer_->db() : nullptr; }

void Coordinator::RunIndexTool(Call& c) {
  index_waiting_.push_back(c.call.execution_id);
  if (index_parsing_ == 0) StartIndexRefresh();
}

void Coordinator::StartIndexRefresh() {
  if (!indexer_) {
    indexer_ = std::make_unique<SymbolIndexer>(o_.workspace, o_.workspace + "/.odin/index.db");
  }
  std::string note;
  Status opened = indexer_->Open(&note);
  if (!note.empty()) {
    spdlog::warn("{}", note);
    if (on_index_note) on_index_note(note);
  }
  index_parsed_ = 0;
  if (!opened.ok()) return IndexRefreshed(opened);
  if (index_rebuild_) {
    index_rebuild_ = false;
    Status cleared = indexer_->Clear();
    if (!cleared.ok()) return IndexRefreshed(cleared);
  }
  // Without the tracker's word about what changed, the tree is looked at
  // again (stat only; unchanged files are not read).
  bool full = !tracker_ || !tracker_->watching();
  StatusOr<std::vector<std::vector<std::string>>> batches = indexer_->Plan(full, o_.pool.size);
  if (!batches.ok()) return IndexRefreshed(batches.status());
  if (batches->empty()) return IndexRefreshed(Status::OK());
  index_parsing_ = static_cast<int>(batches->size());
  index_status_ = Status::OK();
  index_parsed_ = 0;
  for (std::vector<std::string>& paths : *batches) {
    std::string id = NewId("ex");
    Call& c = calls_[id];
    c.call.execution_id = id;
    c.call.tool = kIndexParseTool;
    c.call.arguments_json = json({{"paths", paths}}).dump(-1, ' ', false, json::error_handler_t::replace);
    c.call.timeout = seconds(120);
    c.call.agent_id = o_.agent_id;
    c.call.mode = CallMode::kAsk;
    c.call.policy = WorkerPolicy::kReadonly;
    c.call.internal = true;
    c.handlers.on_done = [this](const v1::ToolResult& r, const Status&) {
      if (r.status() == v1::TOOL_STATUS_OK) {
        indexer_->Apply(std::make_unique<v1::IndexParseOutput>(r.index_parse()));
      } else if (index_status_.ok()) {
        std::string why = r.has_error() ? r.error().message() : std::string(ToolStatusName(r.status()));
        index_status_ = Status::Unavailable("symbol index", "a parse of files failed: " + why);
      }
      index_parsed_ += static_cast<size_t>(r.index_parse().files_size());
      if (--index_parsing_ == 0) IndexRefreshed(index_status_);
    };
    Dispatch(c);
  }
}

void Coordinator::IndexRefreshed(const Status& refreshed) {
  index_parsing_ = 0;
  Status status = refreshed;
  if (indexer_) {
    Status finished = indexer_->Finish();
    if (status.ok()) status = finished;
  }
  std::vector<std::string> waiting = std::move(index_waiting_);
  index_waiting_.clear();
  std::vector<std::function<void(const Status&, size_t)>> done = std::move(index_done_);
  index_done_.clear();
  for (const std::string& id : waiting) {
    auto it = calls_.find(id);
    if (it == calls_.end()) continue;  // cancelled meanwhile
    if (!status.ok()) {
      EndHere(id, v1::TOOL_STATUS_ERROR, status);
      continue;
    }
    if (it->second.call.tool == kEditSymbolTool) {
      PrepareEditSymbol(it->second);
      continue;
    }
    AnswerIndexQuery(it->second);
  }
  for (auto& d : done) d(status, index_parsed_);
  index_parsed_ = 0;
}

void Coordinator::PrepareEditSymbol(Call& c) {
  const std::string id = c.call.execution_id;
  StatusOr<EditSymbolArgs> args = ParseEditSymbolArgs(c.call.arguments_json, false);
  if (!args.ok()) return EndHere(id, v1::TOOL_STATUS_ERROR, args.status());
  StatusOr<index::SpanNow> span = index::ResolveSpan(args->symbol_id, indexer_->db(), IndexFileReader());
  if (!span.ok()) {
    return EndHere(id, span.status().code() == StatusCode::kNotFound ? v1::TOOL_STATUS_ERROR : v1::TOOL_STATUS_REJECTED,
                   span.status());
  }
  if (span->span_sha256 != args->span_sha256) {
    RecordGateEvent(c.call.agent_id, "", "span_drift", id,
                    json({{"symbol_id", args->symbol_id},
                          {"path", span->symbol.path},
                          {"expected", args->span_sha256},
                          {"found", span->span_sha256}})
                        .dump(-1, ' ', false, json::error_handler_t::replace));
    return EndHere(id, v1::TOOL_STATUS_REJECTED,
                   Status::FailedPrecondition(
                       kEditSymbolTool + std::string(": ") + span->symbol.qualified_name + " in " + span->symbol.path,
                       "its span changed since you queried it (span_sha256 is now " + span->span_sha256 +
                           "); query it again and retry"));
  }
  static const char* kOperations[] = {"replace", "insert_before", "insert_after", "delete"};
  json resolved = {{"symbol_id", args->symbol_id},
                   {"span_sha256", args->span_sha256},
                   {"operation", kOperations[static_cast<int>(args->operation)]},
                   {"content", args->content},
                   {"file_path", span->symbol.path},
                   {"start_byte", span->symbol.start_byte},
                   {"end_byte", span->symbol.end_byte}};
  c.call.arguments_json = resolved.dump(-1, ' ', false, json::error_handler_t::replace);
  c.span_file_sha256 = span->file_sha256;
  ProceedWrite(c);
}

void Coordinator::AnswerIndexQuery(Call& c) {
  const std::string id = c.call.execution_id;
  StatusOr<index::QueryAnswer> answer =
      index::RunIndexQuery(c.call.tool, c.call.arguments_json, indexer_->db(), IndexFileReader());
  if (!answer.ok()) return EndHere(id, v1::TOOL_STATUS_ERROR, answer.status());
  AgentState& agent = Agent(c.call.agent_id);
  for (const std::string& rel : answer->covered) agent.analysis[id].insert(JoinPath(o_.workspace, rel));
  EndHere(id, v1::TOOL_STATUS_OK, Status::OK(), answer->text + "\n");
}

}  // namespace odin

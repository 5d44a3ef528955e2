#include "coordinator/index_refresh.h"

#include <spdlog/spdlog.h>

#include "base/file_util.h"
#include "index/symbol_index.h"
#include "index/symbols.h"
#include "odin/v1/worker.pb.h"
#include "tools/text_file.h"
#include "tools/tool_result.h"
#include "tools/workspace_path.h"
#include "workspace/git_ignore.h"
#include "workspace/workspace_files.h"

namespace odin {

IndexRefresh::IndexRefresh(std::string workspace, std::string db_path, int workers, Port port)
    : workspace_(std::move(workspace)), db_path_(std::move(db_path)), workers_(workers), port_(std::move(port)) {}

IndexRefresh::~IndexRefresh() = default;

void IndexRefresh::MarkDirty(const std::string& path) {
  if (!indexer_ || path.empty()) return;  // the first look will find it
  // Relative (a change set's paths) or absolute (a file tool's).
  if (path[0] != '/') return indexer_->MarkDirty(path);
  if (path != workspace_ && IsInsideDir(path, workspace_)) indexer_->MarkDirty(DisplayPath(path, workspace_));
}

index::ReadWorkspaceFile IndexRefresh::FileReader() const {
  return [workspace = workspace_](const std::string& rel) -> StatusOr<std::string> {
    // Through the safe file layer, following no symlink: a file swapped for
    // one is not read.
    ASSIGN_OR_RETURN(WorkspaceFiles files, WorkspaceFiles::Open(workspace));
    return files.ReadFile(rel, kMaxFileBytes, WorkspaceFiles::Links::kNone);
  };
}

void IndexRefresh::Refresh(bool rebuild, std::function<void(const Status&, size_t)> done) {
  done_.push_back(std::move(done));
  rebuild_ = rebuild_ || rebuild;
  if (parsing_ == 0) Start();
}

void IndexRefresh::Wait(const std::string& execution_id) {
  waiting_.push_back(execution_id);
  if (parsing_ == 0) Start();
}

index::IndexDb* IndexRefresh::db() { return indexer_ ? indexer_->db() : nullptr; }

std::string IndexRefresh::RepoMap(size_t budget_tokens) {
  if (budget_tokens != repo_map_tokens_) {
    repo_map_tokens_ = budget_tokens;
    repo_map_stale_ = true;
  }
  if (parsing_ > 0) return repo_map_;  // the writer thread holds the index
  if (!indexer_ || !indexer_->walked() || indexer_->has_dirty()) {
    // Made when the refresh ends; this request goes with the last map.
    Refresh(false, [](const Status&, size_t) {});
    return repo_map_;
  }
  if (repo_map_stale_) {
    StatusOr<std::string> map = index::RepoMap(indexer_->db(), repo_map_tokens_);
    if (map.ok()) {
      repo_map_ = std::move(*map);
      repo_map_stale_ = false;
    } else {
      spdlog::warn("repository map: {}", map.status().message());
    }
  }
  return repo_map_;
}

void IndexRefresh::Start() {
  if (!indexer_) {
    // git's rules, read at the first walk (a session that never indexes
    // never reads them).
    auto ignore = std::make_shared<std::unique_ptr<GitIgnore>>();
    indexer_ = std::make_unique<SymbolIndexer>(workspace_, db_path_, [ignore, ws = workspace_](const std::string& rel) {
      if (!*ignore) *ignore = GitIgnore::Open(ws);
      return !(*ignore)->IgnoredRoot(rel).empty();
    });
  }
  std::string note;
  Status opened = indexer_->Open(&note);
  if (!note.empty()) {
    spdlog::warn("{}", note);
    if (port_.note) port_.note(note);
  }
  if (rounds_ == 0) parsed_ = 0;  // a later round adds to the first's count
  if (!opened.ok()) return Refreshed(opened);
  if (rebuild_) {
    rebuild_ = false;
    Status cleared = indexer_->Clear();
    if (!cleared.ok()) return Refreshed(cleared);
  }
  // Without the tracker's word about what changed, the tree is looked at
  // again (stat only; unchanged files are not read).
  StatusOr<std::vector<std::vector<std::string>>> batches = indexer_->Plan(!port_.changes_watched(), workers_);
  if (!batches.ok()) return Refreshed(batches.status());
  if (batches->empty()) return Refreshed(Status::OK());
  parsing_ = static_cast<int>(batches->size());
  status_ = Status::OK();
  for (const std::vector<std::string>& paths : *batches) {
    // A parse refused at once ends here, counted like any other.
    port_.parse(paths, [this](const v1::ToolResult& r) {
      if (r.status() == v1::TOOL_STATUS_OK) {
        indexer_->Apply(std::make_unique<v1::IndexParseOutput>(r.index_parse()));
      } else if (status_.ok()) {
        std::string why = r.has_error() ? r.error().message() : std::string(ToolStatusName(r.status()));
        status_ = Status::Unavailable("symbol index", "a parse of files failed: " + why);
      }
      parsed_ += static_cast<size_t>(r.index_parse().files_size());
      if (--parsing_ == 0) Refreshed(status_);
    });
  }
}

void IndexRefresh::Refreshed(const Status& refreshed) {
  parsing_ = 0;
  Status status = refreshed;
  if (indexer_) {
    Status finished = indexer_->Finish();
    if (status.ok()) status = finished;
  }
  // Files changed while this refresh ran (a write that ended meanwhile), or
  // a rebuild was asked for: the callers waiting may have come after, and
  // must see it. Another round; each empties what it takes.
  if (status.ok() && indexer_ && (indexer_->has_dirty() || rebuild_) && ++rounds_ < 4) return Start();
  rounds_ = 0;
  std::vector<std::string> waiting = std::move(waiting_);
  waiting_.clear();
  std::vector<std::function<void(const Status&, size_t)>> done = std::move(done_);
  done_.clear();
  port_.resume(waiting, status);
  if (parsed_ > 0 || (indexer_ && indexer_->TakeRemoved())) repo_map_stale_ = true;
  for (auto& d : done) d(status, parsed_);
  parsed_ = 0;
}

}  // namespace odin

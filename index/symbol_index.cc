#include "index/symbol_index.h"

#include <dirent.h>
#include <algorithm>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_util.h"
#include "base/ids.h"
#include "base/sha256.h"
#include "base/unique_fd.h"
#include "index/symbols.h"
#include "odin/v1/worker.pb.h"
#include "workspace/host_files.h"
#include "workspace/workspace_files.h"

namespace odin {
namespace {

// A batch: enough files to keep a worker busy for a moment, small enough
// that its answer is a modest message and its heartbeat keeps beating.
constexpr size_t kBatchFiles = 400;
constexpr int64_t kBatchBytes = 4 << 20;
// Past this many files to parse, the index is loaded in bulk (IndexDb::BeginBulk).
constexpr size_t kBulkFiles = 256;

int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

bool SkippedDir(const char* name) {
  return strcmp(name, ".git") == 0 || strcmp(name, ".odin") == 0 || strcmp(name, "node_modules") == 0;
}

}  // namespace

SymbolIndexer::SymbolIndexer(std::string workspace, std::string db_path, IgnoredFn ignored)
    : workspace_(std::move(workspace)), db_path_(std::move(db_path)), ignored_(std::move(ignored)) {}

SymbolIndexer::~SymbolIndexer() { (void)Finish(); }

Status SymbolIndexer::Open(std::string* note) {
  if (db_) return Status::OK();
  // (Odin's state directory is there: the runtime made it.)
  ASSIGN_OR_RETURN(db_, index::IndexDb::Open(db_path_, note));
  // The index must be one this user's Odin made: a repository that ships
  // .odin/index.db would otherwise hand the model spans of its choosing.
  // Its owner token is kept outside the workspace, as the ledger's anchor is.
  if (OdinStateDir().empty()) return Status::OK();  // no state directory: nothing to compare with
  std::string mark_dir = OdinStateDir() + "/index";
  std::string mark = mark_dir + "/" + Sha256Hex(workspace_);
  StatusOr<std::optional<std::string>> read = ReadUserFile(mark, 256);
  StatusOr<std::string> known =
      read.ok() && read->has_value() ? StatusOr<std::string>(**read) : Status::NotFound(mark, "no owner token");
  ASSIGN_OR_RETURN(std::string owner, db_->GetMeta("owner"));
  bool ours = known.ok() && !owner.empty() && *known == owner;
  if (!ours) {
    StatusOr<index::IndexStats> st = db_->Stats();
    if (!owner.empty() || (st.ok() && st->files > 0)) {
      std::string why = "symbol index " + db_path_ + " was not made by this user's Odin: rebuilding it";
      *note = note->empty() ? why : *note + "; " + why;
      RETURN_IF_ERROR(db_->Clear());
    }
    owner = NewId("idx");
    RETURN_IF_ERROR(db_->SetMeta("owner", owner));
    RETURN_IF_ERROR(WriteUserFile(mark, owner));
  }
  return Status::OK();
}

void SymbolIndexer::MarkDirty(const std::string& relative_path) {
  if (index::LanguageForPath(relative_path) != index::Language::kNone) dirty_.insert(relative_path);
}

Status SymbolIndexer::Clear() {
  RETURN_IF_ERROR(db_->Clear());
  walked_ = false;
  dirty_.clear();
  return Status::OK();
}

void SymbolIndexer::Walk(std::vector<std::pair<std::string, Seen>>* out) {
  auto ignored = [this](const std::string& rel) { return ignored_ && ignored_(rel); };
  // Directories still to read, relative ("" is the workspace).
  std::vector<std::string> todo = {""};
  // Through the safe file layer: no directory is read through a symlink.
  StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(workspace_);
  if (!files.ok()) return;
  while (!todo.empty()) {
    std::string rel = std::move(todo.back());
    todo.pop_back();
    StatusOr<UniqueFd> opened = files->OpenDirectory(rel);
    if (!opened.ok()) continue;
    int fd = opened->release();
    DIR* dir = fdopendir(fd);
    if (dir == nullptr) {
      close(fd);
      continue;
    }
    while (struct dirent* e = readdir(dir)) {
      const char* name = e->d_name;
      if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) continue;
      std::string child = rel.empty() ? std::string(name) : rel + "/" + name;
      unsigned char type = e->d_type;
      struct stat st {};
      if (type == DT_UNKNOWN || type == DT_REG) {
        if (fstatat(dirfd(dir), name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
      }
      if (type == DT_DIR) {
        if (SkippedDir(name) || ignored(child)) continue;
        todo.push_back(std::move(child));
        continue;
      }
      if (type != DT_REG || index::LanguageForPath(child) == index::Language::kNone) continue;
      if (static_cast<uint64_t>(st.st_size) > index::kMaxIndexedFileBytes) continue;
      if (ignored(child)) continue;
      out->push_back({std::move(child), {st.st_size, MtimeNs(st)}});
    }
    closedir(dir);
  }
}

StatusOr<std::vector<std::vector<std::string>>> SymbolIndexer::Plan(bool full, int workers) {
  if (!db_) return Status::FailedPrecondition("symbol index", "not open");
  StatusOr<std::vector<std::vector<std::string>>> planned = PlanIn(full, workers);
  if (!planned.ok()) db_->Rollback();  // a failed write leaves no transaction open
  return planned;
}

StatusOr<std::vector<std::vector<std::string>>> SymbolIndexer::PlanIn(bool full, int workers) {
  std::vector<std::pair<std::string, Seen>> parse;
  if (full || !walked_) {
    ASSIGN_OR_RETURN(auto stamps, db_->Stamps());
    std::vector<std::pair<std::string, Seen>> files;
    Walk(&files);
    RETURN_IF_ERROR(db_->Begin());
    for (auto& [path, seen] : files) {
      auto it = stamps.find(path);
      if (it != stamps.end()) {
        bool same = it->second.size == seen.size && it->second.mtime_ns == seen.mtime_ns;
        stamps.erase(it);
        if (same) continue;
      }
      parse.emplace_back(std::move(path), seen);
    }
    // What the index holds that the tree no longer does.
    for (const auto& [path, stamp] : stamps) RETURN_IF_ERROR(db_->Remove(path));
    removed_ = removed_ || !stamps.empty();
    RETURN_IF_ERROR(db_->Commit());
    walked_ = true;
    dirty_.clear();
  } else if (!dirty_.empty()) {
    RETURN_IF_ERROR(db_->Begin());
    for (const std::string& path : dirty_) {
      struct stat st {};
      std::string abs = workspace_ + "/" + path;
      bool inside =
          path.find("/.odin/") == std::string::npos && path.rfind(".odin/", 0) != 0 && path.rfind(".git/", 0) != 0;
      if (!inside || lstat(abs.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
          static_cast<uint64_t>(st.st_size) > index::kMaxIndexedFileBytes) {
        RETURN_IF_ERROR(db_->Remove(path));
        removed_ = true;
        continue;
      }
      parse.emplace_back(path, Seen{st.st_size, MtimeNs(st)});
    }
    RETURN_IF_ERROR(db_->Commit());
    dirty_.clear();
  }
  if (parse.size() > kBulkFiles) {
    // Their old rows go now, while the indexes that find them stand.
    RETURN_IF_ERROR(db_->Begin());
    for (const auto& [path, seen] : parse) RETURN_IF_ERROR(db_->Remove(path));
    RETURN_IF_ERROR(db_->Commit());
    RETURN_IF_ERROR(db_->BeginBulk());
    bulk_ = true;
  }
  // Two batches for each worker at least, so that none idles while the
  // last batch of another runs; never a batch of a handful of files.
  int64_t total = 0;
  for (const auto& [path, seen] : parse) total += seen.size;
  int64_t share = std::max<int64_t>(total / std::max(1, 2 * workers), 64 << 10);
  int64_t max_bytes = std::min<int64_t>(kBatchBytes, share);
  std::vector<std::vector<std::string>> batches;
  int64_t bytes = 0;
  for (auto& [path, seen] : parse) {
    if (batches.empty() || batches.back().size() >= kBatchFiles || bytes + seen.size > max_bytes) {
      batches.emplace_back();
      bytes = 0;
    }
    bytes += seen.size;
    batches.back().push_back(std::move(path));
  }
  return batches;
}

void SymbolIndexer::Apply(std::unique_ptr<v1::IndexParseOutput> parsed) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(parsed));
  }
  if (!writer_.joinable()) {
    closing_ = false;
    writer_ = std::thread([this] { WriterLoop(); });
  }
  cv_.notify_one();
}

void SymbolIndexer::WriterLoop() {
  for (;;) {
    std::unique_ptr<v1::IndexParseOutput> next;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) return;  // closing, and nothing left
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    Status written = Write(*next);
    if (!written.ok()) {
      db_->Rollback();
      std::lock_guard<std::mutex> lock(mu_);
      if (write_status_.ok()) write_status_ = written;
    }
  }
}

Status SymbolIndexer::Finish() {
  if (writer_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closing_ = true;
    }
    cv_.notify_one();
    writer_.join();
  }
  Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    status = write_status_;
    write_status_ = Status::OK();
    closing_ = false;
  }
  if (bulk_) {
    bulk_ = false;
    Status remade = db_->EndBulk();
    if (status.ok()) status = remade;
  }
  return status;
}

Status SymbolIndexer::Write(const v1::IndexParseOutput& parsed) {
  ASSIGN_OR_RETURN(auto stamps, db_->Stamps());
  RETURN_IF_ERROR(db_->Begin());
  for (const v1::IndexedFile& f : parsed.files()) {
    const std::string& path = f.path();
    if (!f.error().empty()) {
      RETURN_IF_ERROR(db_->Remove(path));
      continue;
    }
    auto it = stamps.find(path);
    if (it != stamps.end() && it->second.sha256 == f.sha256()) {
      // Touched, not changed: the symbols stand.
      RETURN_IF_ERROR(db_->Restamp(path, static_cast<int64_t>(f.size_bytes()), f.mtime_ns()));
      continue;
    }
    index::FileSymbols symbols;
    symbols.language = index::ParseLanguage(f.language());
    symbols.lines = f.lines();
    symbols.has_errors = f.has_errors();
    symbols.symbols.reserve(static_cast<size_t>(f.symbols_size()));
    for (const v1::IndexedSymbol& s : f.symbols()) {
      index::Symbol o;
      o.kind = s.kind() <= static_cast<uint32_t>(index::SymbolKind::kVariable)
                   ? static_cast<index::SymbolKind>(s.kind())
                   : index::SymbolKind::kVariable;
      o.name = s.name();
      o.qualified_name = s.qualified_name();
      o.start_byte = s.start_byte();
      o.end_byte = s.end_byte();
      o.start_line = s.start_line();
      o.end_line = s.end_line();
      o.parent = s.parent() < f.symbols_size() ? s.parent() : -1;
      o.disambiguator = s.disambiguator();
      symbols.symbols.push_back(std::move(o));
    }
    symbols.references.reserve(static_cast<size_t>(f.references_size()));
    for (const v1::IndexedReference& r : f.references()) {
      index::Reference o;
      o.name = r.name();
      o.from = r.from() < f.symbols_size() ? r.from() : -1;
      o.call = r.call();
      o.count = r.count();
      o.lines.assign(r.lines().begin(), r.lines().end());
      symbols.references.push_back(std::move(o));
    }
    index::FileRecord rec{path,         symbols.language, f.sha256(),    static_cast<int64_t>(f.size_bytes()),
                          f.mtime_ns(), f.lines(),        f.has_errors()};
    RETURN_IF_ERROR(db_->Put(rec, symbols));
  }
  return db_->Commit();
}

}  // namespace odin

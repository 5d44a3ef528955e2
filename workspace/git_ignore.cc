#include "workspace/git_ignore.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <git2.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "base/unique_fd.h"
#include "workspace/git_index_file.h"

namespace odin {

namespace {

// The few libgit2 functions used, resolved once per process.
struct GitApi {
  decltype(&::git_libgit2_init) init;
  decltype(&::git_libgit2_opts) opts;
  decltype(&::git_repository_open_ext) open_ext;
  decltype(&::git_repository_workdir) workdir;
  decltype(&::git_repository_free) free;
  decltype(&::git_ignore_path_is_ignored) is_ignored;
  decltype(&::git_repository_path) path;
  decltype(&::git_repository_odb) odb;
  decltype(&::git_odb_read_header) odb_header;
  decltype(&::git_odb_free) odb_free;
  decltype(&::git_blob_lookup) blob_lookup;
  decltype(&::git_blob_rawcontent) blob_content;
  decltype(&::git_blob_rawsize) blob_size;
  decltype(&::git_blob_free) blob_free;

  static const GitApi* Get(std::string* error) {
    static std::string failed;
    static const GitApi* api = []() -> const GitApi* {
      void* lib = dlopen("libgit2.so.1.5", RTLD_NOW | RTLD_LOCAL);
      if (lib == nullptr) {
        failed = dlerror();
        return nullptr;
      }
      static GitApi a;
      bool all = true;
      auto get = [&](auto* fn, const char* name) {
        *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(dlsym(lib, name));
        if (*fn == nullptr) {
          failed = std::string("libgit2.so.1.5 has no ") + name;
          all = false;
        }
      };
      get(&a.init, "git_libgit2_init");
      get(&a.opts, "git_libgit2_opts");
      get(&a.open_ext, "git_repository_open_ext");
      get(&a.workdir, "git_repository_workdir");
      get(&a.free, "git_repository_free");
      get(&a.is_ignored, "git_ignore_path_is_ignored");
      get(&a.path, "git_repository_path");
      get(&a.odb, "git_repository_odb");
      get(&a.odb_header, "git_odb_read_header");
      get(&a.odb_free, "git_odb_free");
      get(&a.blob_lookup, "git_blob_lookup");
      get(&a.blob_content, "git_blob_rawcontent");
      get(&a.blob_size, "git_blob_rawsize");
      get(&a.blob_free, "git_blob_free");
      if (!all) return nullptr;
      if (a.init() < 0) {
        failed = "git_libgit2_init failed";
        return nullptr;
      }
      // Only ignore files, the index and objects are read (nothing is run):
      // a repository owned by someone else (a workspace Odin runs on as
      // root) may be asked too.
      a.opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
      return &a;
    }();
    if (api == nullptr) *error = failed;
    return api;
  }
};

}  // namespace

struct GitIgnore::Repo {
  const GitApi* api = nullptr;
  git_repository* repo = nullptr;
  // The index file as RememberIndex last found it, held open: git replaces
  // it by a rename, so this one stays as it was.
  UniqueFd index;
  struct stat index_st = {};
  git_odb* odb = nullptr;
  ~Repo() {
    if (odb != nullptr) api->odb_free(odb);
    if (repo != nullptr) api->free(repo);
  }
};

std::unique_ptr<GitIgnore> GitIgnore::Open(const std::string& workspace) {
  std::unique_ptr<GitIgnore> g(new GitIgnore());
  g->workspace_ = workspace;
  return g;
}

void GitIgnore::Load() {
  if (loaded_) return;
  loaded_ = true;
  const GitApi* api = GitApi::Get(&unavailable_);
  if (api == nullptr) return;
  auto repo = std::make_unique<Repo>();
  repo->api = api;
  if (api->open_ext(&repo->repo, workspace_.c_str(), 0, nullptr) != 0 || repo->repo == nullptr) {
    repo->repo = nullptr;
    unavailable_ = "not in a git repository";
    return;
  }
  const char* workdir = api->workdir(repo->repo);
  if (workdir == nullptr) {
    unavailable_ = "a bare repository";
    return;
  }
  std::string root = workdir;  // ends with '/'
  std::string ws = workspace_ + "/";
  if (ws.compare(0, root.size(), root) != 0) {
    unavailable_ = "the workspace is not inside its repository's work tree";
    return;
  }
  prefix_ = ws.substr(root.size());
  repo_ = std::move(repo);
}

GitIgnore::~GitIgnore() = default;

bool GitIgnore::IgnoreFilesReadable(const std::string& relative_path) {
  // libgit2 opens each .gitignore on the way with a plain open(2): a FIFO
  // there (or a symlink to one, or to a device) would block the
  // coordinator for good, a symlink out would read a host file. Each must
  // be a regular file of a sane size, looked at through the safe file
  // layer right before libgit2 reads it; otherwise nothing is taken for
  // ignored here (the paths are recorded as changes instead).
  constexpr uint64_t kMaxIgnoreFileBytes = 16 << 20;
  if (!files_) {
    StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(workspace_);
    if (!files.ok()) return false;
    files_.emplace(std::move(*files));
  }
  for (size_t slash = 0;; slash = relative_path.find('/', slash + 1)) {
    std::string dir = slash == 0 ? "" : relative_path.substr(0, slash);
    FileEntry e = files_->Look(dir.empty() ? ".gitignore" : dir + "/.gitignore");
    if (e.exists() && (!e.is_file() || e.size > kMaxIgnoreFileBytes)) return false;
    if (slash == std::string::npos) break;
  }
  return true;
}

bool GitIgnore::Ask(const std::string& relative_path) {
  int ignored = 0;
  if (repo_->api->is_ignored(&ignored, repo_->repo, (prefix_ + relative_path).c_str()) != 0) return false;
  return ignored != 0;
}

std::string GitIgnore::IgnoredRoot(const std::string& relative_path) {
  if (relative_path.empty()) return "";
  Load();
  if (repo_ == nullptr) return "";
  // Every .gitignore libgit2 may read for any prefix of the path, looked at
  // once.
  if (!IgnoreFilesReadable(relative_path)) return "";
  // Each directory on the way, outermost first, then the path itself.
  for (size_t slash = relative_path.find('/'); slash != std::string::npos; slash = relative_path.find('/', slash + 1)) {
    std::string dir = relative_path.substr(0, slash);
    auto it = memo_.find(dir);
    bool ignored = it != memo_.end() ? it->second : (memo_[dir] = Ask(dir + "/"));
    if (ignored) return dir;
  }
  return Ask(relative_path) ? relative_path : "";
}

bool GitIgnore::RememberIndex() {
  Load();
  if (repo_ == nullptr) return false;
  // An index past this is not one git made for a work tree people edit:
  // not worth reading through for a before-image (a convenience).
  constexpr int64_t kMaxIndexBytes = 256 << 20;
  std::string index_path = std::string(repo_->api->path(repo_->repo)) + "index";
  UniqueFd fd(open(index_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  struct stat st;
  if (!fd.valid() || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > kMaxIndexBytes) {
    repo_->index.reset();
    return false;
  }
  // The same file as held (not replaced, not written in place): kept.
  const struct stat& held = repo_->index_st;
  if (repo_->index.valid() && held.st_ino == st.st_ino && held.st_dev == st.st_dev && held.st_size == st.st_size &&
      held.st_mtim.tv_sec == st.st_mtim.tv_sec && held.st_mtim.tv_nsec == st.st_mtim.tv_nsec) {
    return true;
  }
  repo_->index = std::move(fd);
  repo_->index_st = st;
  return true;
}

bool GitIgnore::index_remembered() const { return repo_ != nullptr && repo_->index.valid(); }

std::vector<std::optional<std::string>> GitIgnore::IndexedContents(
    const std::vector<std::pair<std::string, IndexedStat>>& files, int64_t max_bytes) {
  std::vector<std::optional<std::string>> out(files.size());
  Load();
  if (repo_ == nullptr) return out;
  // The index as of the last look (RememberIndex), or as it is now if
  // none was taken: a command may have rewritten it (git checkout), and
  // only the index from before describes the files as they were. One pass
  // over it for all of them, in git's order.
  if (!repo_->index.valid() && !RememberIndex()) return out;
  std::vector<size_t> order;
  for (size_t i = 0; i < files.size(); ++i) {
    if (files[i].second.size >= 0 && files[i].second.size <= max_bytes) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return files[a].first < files[b].first; });
  order.erase(
      std::unique(order.begin(), order.end(), [&](size_t a, size_t b) { return files[a].first == files[b].first; }),
      order.end());
  std::vector<std::string> paths;
  for (size_t i : order) paths.push_back(prefix_ + files[i].first);
  std::vector<std::optional<GitIndexEntry>> entries = FindGitIndexEntries(repo_->index.get(), paths);
  for (size_t k = 0; k < order.size(); ++k) {
    if (entries[k]) out[order[k]] = ContentOf(*entries[k], files[order[k]].second);
  }
  return out;
}

std::optional<std::string> GitIgnore::ContentOf(const GitIndexEntry& entry, const IndexedStat& seen) {
  const GitApi* api = repo_->api;
  const GitIndexEntry* e = &entry;
  // Git's own test of "unchanged since it was added": the stat it recorded.
  // Entries git does not keep fresh (assume-unchanged, skip-worktree) say
  // nothing about the file.
  if (e->assume_valid || e->skip_worktree) return std::nullopt;
  auto same_time = [](uint32_t seconds, uint32_t nanos, int64_t ns) {
    return seconds == static_cast<uint32_t>(ns / 1'000'000'000) &&
           (nanos == 0 || nanos == static_cast<uint32_t>(ns % 1'000'000'000));
  };
  bool executable = (seen.mode & 0100) != 0;
  if (e->size != static_cast<uint32_t>(seen.size) || e->ino != static_cast<uint32_t>(seen.ino) ||
      !same_time(e->mtime_s, e->mtime_ns, seen.mtime_ns) || !same_time(e->ctime_s, e->ctime_ns, seen.ctime_ns) ||
      e->mode != (executable ? 0100755u : 0100644u)) {
    return std::nullopt;
  }
  // Racily clean: changed in the same instant the index was written, so
  // the recorded stat cannot vouch for the bytes (git compares content).
  const struct stat& index_st = repo_->index_st;
  int64_t index_mtime = static_cast<int64_t>(index_st.st_mtim.tv_sec) * 1'000'000'000 + index_st.st_mtim.tv_nsec;
  if (seen.mtime_ns >= index_mtime) return std::nullopt;
  // The blob's size from its header first: a lying index must not make us
  // inflate a huge object.
  if (repo_->odb == nullptr && api->odb(&repo_->odb, repo_->repo) != 0) {
    repo_->odb = nullptr;
    return std::nullopt;
  }
  size_t length = 0;
  git_object_t type = GIT_OBJECT_INVALID;
  git_oid id;
  memcpy(id.id, e->oid, sizeof id.id);
  if (api->odb_header(&length, &type, repo_->odb, &id) != 0 || type != GIT_OBJECT_BLOB ||
      length != static_cast<size_t>(seen.size)) {
    return std::nullopt;
  }
  git_blob* blob = nullptr;
  if (api->blob_lookup(&blob, repo_->repo, &id) != 0) return std::nullopt;
  std::optional<std::string> content;
  if (static_cast<int64_t>(api->blob_size(blob)) == seen.size) {
    content.emplace(static_cast<const char*>(api->blob_content(blob)), static_cast<size_t>(seen.size));
  }
  api->blob_free(blob);
  return content;
}

}  // namespace odin

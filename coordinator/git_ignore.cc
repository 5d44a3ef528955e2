#include "coordinator/git_ignore.h"

#include <dlfcn.h>
#include <git2.h>

#include <type_traits>

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
      if (!all) return nullptr;
      if (a.init() < 0) {
        failed = "git_libgit2_init failed";
        return nullptr;
      }
      // Only ignore files are read: a repository owned by someone else (a
      // workspace Odin runs on as root) may be asked too.
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
  ~Repo() {
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

bool GitIgnore::Ask(const std::string& relative_path) {
  int ignored = 0;
  if (repo_->api->is_ignored(&ignored, repo_->repo, (prefix_ + relative_path).c_str()) != 0) return false;
  return ignored != 0;
}

std::string GitIgnore::IgnoredRoot(const std::string& relative_path) {
  if (relative_path.empty()) return "";
  Load();
  if (repo_ == nullptr) return "";
  // Each directory on the way, outermost first, then the path itself.
  for (size_t slash = relative_path.find('/'); slash != std::string::npos; slash = relative_path.find('/', slash + 1)) {
    std::string dir = relative_path.substr(0, slash);
    auto it = memo_.find(dir);
    bool ignored = it != memo_.end() ? it->second : (memo_[dir] = Ask(dir + "/"));
    if (ignored) return dir;
  }
  return Ask(relative_path) ? relative_path : "";
}

}  // namespace odin

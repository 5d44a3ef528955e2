#include "coordinator/protected_paths.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>

#include "base/file_util.h"

namespace odin {

const std::vector<std::string>& ProtectedRelativePaths() {
  static const std::vector<std::string> kPaths = {
      ".git/hooks", ".git/config", ".odin",         "odinconfig.json", "ODIN.md",  "AGENTS.md", ".bashrc",
      ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zprofile", ".zshenv", ".envrc",
  };
  return kPaths;
}

namespace {

// The files a snapshot covers: the protected ones at the root, and git's hooks.
std::vector<std::string> Watched(const std::string& workspace) {
  std::vector<std::string> out;
  for (const std::string& p : ProtectedRelativePaths()) {
    if (p != ".odin" && p != ".git/hooks") out.push_back(p);
  }
  DIR* d = opendir((workspace + "/.git/hooks").c_str());
  if (d != nullptr) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') out.push_back(std::string(".git/hooks/") + e->d_name);
    }
    closedir(d);
  }
  return out;
}

constexpr uint64_t kMaxWatchedBytes = 1 << 20;

}  // namespace

ProtectedSnapshot SnapshotProtected(const std::string& workspace) {
  ProtectedSnapshot s;
  for (const std::string& rel : Watched(workspace)) {
    StatusOr<std::string> content = ReadRegularFile(workspace + "/" + rel, kMaxWatchedBytes);
    if (content.ok()) s.files[rel] = std::move(*content);
  }
  return s;
}

std::vector<std::string> RestoreProtected(const std::string& workspace, const ProtectedSnapshot& before) {
  std::vector<std::string> restored;
  std::vector<std::string> now = Watched(workspace);
  for (const auto& [rel, content] : before.files) {
    if (std::find(now.begin(), now.end(), rel) == now.end()) now.push_back(rel);
  }
  for (const std::string& rel : now) {
    std::string path = workspace + "/" + rel;
    StatusOr<std::string> current = ReadRegularFile(path, kMaxWatchedBytes);
    auto was = before.files.find(rel);
    if (was == before.files.end()) {
      if (!PathExists(path)) continue;
      if (unlink(path.c_str()) == 0) restored.push_back(rel);  // made by the command
      continue;
    }
    if (current.ok() && *current == was->second) continue;
    (void)MakeDirs(DirName(path));
    if (WriteFileAtomic(path, was->second).ok()) restored.push_back(rel);
  }
  return restored;
}

bool IsProtectedPath(const std::string& path, const std::string& workspace) {
  if (path.size() <= workspace.size() || path.compare(0, workspace.size(), workspace) != 0 ||
      path[workspace.size()] != '/') {
    return false;
  }
  std::string rel = path.substr(workspace.size() + 1);
  // Instructions files count in every directory: they are read from the root
  // down to the working directory.
  std::string base = rel.substr(rel.rfind('/') + 1);
  if (base == "ODIN.md" || base == "AGENTS.md") return true;
  for (const std::string& p : ProtectedRelativePaths()) {
    if (rel == p || (rel.size() > p.size() && rel.compare(0, p.size(), p) == 0 && rel[p.size()] == '/')) return true;
  }
  return false;
}

}  // namespace odin

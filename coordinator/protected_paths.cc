#include "coordinator/protected_paths.h"

namespace odin {

const std::vector<std::string>& ProtectedRelativePaths() {
  static const std::vector<std::string> kPaths = {
      ".git/hooks", ".git/config", ".odin",         "odinconfig.json", "ODIN.md",  "AGENTS.md", ".bashrc",
      ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zprofile", ".zshenv", ".envrc",
  };
  return kPaths;
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

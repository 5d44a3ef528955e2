#include "tools/workspace_path.h"

#include <filesystem>

#include "base/file_util.h"

namespace odin {

bool IsInsideDir(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path == root ||
         (path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/');
}

StatusOr<std::string> ResolvePath(const std::string& given, const std::string& base) {
  if (given.empty()) return Status::InvalidArgument("path", "must not be empty");
  if (given.find('\0') != std::string::npos) return Status::InvalidArgument("path", "must not contain NUL");
  std::filesystem::path p = given[0] == '/' ? std::filesystem::path(given) : std::filesystem::path(base) / given;
  std::string normal = p.lexically_normal().string();
  if (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  // Resolve symlinks in the longest part that exists; the rest is created later.
  std::string existing = normal, rest;
  while (!PathExists(existing)) {
    size_t slash = existing.find_last_of('/');
    if (slash == std::string::npos || existing == "/") break;
    rest = existing.substr(slash) + rest;
    existing = slash == 0 ? "/" : existing.substr(0, slash);
  }
  StatusOr<std::string> real = RealPath(existing);
  if (!real.ok()) return real.status();
  std::string resolved = (*real == "/" ? "" : *real) + rest;
  if (resolved.empty()) resolved = "/";
  return resolved;
}

std::string LexicalPath(const std::string& given, const std::string& workspace) {
  std::filesystem::path p = given[0] == '/' ? std::filesystem::path(given) : std::filesystem::path(workspace) / given;
  std::string normal = p.lexically_normal().string();
  if (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

bool IsOutsideWorkspace(const std::string& given, const std::string& workspace) {
  if (given.empty()) return false;
  if (!IsInsideDir(LexicalPath(given, workspace), workspace)) return true;
  StatusOr<std::string> resolved = ResolvePath(given, workspace);
  return resolved.ok() && !IsInsideDir(*resolved, workspace);
}

StatusOr<std::string> ResolveWorkspacePath(const std::string& given, const std::string& workspace) {
  if (given.empty()) return Status::InvalidArgument("path", "must not be empty");
  std::string normal = LexicalPath(given, workspace);
  auto outside = [&](const std::string& where) {
    return Status::InvalidArgument(
        given, "is outside the workspace " + workspace + (where == normal ? "" : " (it resolves to " + where + ")"));
  };
  // Lexically outside: refused before anything outside is looked at.
  if (!IsInsideDir(normal, workspace)) return outside(normal);
  ASSIGN_OR_RETURN(std::string resolved, ResolvePath(given, workspace));
  if (!IsInsideDir(resolved, workspace)) return outside(resolved);
  return resolved;
}

StatusOr<std::string> ResolveToolPath(const std::string& given, const std::string& workspace,
                                      const std::string& approved) {
  StatusOr<std::string> inside = ResolveWorkspacePath(given, workspace);
  if (inside.ok() || approved.empty()) return inside;
  StatusOr<std::string> resolved = ResolvePath(given, workspace);
  if (resolved.ok() && IsInsideDir(*resolved, approved)) return resolved;
  return inside;
}

std::string DisplayPath(const std::string& absolute, const std::string& workspace) {
  if (absolute == workspace) return ".";
  if (IsInsideDir(absolute, workspace)) return absolute.substr(workspace == "/" ? 1 : workspace.size() + 1);
  return absolute;
}

}  // namespace odin

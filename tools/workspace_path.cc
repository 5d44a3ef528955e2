#include "tools/workspace_path.h"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

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

namespace {

std::vector<std::string> Segments(const std::string& path) {
  std::vector<std::string> out;
  std::stringstream in(path);
  std::string s;
  while (std::getline(in, s, '/')) {
    if (!s.empty()) out.push_back(s);
  }
  return out;
}

}  // namespace

PathPatternState::PathPatternState(const std::string& pattern)
    : pattern_(std::make_shared<const std::vector<std::string>>(Segments(pattern))) {
  const std::vector<std::string>& p = *pattern_;
  reach_.assign(p.size() + 1, 0);
  reach_[0] = 1;
  for (size_t i = 0; i < p.size() && p[i] == "**"; ++i) reach_[i + 1] = 1;
}

PathPatternState PathPatternState::Enter(std::string_view segment) const {
  const std::vector<std::string>& p = *pattern_;
  PathPatternState next = *this;
  std::fill(next.reach_.begin(), next.reach_.end(), 0);
  std::string seg(segment);
  for (size_t i = 0; i < p.size(); ++i) {
    if (!reach_[i]) continue;
    if (p[i] == "**") next.reach_[i] = 1;  // ** takes this segment too
    if (p[i] == "**" || fnmatch(p[i].c_str(), seg.c_str(), 0) == 0) next.reach_[i + 1] = 1;
  }
  for (size_t i = 0; i < p.size(); ++i) {
    if (next.reach_[i] && p[i] == "**") next.reach_[i + 1] = 1;  // ** may also take nothing
  }
  return next;
}

PathPatternState PathPatternState::EnterPath(const std::string& path) const {
  PathPatternState state = *this;
  for (const std::string& seg : Segments(path)) state = state.Enter(seg);
  return state;
}

bool PathPatternState::Covers() const { return reach_.back() != 0; }

bool PathPatternState::MayCoverBelow() const {
  for (size_t i = 0; i + 1 < reach_.size(); ++i) {
    if (reach_[i]) return true;
  }
  return false;
}

bool PathPatternCovers(const std::string& pattern, const std::string& path) {
  // The path, or a directory above it.
  PathPatternState state(pattern);
  for (const std::string& seg : Segments(path)) {
    state = state.Enter(seg);
    if (state.Covers()) return true;
  }
  return false;
}

}  // namespace odin

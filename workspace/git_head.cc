#include "workspace/git_head.h"

#include <sys/stat.h>

#include <sstream>

#include "base/file_util.h"

namespace odin {

namespace {

constexpr size_t kMaxRefFileBytes = 64 << 10;
constexpr size_t kMaxPackedRefsBytes = 64 << 20;

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

bool IsHex(const std::string& s) {
  if (s.size() != 40 && s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// The git directory for a work tree at dir: dir/.git, or where a .git file
// points. "" if there is none.
std::string GitDirAt(const std::string& dir) {
  std::string dot_git = dir + "/.git";
  struct stat st;
  if (lstat(dot_git.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return dot_git;
  StatusOr<std::string> file = ReadRegularFile(dot_git, kMaxRefFileBytes);
  if (!file.ok()) return "";
  std::string line = Trim(*file);
  if (line.rfind("gitdir: ", 0) != 0) return "";
  std::string to = line.substr(8);
  return to.empty() || to[0] == '/' ? to : dir + "/" + to;
}

// The commit a ref names, from its loose file or packed-refs (looked up in
// the worktree's git directory, then the common one).
std::string ResolveRef(const std::string& git_dir, const std::string& common_dir, const std::string& ref) {
  if (ref.find("..") != std::string::npos) return "";
  for (const std::string& dir : {git_dir, common_dir}) {
    StatusOr<std::string> loose = ReadRegularFile(dir + "/" + ref, kMaxRefFileBytes);
    if (loose.ok() && IsHex(Trim(*loose))) return Trim(*loose);
  }
  StatusOr<std::string> packed = ReadRegularFile(common_dir + "/packed-refs", kMaxPackedRefsBytes);
  if (!packed.ok()) return "";
  std::istringstream in(*packed);
  std::string line;
  while (std::getline(in, line)) {
    size_t space = line.find(' ');
    if (space == std::string::npos || line[0] == '#' || line[0] == '^') continue;
    if (Trim(line.substr(space + 1)) == ref && IsHex(line.substr(0, space))) return line.substr(0, space);
  }
  return "";
}

}  // namespace

std::string GitHead::Describe() const {
  if (commit.empty()) return ref.empty() ? "no commit" : ref + " (no commit yet)";
  std::string name = ref.rfind("refs/heads/", 0) == 0 ? ref.substr(11) : ref;
  return (ref.empty() ? "detached" : name) + " at " + commit.substr(0, 12);
}

GitHead ReadGitHead(const std::string& workspace) {
  GitHead head;
  std::string dir = workspace;
  std::string git_dir;
  while (true) {
    git_dir = GitDirAt(dir);
    if (!git_dir.empty() || dir == "/" || dir.empty()) break;
    dir = DirName(dir);
  }
  if (git_dir.empty()) return head;
  std::string common_dir = git_dir;
  StatusOr<std::string> common = ReadRegularFile(git_dir + "/commondir", kMaxRefFileBytes);
  if (common.ok() && !Trim(*common).empty()) {
    std::string c = Trim(*common);
    common_dir = c[0] == '/' ? c : git_dir + "/" + c;
  }
  StatusOr<std::string> file = ReadRegularFile(git_dir + "/HEAD", kMaxRefFileBytes);
  if (!file.ok()) return head;
  std::string line = Trim(*file);
  if (line.rfind("ref: ", 0) == 0) {
    head.ref = line.substr(5);
    // A repository's text, shown to people: a ref name git would accept
    // looks like this; anything else names no commit.
    bool plausible = head.ref.size() <= 255 && head.ref.rfind("refs/", 0) == 0;
    for (char c : head.ref) plausible = plausible && c > ' ' && c < 0x7f && c != '\\';
    if (!plausible) {
      head.ref = "(an unreadable ref)";
      return head;
    }
    head.commit = ResolveRef(git_dir, common_dir, head.ref);
  } else if (IsHex(line)) {
    head.commit = line;
  }
  return head;
}

}  // namespace odin

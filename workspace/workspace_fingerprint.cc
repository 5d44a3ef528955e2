#include "workspace/workspace_fingerprint.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "base/sha256.h"
#include "workspace/workspace_files.h"

namespace odin {

namespace {

// Files beyond this size are represented by their metadata only.
constexpr int64_t kMaxHashedBytes = 64 << 20;

std::string HashFileAt(int dir_fd, const char* name, const struct stat& st) {
  if (S_ISLNK(st.st_mode)) {
    char target[4096];
    ssize_t n = readlinkat(dir_fd, name, target, sizeof target);
    return "link:" + std::string(target, n > 0 ? static_cast<size_t>(n) : 0);
  }
  if (st.st_size > kMaxHashedBytes) {
    return "meta:" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec);
  }
  int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return "unreadable";
  Sha256 h;
  char buf[64 * 1024];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) h.Update(std::string_view(buf, static_cast<size_t>(n)));
  close(fd);
  return HexDigest(h.Finish());
}

}  // namespace

namespace {

// 64 bits that stand for one entry. Not a security boundary: it only has to
// tell states of one workspace apart.
uint64_t Mix(const std::string& path, const std::string& token) {
  std::string both = path;
  both.push_back('\0');
  both += token;
  return std::hash<std::string>{}(both)*0x9E3779B97F4A7C15ull + 1;
}

}  // namespace

void WorkspaceFingerprint::Note(int dir_fd, const char* name, std::string path, const struct stat& st,
                                bool by_content) {
  int64_t mtime = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
  auto [it, added] = entries_.try_emplace(std::move(path));
  Entry& en = it->second;
  en.scan = scan_;
  if (!added && en.size == st.st_size && en.mtime_ns == mtime && en.ino == st.st_ino) return;
  // New or changed. Files there at the first scan stand in by metadata
  // until they change; from then on (and for later files) by content.
  std::string token =
      by_content ? HashFileAt(dir_fd, name, st) : "meta:" + std::to_string(st.st_size) + ":" + std::to_string(mtime);
  uint64_t mix = Mix(it->first, token);
  if (!added) Drop(en);
  en.mix = mix;
  sum_ += mix;
  xor_ ^= mix;
  en.size = st.st_size;
  en.mtime_ns = mtime;
  en.ino = st.st_ino;
}

void WorkspaceFingerprint::Drop(const Entry& en) {
  sum_ -= en.mix;
  xor_ ^= en.mix;
}

std::string WorkspaceFingerprint::Digest() const {
  char buf[48];
  snprintf(buf, sizeof buf, "%016llx%016llx%08zx", static_cast<unsigned long long>(sum_),
           static_cast<unsigned long long>(xor_), entries_.size());
  return buf;
}

std::string WorkspaceFingerprint::Update(const std::vector<std::string>& paths) {
  if (scan_ == 0) return Compute();
  for (const std::string& rel : paths) {
    // What a scan would skip stays out (outside, .git, .odin).
    if (rel.empty() || rel[0] == '/' || rel == ".." || rel.rfind("../", 0) == 0) continue;
    std::string top = rel.substr(0, rel.find('/'));
    if (top == ".git" || top == ".odin") continue;
    // Through the safe file layer: its directory opened with no symlink on
    // the way, the entry itself not followed.
    size_t slash = rel.rfind('/');
    std::string name = slash == std::string::npos ? rel : rel.substr(slash + 1);
    StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(root_);
    StatusOr<UniqueFd> dir =
        files.ok() ? files->OpenDirectory(slash == std::string::npos ? "" : rel.substr(0, slash)) : files.status();
    struct stat st;
    if (!dir.ok() || fstatat(dir->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))) {
      auto it = entries_.find(rel);
      if (it != entries_.end()) {
        Drop(it->second);
        entries_.erase(it);
      }
      continue;
    }
    Note(dir->get(), name.c_str(), rel, st, /*by_content=*/true);
  }
  return Digest();
}

void WorkspaceFingerprint::Scan(int dir_fd, const std::string& rel, size_t* count) {
  DIR* dir = fdopendir(dir_fd);
  if (dir == nullptr) {
    close(dir_fd);
    return;
  }
  std::vector<std::string> subdirs;
  while (dirent* e = readdir(dir)) {
    const char* name = e->d_name;
    if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
    if (rel.empty() && (strcmp(name, ".git") == 0 || strcmp(name, ".odin") == 0)) continue;
    if (*count >= max_files_) break;
    if (e->d_type == DT_DIR) {
      subdirs.emplace_back(name);
      continue;
    }
    struct stat st;
    if (fstatat(dirfd(dir), name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      subdirs.emplace_back(name);
      continue;
    }
    if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) continue;
    ++*count;
    Note(dirfd(dir), name, rel.empty() ? std::string(name) : rel + "/" + name, st, /*by_content=*/scan_ > 1);
  }
  for (const std::string& name : subdirs) {
    int fd = openat(dirfd(dir), name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0) Scan(fd, rel.empty() ? name : rel + "/" + name, count);
  }
  closedir(dir);
}

std::string WorkspaceFingerprint::Compute() {
  ++scan_;
  StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(root_);
  StatusOr<UniqueFd> root = files.ok() ? files->OpenDirectory("") : files.status();
  size_t count = 0;
  if (root.ok()) Scan(root->release(), "", &count);
  // Entries the scan did not see were deleted.
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.scan != scan_) {
      Drop(it->second);
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  return Digest();
}

}  // namespace odin

#include "coordinator/workspace_fingerprint.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "base/sha256.h"

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

void WorkspaceFingerprint::Scan(int dir_fd, const std::string& rel, size_t* count) {
  DIR* dir = fdopendir(dir_fd);
  if (dir == nullptr) {
    close(dir_fd);
    return;
  }
  std::vector<std::string> subdirs;
  while (dirent* e = readdir(dir)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (rel.empty() && (name == ".git" || name == ".odin")) continue;
    if (*count >= max_files_) break;
    struct stat st;
    if (fstatat(dirfd(dir), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    std::string path = rel.empty() ? name : rel + "/" + name;
    if (S_ISDIR(st.st_mode)) {
      subdirs.push_back(name);
      continue;
    }
    if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) continue;
    ++*count;
    int64_t mtime = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
    Entry& en = entries_[path];
    bool changed = en.size != st.st_size || en.mtime_ns != mtime || en.ino != st.st_ino;
    if (changed && !first_) en.digest = HashFileAt(dirfd(dir), name.c_str(), st);
    en.size = st.st_size;
    en.mtime_ns = mtime;
    en.ino = st.st_ino;
    en.seen = true;
  }
  for (const std::string& name : subdirs) {
    int fd = openat(dirfd(dir), name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0) Scan(fd, rel.empty() ? name : rel + "/" + name, count);
  }
  closedir(dir);
}

std::string WorkspaceFingerprint::Compute() {
  for (auto& [path, e] : entries_) e.seen = false;
  int fd = open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  size_t count = 0;
  if (fd >= 0) Scan(fd, "", &count);
  first_ = false;
  Sha256 h;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (!it->second.seen) {
      it = entries_.erase(it);  // deleted
      continue;
    }
    const Entry& e = it->second;
    h.Update(it->first);
    h.Update(std::string_view("\0", 1));
    h.Update(e.digest.empty() ? "meta:" + std::to_string(e.size) + ":" + std::to_string(e.mtime_ns) : e.digest);
    h.Update(std::string_view("\n", 1));
    ++it;
  }
  return HexDigest(h.Finish());
}

}  // namespace odin

#include "tools/locked_file.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "base/file_util.h"
#include "tools/workspace_path.h"

namespace odin {
namespace {

int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

// Opens rel below root_fd, refusing symlinks and anything that leaves root.
// Without openat2 (kernels before 5.6) it falls back to O_NOFOLLOW on the
// last component only.
int OpenBeneath(int root_fd, const std::string& rel, int flags) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  int fd = static_cast<int>(syscall(SYS_openat2, root_fd, rel.c_str(), &how, sizeof how));
  if (fd < 0 && errno == ENOSYS) fd = openat(root_fd, rel.c_str(), flags | O_CLOEXEC | O_NOFOLLOW);
  return fd;
}

}  // namespace

Status LockedFile::OpenParents(bool create) {
  if (!create || rel_dir_ == ".") {
    dir_fd_.reset(OpenBeneath(ws_fd_.get(), rel_dir_, O_RDONLY | O_DIRECTORY));
    if (!dir_fd_.valid() && errno == ELOOP) return Status::InvalidArgument(path_, "goes through a symbolic link");
    if (!dir_fd_.valid() && errno == EXDEV) return Status::InvalidArgument(path_, "is outside the workspace");
    if (!dir_fd_.valid() && errno != ENOENT) return PosixError(path_, errno);
    return Status::OK();
  }
  // Create the missing directories one at a time, each beneath the last.
  UniqueFd cur(dup(ws_fd_.get()));
  size_t start = 0;
  while (start <= rel_dir_.size()) {
    size_t slash = rel_dir_.find('/', start);
    std::string part = rel_dir_.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    start = slash == std::string::npos ? rel_dir_.size() + 1 : slash + 1;
    if (part.empty()) continue;
    if (mkdirat(cur.get(), part.c_str(), 0755) != 0 && errno != EEXIST) {
      return PosixError("mkdir " + part + " for " + path_, errno);
    }
    UniqueFd next(OpenBeneath(cur.get(), part, O_RDONLY | O_DIRECTORY));
    if (!next.valid()) return PosixError(path_, errno);
    cur = std::move(next);
  }
  dir_fd_ = std::move(cur);
  return Status::OK();
}

StatusOr<std::unique_ptr<LockedFile>> LockedFile::Open(const std::string& workspace, const std::string& path,
                                                       uint64_t max_bytes, Lock lock) {
  std::unique_ptr<LockedFile> f(new LockedFile(path));
  if (path == workspace) return Status::InvalidArgument(path, "is a directory, not a file");
  if (!IsInsideDir(path, workspace)) return Status::InvalidArgument(path, "is outside the workspace");
  std::string rel = path.substr(workspace == "/" ? 1 : workspace.size() + 1);
  size_t slash = rel.find_last_of('/');
  f->rel_dir_ = slash == std::string::npos ? "." : rel.substr(0, slash);
  f->name_ = slash == std::string::npos ? rel : rel.substr(slash + 1);
  f->ws_fd_.reset(open(workspace.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!f->ws_fd_.valid()) return PosixError(workspace, errno);
  RETURN_IF_ERROR(f->OpenParents(false));
  if (!f->dir_fd_.valid()) return f;  // no such directory: no such file

  for (int attempt = 0; attempt < 100; ++attempt) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer.
    UniqueFd fd(openat(f->dir_fd_.get(), f->name_.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid() && errno == ENOENT) return f;
    if (!fd.valid() && errno == ELOOP) return Status::InvalidArgument(path, "is a symbolic link");
    if (!fd.valid()) return PosixError(path, errno);
    struct stat st;
    if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      bool dir = S_ISDIR(st.st_mode);
      return Status::InvalidArgument(path, dir ? "is a directory, not a file" : "is not a regular file");
    }
    int rc;
    do {
      rc = flock(fd.get(), lock == Lock::kShared ? LOCK_SH : LOCK_EX);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) return PosixError("lock " + path, errno);
    // While we waited, another writer may have renamed a new file into place:
    // then our fd holds the old inode. Start over on the new one.
    struct stat now;
    if (fstatat(f->dir_fd_.get(), f->name_.c_str(), &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_ino != st.st_ino ||
        now.st_dev != st.st_dev) {
      continue;
    }
    fstat(fd.get(), &st);
    if (static_cast<uint64_t>(st.st_size) > max_bytes) {
      return Status::ResourceExhausted(path, "is " + std::to_string(st.st_size) + " bytes, over the limit of " +
                                                 std::to_string(max_bytes) + " bytes");
    }
    std::string content;
    content.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < content.size()) {
      ssize_t n = pread(fd.get(), content.data() + got, content.size() - got, static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return PosixError("read " + path, errno);
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    content.resize(got);
    f->fd_ = std::move(fd);
    f->content_ = std::move(content);
    f->stat_ = {static_cast<uint64_t>(got), MtimeNs(st), static_cast<mode_t>(st.st_mode & 07777)};
    return f;
  }
  return Status::Unavailable(path, "keeps being replaced by other writers");
}

Status LockedFile::Replace(std::string_view content) {
  if (!dir_fd_.valid()) RETURN_IF_ERROR(OpenParents(true));
  uint8_t random[6];
  if (getrandom(random, sizeof random, 0) != sizeof random) return PosixError("getrandom", errno);
  std::string tmp = "." + name_ + ".odin-";
  for (uint8_t b : random) tmp += "0123456789abcdef"[b % 16];
  mode_t mode = exists() ? stat_.mode : 0644;
  int fd = openat(dir_fd_.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return PosixError("create a temporary file for " + path_, errno);
  Status s = WriteAll(fd, content, "write " + path_);
  if (s.ok() && fchmod(fd, mode) != 0) s = PosixError("chmod " + path_, errno);
  if (s.ok() && fsync(fd) != 0) s = PosixError("fsync " + path_, errno);
  if (close(fd) != 0 && s.ok()) s = PosixError("close " + path_, errno);
  if (s.ok()) {
    if (exists()) {
      if (renameat(dir_fd_.get(), tmp.c_str(), dir_fd_.get(), name_.c_str()) != 0) {
        s = PosixError("rename to " + path_, errno);
      }
    } else if (linkat(dir_fd_.get(), tmp.c_str(), dir_fd_.get(), name_.c_str(), 0) != 0) {
      // link never replaces: if the file appeared meanwhile, that is a conflict.
      s = errno == EEXIST ? Status::AlreadyExists(path_, "was created by someone else meanwhile")
                          : PosixError("create " + path_, errno);
    }
  }
  unlinkat(dir_fd_.get(), tmp.c_str(), 0);  // after rename it is gone already; after link it is a second name
  if (!s.ok()) return s;
  fsync(dir_fd_.get());  // the rename itself must survive a crash
  return Status::OK();
}

StatusOr<FileStat> LockedFile::StatNow() const {
  struct stat st;
  if (!dir_fd_.valid() || fstatat(dir_fd_.get(), name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return PosixError(path_, errno);
  }
  return FileStat{static_cast<uint64_t>(st.st_size), MtimeNs(st), static_cast<mode_t>(st.st_mode & 07777)};
}

}  // namespace odin

#include "tools/locked_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/file_util.h"
#include "tools/workspace_path.h"

namespace odin {
namespace {

int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

}  // namespace

Status LockedFile::OpenParents(bool create) {
  // The directory, opened through the safe file layer: no symlink on the
  // way, never above the workspace; made (one directory at a time, each in
  // the one before) where create says so. (InitTool runs this on the host.)
  std::string dir = rel_dir_ == "." ? "" : rel_dir_;
  auto translate = [this](const Status& s) {
    if (s.code() == StatusCode::kPermissionDenied && s.message().find("symlink") != std::string::npos) {
      return Status::InvalidArgument(path_, "goes through a symbolic link");
    }
    if (s.code() == StatusCode::kPermissionDenied) return Status::InvalidArgument(path_, "is outside the workspace");
    return s;
  };
  if (create && !dir.empty()) {
    if (Status made = ws_->MakeDirs(dir, 0755); !made.ok()) return translate(made);
  }
  StatusOr<UniqueFd> fd = ws_->OpenDirectory(dir);
  if (!fd.ok()) {
    if (fd.status().code() == StatusCode::kNotFound) return Status::OK();  // no such directory: no such file
    return translate(fd.status());
  }
  dir_fd_ = std::move(*fd);
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
  StatusOr<WorkspaceFiles> ws = WorkspaceFiles::Open(workspace);
  if (!ws.ok()) return ws.status();
  f->ws_.emplace(std::move(*ws));
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

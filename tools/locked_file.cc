#include "tools/locked_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/file_util.h"

namespace odin {
namespace {

int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return PosixError("write " + path, errno);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::OK();
}

}  // namespace

LockedFile::~LockedFile() {
  if (fd_ >= 0) close(fd_);  // releases the flock
}

StatusOr<std::unique_ptr<LockedFile>> LockedFile::Open(const std::string& path, uint64_t max_bytes) {
  std::unique_ptr<LockedFile> f(new LockedFile(path));
  for (int attempt = 0; attempt < 100; ++attempt) {
    int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) return f;
    if (fd < 0 && errno == ELOOP) return Status::InvalidArgument(path, "is a symbolic link");
    if (fd < 0) return PosixError(path, errno);
    struct stat st;
    if (fstat(fd, &st) != 0) {
      int err = errno;
      close(fd);
      return PosixError(path, err);
    }
    if (S_ISDIR(st.st_mode)) {
      close(fd);
      return Status::InvalidArgument(path, "is a directory, not a file");
    }
    if (!S_ISREG(st.st_mode)) {
      close(fd);
      return Status::InvalidArgument(path, "is not a regular file");
    }
    int rc;
    do {
      rc = flock(fd, LOCK_EX);
    } while (rc != 0 && errno == EINTR);
    // While we waited, another writer may have renamed a new file into place:
    // then our fd holds the old inode. Start over on the new one.
    struct stat now;
    if (::stat(path.c_str(), &now) != 0 || now.st_ino != st.st_ino || now.st_dev != st.st_dev) {
      close(fd);
      continue;
    }
    fstat(fd, &st);
    if (static_cast<uint64_t>(st.st_size) > max_bytes) {
      close(fd);
      return Status::ResourceExhausted(path, "is " + std::to_string(st.st_size) + " bytes, over the limit of " +
                                                 std::to_string(max_bytes) + " bytes");
    }
    std::string content;
    content.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < content.size()) {
      ssize_t n = pread(fd, content.data() + got, content.size() - got, static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        int err = errno;
        close(fd);
        return PosixError("read " + path, err);
      }
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    content.resize(got);
    f->fd_ = fd;
    f->content_ = std::move(content);
    f->stat_ = {static_cast<uint64_t>(got), MtimeNs(st), static_cast<mode_t>(st.st_mode & 07777)};
    return f;
  }
  return Status::Unavailable(path, "keeps being replaced by other writers");
}

Status LockedFile::Replace(std::string_view content) {
  std::string dir = DirName(path_);
  RETURN_IF_ERROR(MakeDirs(dir));
  std::string base = path_.substr(path_.find_last_of('/') + 1);
  std::string tmp = dir + "/." + base + ".odin-XXXXXX";
  int fd = mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return PosixError("create a temporary file in " + dir, errno);
  Status s = WriteAll(fd, content, tmp);
  mode_t mode = exists() ? stat_.mode : 0644;
  if (s.ok() && fchmod(fd, mode) != 0) s = PosixError("chmod " + tmp, errno);
  if (s.ok() && fsync(fd) != 0) s = PosixError("fsync " + tmp, errno);
  if (close(fd) != 0 && s.ok()) s = PosixError("close " + tmp, errno);
  if (s.ok()) {
    if (exists()) {
      if (rename(tmp.c_str(), path_.c_str()) != 0) s = PosixError("rename to " + path_, errno);
    } else if (link(tmp.c_str(), path_.c_str()) != 0) {
      // link never replaces: if the file appeared meanwhile, that is a conflict.
      s = errno == EEXIST ? Status::AlreadyExists(path_, "was created by someone else meanwhile")
                          : PosixError("create " + path_, errno);
    }
  }
  unlink(tmp.c_str());  // after rename it is gone already; after link it is a second name
  if (!s.ok()) return s;
  int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);  // the rename itself must survive a crash
    close(dfd);
  }
  return Status::OK();
}

StatusOr<FileStat> LockedFile::StatNow() const {
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0) return PosixError(path_, errno);
  return FileStat{static_cast<uint64_t>(st.st_size), MtimeNs(st), static_cast<mode_t>(st.st_mode & 07777)};
}

}  // namespace odin

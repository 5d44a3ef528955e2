#include "base/file_util.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <functional>

namespace odin {

namespace {

// Reads fd to its end in pieces, then closes it. take returns false to stop
// (and the read fails with stopped).
Status ReadFdInPieces(int fd, const std::string& path, const std::function<bool(std::string_view)>& take,
                      const Status& stopped = Status::OK()) {
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return PosixError(path, err);
    }
    if (n == 0) break;
    if (!take(std::string_view(buf, static_cast<size_t>(n)))) {
      close(fd);
      return stopped;
    }
  }
  close(fd);
  return Status::OK();
}

}  // namespace

Status ReadInPieces(const std::string& path, const std::function<void(std::string_view)>& take) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return PosixError(path, errno);
  return ReadFdInPieces(fd, path, [&take](std::string_view piece) {
    take(piece);
    return true;
  });
}

StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::string out;
  RETURN_IF_ERROR(ReadInPieces(path, [&out](std::string_view piece) { out.append(piece); }));
  return out;
}

StatusOr<std::string> ReadRegularFile(const std::string& path, uint64_t max_bytes) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return PosixError(path, errno);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return PosixError(path, err);
  }
  Status too_large = Status::InvalidArgument(path, "larger than " + std::to_string(max_bytes) + " bytes");
  if (!S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) > max_bytes) {
    close(fd);
    return S_ISREG(st.st_mode) ? too_large : Status::InvalidArgument(path, "not a regular file");
  }
  // The descriptor checked, never the path again (it may have become a
  // device since), and never more than max_bytes of it (a file may grow).
  std::string text;
  RETURN_IF_ERROR(ReadFdInPieces(
      fd, path,
      [&](std::string_view piece) {
        if (text.size() + piece.size() > max_bytes) return false;
        text.append(piece);
        return true;
      },
      too_large));
  return text;
}

StatusOr<std::string> ReadSymlink(const std::string& path) {
  std::string target(4096, '\0');
  ssize_t n = readlink(path.c_str(), target.data(), target.size());
  if (n < 0) return PosixError(path, errno);
  if (static_cast<size_t>(n) == target.size()) return Status::InvalidArgument(path, "symlink target too long");
  target.resize(static_cast<size_t>(n));
  return target;
}

Status WriteAll(int fd, std::string_view contents, const std::string& what) {
  for (size_t done = 0; done < contents.size();) {
    ssize_t n = write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return PosixError(what, errno);
    done += static_cast<size_t>(n);
  }
  return Status::OK();
}

std::string OdinStateDir() {
  const char* state = getenv("XDG_STATE_HOME");
  if (state != nullptr && state[0] == '/') return JoinPath(state, "odin");
  const char* home = getenv("HOME");
  if (home != nullptr && home[0] == '/') return JoinPath(home, ".local/state/odin");
  return "";
}

std::string OdinAuthDir() {
  std::string state = OdinStateDir();
  return state.empty() ? "" : JoinPath(state, "auth");
}

Status WriteFileAtomic(const std::string& path, std::string_view contents) {
  std::string tmp = path + ".odin-tmp-XXXXXX";
  int fd = mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return PosixError(path, errno);
  if (Status written = WriteAll(fd, contents, path); !written.ok()) {
    close(fd);
    unlink(tmp.c_str());
    return written;
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return PosixError(path, err);
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return PosixError(path, err);
  }
  return Status::OK();
}

Status MakeDirs(const std::string& path, int mode) {
  if (path.empty() || IsDirectory(path)) return Status::OK();
  std::string parent = DirName(path);
  if (parent != path) RETURN_IF_ERROR(MakeDirs(parent, mode));
  if (mkdir(path.c_str(), static_cast<mode_t>(mode)) != 0 && errno != EEXIST) {
    return PosixError("cannot create directory " + path, errno);
  }
  if (!IsDirectory(path)) return Status::FailedPrecondition(path, "exists and is not a directory");
  return Status::OK();
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool PathExists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

StatusOr<std::string> RealPath(const std::string& path) {
  char buf[PATH_MAX];
  if (realpath(path.c_str(), buf) == nullptr) return PosixError(path, errno);
  return std::string(buf);
}

std::string JoinPath(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  std::string out(a);
  if (out.back() != '/') out.push_back('/');
  while (!b.empty() && b.front() == '/') b.remove_prefix(1);
  out.append(b);
  return out;
}

std::string DirName(std::string_view path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

bool PathIsBelow(std::string_view path, std::string_view dir) {
  return !dir.empty() && path.size() > dir.size() + 1 && path.starts_with(dir) && path[dir.size()] == '/';
}

std::string ExecutableDir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = '\0';
  return DirName(buf);
}

StatusOr<std::string> MakeTempDir(std::string_view prefix) {
  const char* base = getenv("TMPDIR");
  std::string tmpl = JoinPath(base != nullptr && *base != '\0' ? base : "/tmp", std::string(prefix) + "-XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) return PosixError("mkdtemp " + tmpl, errno);
  return tmpl;
}

void RemoveTree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

}  // namespace odin

#include "workspace/host_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/file_util.h"

namespace odin {

StatusOr<std::optional<std::string>> ReadUserFile(const std::string& path, uint64_t max_bytes) {
  if (!PathExists(path)) return std::optional<std::string>();
  ASSIGN_OR_RETURN(std::string text, ReadRegularFile(path, max_bytes));
  return std::optional<std::string>(std::move(text));
}

Status WriteUserFile(const std::string& path, std::string_view contents) {
  RETURN_IF_ERROR(MakeDirs(DirName(path), 0700));
  return WriteFileAtomic(path, contents);
}

Status MakeUserDirs(const std::string& path, int mode) { return MakeDirs(path, mode); }

bool UserPathExists(const std::string& path) { return PathExists(path); }

StatusOr<UniqueFd> OpenUserLog(const std::string& path, uint64_t truncate_over) {
  RETURN_IF_ERROR(MakeDirs(DirName(path), 0700));
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid()) return PosixError(path, errno);
  struct stat st;
  if (fstat(fd.get(), &st) == 0 && static_cast<uint64_t>(st.st_size) > truncate_over && ftruncate(fd.get(), 0) != 0) {
    return PosixError(path, errno);
  }
  return fd;
}

}  // namespace odin

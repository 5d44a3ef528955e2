#include "base/unique_fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace odin {

void UniqueFd::reset(int fd) {
  if (fd_ >= 0 && fd_ != fd) {
    int saved = errno;
    close(fd_);
    errno = saved;
  }
  fd_ = fd;
}

StatusOr<UniqueFd> ReopenFd(int fd, int flags) {
  std::string self = "/proc/self/fd/" + std::to_string(fd);
  UniqueFd reopened(open(self.c_str(), flags | O_CLOEXEC));
  if (!reopened.valid()) return PosixError(self, errno);
  return reopened;
}

StatusOr<Pipe> MakePipe(int flags) {
  int fds[2];
  if (pipe2(fds, flags) != 0) return PosixError("pipe", errno);
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

}  // namespace odin

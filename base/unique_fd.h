#pragma once
// UniqueFd: the sole owner of a file descriptor, which it closes when it is
// destroyed or reset. Move-only, like std::unique_ptr. Pipe and MakePipe:
// both ends of a new pipe, each owned, with pipe2's errno translated here.
//
// Closing never changes errno, so an owner going out of scope on an error
// path does not clobber the errno that path is about to report. Errors of
// close(2) itself are ignored: an fd is released whatever close returns.
//
// Thread-safety: none; one owner, one thread at a time.

#include "base/status.h"

namespace odin {

class UniqueFd {
 public:
  UniqueFd() = default;
  // Takes ownership of fd (-1 owns nothing).
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  // The fd, still owned here; -1 when none is.
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Hands the fd over to the caller, who closes it; this owns none after.
  [[nodiscard]] int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes the fd owned (if any, and unless it is fd) and takes fd instead.
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

struct Pipe {
  UniqueFd read_end;
  UniqueFd write_end;
};

// A new open file description of what fd is open on (through
// /proc/self/fd), with flags: one whose flags (O_NONBLOCK) are its own, not
// shared with whoever else holds fd.
StatusOr<UniqueFd> ReopenFd(int fd, int flags);

// pipe2(flags), e.g. O_CLOEXEC or O_CLOEXEC | O_NONBLOCK. Errors are
// PosixError("pipe", errno): EMFILE and ENFILE are ResourceExhausted.
StatusOr<Pipe> MakePipe(int flags);

}  // namespace odin

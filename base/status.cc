#include "base/status.h"

#include <cerrno>
#include <cstring>

namespace odin {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kAlreadyExists: return "already exists";
    case StatusCode::kPermissionDenied: return "permission denied";
    case StatusCode::kFailedPrecondition: return "failed precondition";
    case StatusCode::kDeadlineExceeded: return "deadline exceeded";
    case StatusCode::kResourceExhausted: return "resource exhausted";
    case StatusCode::kUnavailable: return "unavailable";
    case StatusCode::kCancelled: return "cancelled";
    case StatusCode::kCorruption: return "corruption";
    case StatusCode::kIOError: return "I/O error";
    case StatusCode::kInternal: return "internal";
    case StatusCode::kOutOfRange: return "out of range";
  }
  return "unknown";
}

Status::Status(StatusCode code, std::string_view context, std::string_view detail) {
  if (code == StatusCode::kOk) return;
  std::string msg(context);
  if (!detail.empty()) {
    msg += ": ";
    msg += detail;
  }
  rep_ = std::make_shared<const Rep>(Rep{code, std::move(msg)});
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return rep_ ? rep_->message : kEmpty;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(StatusCodeName(code())) + ": " + rep_->message;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  return Status(code(), context, rep_->message);
}

Status PosixError(std::string_view context, int err) {
  const char* detail = strerror(err);
  switch (err) {
    case ENOENT:
    case ENOTDIR: return Status::NotFound(context, detail);
    case EEXIST: return Status::AlreadyExists(context, detail);
    case EACCES:
    case EPERM:
    case EROFS: return Status::PermissionDenied(context, detail);
    case EINVAL:
    case ENAMETOOLONG:
    case E2BIG: return Status::InvalidArgument(context, detail);
    case ENOSPC:
    case EMFILE:
    case ENFILE:
    case ENOMEM:
    case EAGAIN:
    case EDQUOT:
    case EFBIG: return Status::ResourceExhausted(context, detail);
    case ETIMEDOUT: return Status::DeadlineExceeded(context, detail);
    case ECANCELED:
    case EINTR: return Status::Cancelled(context, detail);
    default: return Status::IOError(context, detail);
  }
}

}  // namespace odin

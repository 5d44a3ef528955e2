#pragma once
// Status and StatusOr<T>: the one error type of Odin's internal APIs.
//
// A Status is a code from a small closed set plus a "context: detail" message.
// OK carries no message and costs nothing. Codes match odin.v1.Code
// (proto/odin/v1/error.proto) one to one, numerically.
// Foreign error systems are translated in one place each: errno by
// PosixError() below, SQLite in coordinator/ledger.cc, ZeroMQ in the transports.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace odin {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,
  kNotFound = 2,
  kAlreadyExists = 3,
  kPermissionDenied = 4,
  kFailedPrecondition = 5,
  kDeadlineExceeded = 6,
  kResourceExhausted = 7,
  kUnavailable = 8,
  kCancelled = 9,
  kCorruption = 10,
  kIOError = 11,
  kInternal = 12,
  kOutOfRange = 13,  // past a limit of the other side (a request larger than a model's context window)
};
constexpr int kMaxStatusCode = 13;

// Returns a lower-case name such as "invalid argument".
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string_view context, std::string_view detail = {});

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string_view c, std::string_view d = {}) {
    return {StatusCode::kInvalidArgument, c, d};
  }
  static Status NotFound(std::string_view c, std::string_view d = {}) { return {StatusCode::kNotFound, c, d}; }
  static Status AlreadyExists(std::string_view c, std::string_view d = {}) {
    return {StatusCode::kAlreadyExists, c, d};
  }
  static Status PermissionDenied(std::string_view c, std::string_view d = {}) {
    return {StatusCode::kPermissionDenied, c, d};
  }
  static Status FailedPrecondition(std::string_view c, std::string_view d = {}) {
    return {StatusCode::kFailedPrecondition, c, d};
  }
  static Status DeadlineExceeded(std::string_view c, std::string_view d = {}) {
    return {StatusCode::kDeadlineExceeded, c, d};
  }
  static Status ResourceExhausted(std::string_view c, std::string_view d = {}) {
    return {StatusCode::kResourceExhausted, c, d};
  }
  static Status Unavailable(std::string_view c, std::string_view d = {}) { return {StatusCode::kUnavailable, c, d}; }
  static Status Cancelled(std::string_view c, std::string_view d = {}) { return {StatusCode::kCancelled, c, d}; }
  static Status Corruption(std::string_view c, std::string_view d = {}) { return {StatusCode::kCorruption, c, d}; }
  static Status IOError(std::string_view c, std::string_view d = {}) { return {StatusCode::kIOError, c, d}; }
  static Status Internal(std::string_view c, std::string_view d = {}) { return {StatusCode::kInternal, c, d}; }
  static Status OutOfRange(std::string_view c, std::string_view d = {}) { return {StatusCode::kOutOfRange, c, d}; }

  bool ok() const { return rep_ == nullptr; }
  StatusCode code() const { return rep_ ? rep_->code : StatusCode::kOk; }
  // "context: detail", or "" when OK.
  const std::string& message() const;
  // "invalid argument: context: detail", or "OK".
  std::string ToString() const;

  // Returns a copy whose message is prefixed by "context: ".
  Status WithContext(std::string_view context) const;

 private:
  struct Rep {
    StatusCode code;
    std::string message;
  };
  std::shared_ptr<const Rep> rep_;  // null iff OK; immutable, so sharing is safe
};

inline bool operator==(const Status& a, const Status& b) { return a.code() == b.code() && a.message() == b.message(); }

// Translates an errno value: ENOENT -> kNotFound, EACCES/EPERM/EROFS ->
// kPermissionDenied, ... The message is "context: strerror(err)".
Status PosixError(std::string_view context, int err);

// A value or the Status saying why there is none.
// REQUIRES: a StatusOr is never built from an OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& s) : v_(s) {}
  StatusOr(Status&& s) : v_(std::move(s)) {}
  StatusOr(const T& value) : v_(value) {}
  StatusOr(T&& value) : v_(std::move(value)) {}
  template <typename U,
            typename = std::enable_if_t<std::is_convertible_v<U&&, T> && !std::is_same_v<std::decay_t<U>, Status> &&
                                        !std::is_same_v<std::decay_t<U>, T>>>
  StatusOr(U&& value) : v_(T(std::forward<U>(value))) {}

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace odin

#define ODIN_STATUS_CONCAT_INNER_(a, b) a##b
#define ODIN_STATUS_CONCAT_(a, b) ODIN_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function if expr yields a non-OK Status.
#define RETURN_IF_ERROR(expr)                    \
  do {                                           \
    ::odin::Status odin_status_ = (expr);        \
    if (!odin_status_.ok()) return odin_status_; \
  } while (0)

// Declares or assigns lhs from a StatusOr expr, returning its Status on error.
#define ASSIGN_OR_RETURN(lhs, expr) ASSIGN_OR_RETURN_IMPL_(ODIN_STATUS_CONCAT_(odin_statusor_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                           \
  if (!tmp.ok()) return tmp.status();          \
  lhs = std::move(tmp).value()

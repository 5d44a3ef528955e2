#include "base/status.h"

#include <cerrno>

#include <gtest/gtest.h>

#include "odin/v1/error.pb.h"

namespace odin {
namespace {

TEST(StatusTest, OkHasNoMessage) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, MessageIsContextColonDetail) {
  Status s = Status::NotFound("ledger", "no such table");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "ledger: no such table");
  EXPECT_EQ(s.ToString(), "not found: ledger: no such table");
  EXPECT_EQ(s.WithContext("odin log").message(), "odin log: ledger: no such table");
}

TEST(StatusTest, PosixErrorTranslatesErrno) {
  EXPECT_EQ(PosixError("x", ENOENT).code(), StatusCode::kNotFound);
  EXPECT_EQ(PosixError("x", EACCES).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(PosixError("x", EROFS).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(PosixError("x", ENOSPC).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(PosixError("x", EIO).code(), StatusCode::kIOError);
  EXPECT_EQ(PosixError("open /a", ENOENT).message(), "open /a: No such file or directory");
}

TEST(StatusTest, CodesMatchProtoCodesOneToOne) {
  for (int c = 0; c <= kMaxStatusCode; ++c) {
    ASSERT_TRUE(odin::v1::Code_IsValid(c)) << c;
  }
  EXPECT_FALSE(odin::v1::Code_IsValid(kMaxStatusCode + 1));
  EXPECT_EQ(static_cast<int>(StatusCode::kCorruption), odin::v1::CODE_CORRUPTION);
  EXPECT_EQ(static_cast<int>(StatusCode::kInternal), odin::v1::CODE_INTERNAL);
  EXPECT_EQ(static_cast<int>(StatusCode::kDeadlineExceeded), odin::v1::CODE_DEADLINE_EXCEEDED);
  EXPECT_EQ(static_cast<int>(StatusCode::kOutOfRange), odin::v1::CODE_OUT_OF_RANGE);
}

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return Status::InvalidArgument("half", "odd number");
  return x / 2;
}

Status Quarter(int x, int* out) {
  ASSIGN_OR_RETURN(int h, Half(x));
  ASSIGN_OR_RETURN(*out, Half(h));
  return Status::OK();
}

TEST(StatusTest, AssignOrReturnPropagates) {
  int out = 0;
  EXPECT_TRUE(Quarter(8, &out).ok());
  EXPECT_EQ(out, 2);
  EXPECT_EQ(Quarter(6, &out).message(), "half: odd number");
}

}  // namespace
}  // namespace odin

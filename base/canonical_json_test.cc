#include "base/canonical_json.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

TEST(CanonicalJsonTest, SortsKeysAndDropsWhitespace) {
  auto c = CanonicalizeJson(R"({ "b": 1, "a": {"z": [1, 2], "y": "x"} })");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, R"({"a":{"y":"x","z":[1,2]},"b":1})");
}

TEST(CanonicalJsonTest, EqualValuesGiveEqualText) {
  EXPECT_EQ(*CanonicalizeJson(R"({"x":1,"y":2})"), *CanonicalizeJson("{\"y\":2,\n\"x\":1}"));
}

TEST(CanonicalJsonTest, MalformedIsInvalidArgument) {
  auto c = CanonicalizeJson("{\"a\":");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
}

TEST(CanonicalJsonTest, Utf8Validation) {
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\xc3"));              // cut short
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong "/"
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // a surrogate
}

}  // namespace
}  // namespace odin

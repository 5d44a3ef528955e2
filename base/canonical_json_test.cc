#include "base/canonical_json.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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

// {"a":{"a":...}} or [[...]], depth levels.
std::string Nested(int depth, bool objects) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += objects ? "{\"a\":" : "[";
  s += "1";
  for (int i = 0; i < depth; ++i) s += objects ? "}" : "]";
  return s;
}

TEST(CanonicalJsonTest, NestingIsCountedWithoutParsing) {
  EXPECT_EQ(JsonNestingDepth("1"), 0);
  EXPECT_EQ(JsonNestingDepth(R"({"a":[1,{"b":2}],"c":{}})"), 3);
  // Brackets in strings, escaped quotes included, do not count.
  EXPECT_EQ(JsonNestingDepth(R"({"a":"[[[{{{\"[[["})"), 1);
  EXPECT_EQ(JsonNestingDepth(Nested(10, true)), 10);
  // Counting stops past the limit.
  EXPECT_EQ(JsonNestingDepth(Nested(60000, false)), kMaxJsonDepth + 1);
  EXPECT_EQ(JsonNestingDepth(Nested(60000, false), 100000), 60000);
}

TEST(CanonicalJsonTest, DeeperThanTheLimitIsRefusedBeforeParsing) {
  EXPECT_TRUE(CanonicalizeJson(Nested(kMaxJsonDepth, true)).ok());
  EXPECT_TRUE(CanonicalizeJson(R"({"command":)" + Nested(kMaxJsonDepth - 1, false) + "}").ok());
  for (int depth : {kMaxJsonDepth + 1, 60000}) {
    for (bool objects : {true, false}) {
      auto c = CanonicalizeJson(R"({"command":)" + Nested(depth, objects) + "}");
      ASSERT_FALSE(c.ok()) << depth;
      EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
      EXPECT_EQ(c.status().message(), "JSON arguments: nested more than 64 levels deep");
    }
  }
}

// Why parsing alone is not the danger: nlohmann parses and destroys deep
// values without recursion (3.11), but copies and dump() recurse, which is
// what CanonicalizeJson and the LLM wire formats would do next.
TEST(CanonicalJsonTest, DeepInputParsesAndIsDestroyedWithoutRecursion) {
  for (bool objects : {true, false}) {
    nlohmann::json j = nlohmann::json::parse(Nested(60000, objects), nullptr, false);
    EXPECT_FALSE(j.is_discarded());
  }
  nlohmann::json unclosed = nlohmann::json::parse(std::string(60000, '['), nullptr, false);
  EXPECT_TRUE(unclosed.is_discarded());
}

TEST(CanonicalJsonTest, Utf8Validation) {
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\xc3"));          // cut short
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));      // overlong "/"
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));  // a surrogate
}

}  // namespace
}  // namespace odin

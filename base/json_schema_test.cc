#include "base/json_schema.h"

#include <dirent.h>

#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/json_input.h"

namespace odin {
namespace {

using nlohmann::json;

std::vector<std::string> Errors(const std::string& schema, const std::string& instance) {
  StatusOr<JsonSchema> s = JsonSchema::Compile(schema);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? s->Validate(instance) : std::vector<std::string>{"(no schema)"};
}

TEST(JsonSchemaTest, AnswersOfAPipelineSchema) {
  std::string schema = R"({
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
      "files": {"type": "array", "items": {"type": "string", "pattern": "^[a-z_/]+\\.c$"}, "minItems": 1},
      "fixed": {"type": "boolean"},
      "count": {"type": "integer", "minimum": 0}
    },
    "required": ["files", "fixed"],
    "additionalProperties": false
  })";
  EXPECT_TRUE(Errors(schema, R"({"files": ["src/a.c"], "fixed": true, "count": 2.0})").empty());
  std::vector<std::string> e = Errors(schema, R"({"files": ["A.c", 3], "count": -1, "extra": 1})");
  std::string all;
  for (const std::string& line : e) all += line + "\n";
  EXPECT_NE(all.find("/: missing required property \"fixed\""), std::string::npos) << all;
  EXPECT_NE(all.find("/files/0: does not match the pattern"), std::string::npos) << all;
  EXPECT_NE(all.find("/files/1: expected \"string\", got integer"), std::string::npos) << all;
  EXPECT_NE(all.find("/count: -1 is below the minimum 0"), std::string::npos) << all;
  EXPECT_NE(all.find("property \"extra\" is not allowed"), std::string::npos) << all;
  EXPECT_EQ(Errors(schema, "Here is the JSON: {}").size(), 1u);
  EXPECT_EQ(Errors(schema, "Here is the JSON: {}")[0].rfind("not JSON", 0), 0u);
}

TEST(JsonSchemaTest, RefusesWhatItDoesNotApply) {
  for (const char* schema : {
           R"({"type": "object", "unevaluatedProperties": false})",
           R"({"properties": {"a": {"$dynamicRef": "#meta"}}})",
           R"({"$ref": "https://example.com/other.json"})",
           R"({"$ref": "#/$defs/missing"})",
           R"({"$ref": "#anchor"})",
           R"({"tpye": "string"})",
           R"({"items": [{"type": "string"}]})",
           R"({"type": "strnig"})",
           R"j({"pattern": "(?=lookahead)"})j",
           R"j({"pattern": "(a)\\1"})j",
           R"({"$schema": "http://json-schema.org/draft-04/schema#"})",
           R"({"properties": {"a": {"$id": "https://x/a", "$ref": "#/x"}}})",
           R"({"minLength": -1})",
           R"({"anyOf": []})",
           // $ref only at what was compiled as a schema.
           R"({"$ref": "#/default", "default": {"type": 1}})",
           R"({"$ref": "#/$defs", "$defs": {"a": {"type": "string"}}})",
           R"({"$ref": "#/examples/0", "examples": [{"pattern": "a"}]})",
           R"(["not", "a", "schema"])",
           R"({"type": )",
       }) {
    StatusOr<JsonSchema> s = JsonSchema::Compile(schema);
    EXPECT_FALSE(s.ok()) << schema;
    if (!s.ok()) {
      EXPECT_EQ(s.status().message().find('\n'), std::string::npos) << s.status().message();
    }
  }
  // Property names are not keywords.
  EXPECT_TRUE(JsonSchema::Compile(R"({"properties": {"tpye": {}, "$ref": {"type": "string"}}})").ok());
}

TEST(JsonSchemaTest, ReferencesAndRecursionAreBounded) {
  // A tree through $defs, by a pointer with an escape.
  std::string tree = R"({"$defs": {"a/b": {"type": "object", "properties": {"kids": {"type": "array",
      "items": {"$ref": "#/$defs/a~1b"}}}, "required": ["kids"]}}, "$ref": "#/$defs/a~1b"})";
  EXPECT_TRUE(Errors(tree, R"({"kids": [{"kids": []}, {"kids": [{"kids": []}]}]})").empty());
  std::vector<std::string> e = Errors(tree, R"({"kids": [{"kids": []}, {"kids": [{}]}]})");
  ASSERT_FALSE(e.empty());
  EXPECT_EQ(e[0], "/kids/1/kids/0: missing required property \"kids\"");
  // A reference to itself that consumes nothing: an error, not a hang or a
  // stack overflow.
  e = Errors(R"({"$ref": "#"})", "1");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0], "the schema's references recurse without end");
  e = Errors(R"({"anyOf": [{"$ref": "#"}, {"type": "string"}]})", "1");
  ASSERT_FALSE(e.empty());
  EXPECT_EQ(e[0], "the schema's references recurse without end");
  // Nested anyOf the answer makes try every branch (2^30 of them, in a
  // schema of a few kilobytes): bounded in steps.
  std::string defs = R"("d0": {"type": "integer"})";
  for (int i = 1; i <= 30; ++i) {
    std::string prev = "{\"$ref\": \"#/$defs/d" + std::to_string(i - 1) + "\"}";
    defs += ", \"d" + std::to_string(i) + "\": {\"anyOf\": [" + prev + ", " + prev + "]}";
  }
  e = Errors("{\"$defs\": {" + defs + "}, \"$ref\": \"#/$defs/d30\"}", "\"x\"");
  ASSERT_FALSE(e.empty());
  EXPECT_EQ(e[0], "the schema is too costly to evaluate against this answer");
}

// Integers at the ends of their range: exact, and no trap.
TEST(JsonSchemaTest, MultipleOfLargeIntegersIsExact) {
  EXPECT_TRUE(Errors(R"({"multipleOf": 18446744073709551615})", "-9223372036854775808").size() == 1);
  EXPECT_TRUE(Errors(R"({"multipleOf": 2})", "-9223372036854775808").empty());
  EXPECT_TRUE(Errors(R"({"multipleOf": 3})", "18446744073709551615").empty());
  EXPECT_EQ(Errors(R"({"multipleOf": 2})", "9007199254740993").size(), 1u);
  // A pointer's percent-encoding is undone before its escapes.
  EXPECT_TRUE(Errors(R"({"$defs": {"~0": {"type": "string"}}, "$ref": "#/$defs/%7E00"})", "\"x\"").empty());
}

TEST(JsonSchemaTest, PatternsRunInLinearTime) {
  // A backtracking engine takes exponential time on this; RE2 does not.
  std::string schema = R"({"type": "string", "pattern": "^(a+)+$"})";
  std::string instance = "\"" + std::string(100000, 'a') + "!\"";
  std::vector<std::string> e = Errors(schema, instance);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_NE(e[0].find("does not match the pattern"), std::string::npos);
  // Code points, not bytes.
  EXPECT_TRUE(Errors(R"({"maxLength": 2})", "\"\u00e9\u00e9\"").empty());
}

// The JSON Schema Test Suite (json-schema-org, Debian's
// json-schema-test-suite): its draft-07 cases for each keyword whose meaning
// draft 2020-12 kept. A case whose schema uses what Odin refuses is counted,
// and none of the files below may have more than the few named.
TEST(JsonSchemaTest, OfficialTestSuite) {
  const std::string dir = "/usr/share/json-schema-test-suite/tests/draft7/";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) GTEST_SKIP() << dir << " is missing: apt-get install json-schema-test-suite";
  closedir(d);
  // Files whose draft-07 meaning 2020-12 changed (items as an array,
  // dependencies, $ref's siblings) or that need remote documents.
  const std::set<std::string> kFiles = {"additionalProperties",
                                        "allOf",
                                        "anyOf",
                                        "boolean_schema",
                                        "const",
                                        "contains",
                                        "default",
                                        "enum",
                                        "exclusiveMaximum",
                                        "exclusiveMinimum",
                                        "if-then-else",
                                        "maxItems",
                                        "maxLength",
                                        "maxProperties",
                                        "maximum",
                                        "minItems",
                                        "minLength",
                                        "minProperties",
                                        "minimum",
                                        "multipleOf",
                                        "not",
                                        "oneOf",
                                        "pattern",
                                        "patternProperties",
                                        "properties",
                                        "propertyNames",
                                        "required",
                                        "type",
                                        "uniqueItems"};
  int passed = 0, refused = 0;
  std::vector<std::string> failures;
  for (const std::string& name : kFiles) {
    std::ifstream in(dir + name + ".json");
    ASSERT_TRUE(in.good()) << name;
    std::stringstream text;
    text << in.rdbuf();
    json groups = ParseJson(text.str());
    ASSERT_TRUE(groups.is_array()) << name;
    for (const json& group : groups) {
      StatusOr<JsonSchema> schema = JsonSchema::Compile(group["schema"].dump());
      if (!schema.ok()) {
        ++refused;
        std::cout << "refused " << name << ": " << group["description"].get<std::string>() << ": "
                  << schema.status().message() << "\n";
        continue;
      }
      for (const json& t : group["tests"]) {
        bool valid = schema->Validate(t["data"].dump()).empty();
        if (valid == t["valid"].get<bool>()) {
          ++passed;
        } else {
          failures.push_back(name + ": " + group["description"].get<std::string>() + " / " +
                             t["description"].get<std::string>());
        }
      }
    }
  }
  for (const std::string& f : failures) ADD_FAILURE() << f;
  std::cout << passed << " cases passed, " << refused << " schemas refused\n";
  EXPECT_GT(passed, 300);
  EXPECT_LE(refused, 3);
}

}  // namespace
}  // namespace odin

// What a headless run gives back besides its report, end to end through the
// real odin and the fake model server: a final answer checked against the
// user's JSON Schema (--json-schema, --output-schema), and images given to
// the model (@path, --image) in each provider's format, or as a note to a
// model that cannot see them.

#include <unistd.h>

#include <algorithm>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "base/file_util.h"
#include "base/sha256.h"
#include "tests/ledger_rows.h"
#include "tests/llm_requests.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

const char kSchema[] = R"({
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {"files": {"type": "array", "items": {"type": "string"}}, "count": {"type": "integer"}},
  "required": ["files", "count"],
  "additionalProperties": false
})";

class OdinAnswerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(MakeDirs(ws_.Join(".git")).ok());
    ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
    UserConfig({{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}}});
    ASSERT_TRUE(WriteFileAtomic(ws_.Join("schema.json"), kSchema).ok());
    ASSERT_TRUE(WriteFileAtomic(ws_.Join("a.txt"), "hello\n").ok());
  }
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  void UserConfig(const json& config) {
    ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  }
  Ran Run(const FakeLlm& llm, std::vector<std::string> args) {
    std::map<std::string, std::string> env = FakeModelEnv(llm, marker_, user_);
    env["ANTHROPIC_BASE_URL"] = llm.AnthropicUrl();
    env["ANTHROPIC_API_KEY"] = "test-key";
    return RunOdin(ws_.path(), args, env);
  }
  std::vector<std::string> Rows(const std::string& sql) { return LedgerRows(ws_.Join(".odin/odin.db"), sql); }

  TempWorkspace ws_;
  TempWorkspace user_;  // XDG_CONFIG_HOME and XDG_STATE_HOME
  std::string marker_ = UniqueMarker();
};

// A valid answer (in the code fence models like to write) is the JSON
// result's structured_output; the model was told the schema in the turn's
// facts, not in the system prompt.
TEST_F(OdinAnswerTest, AValidAnswerIsTheStructuredOutput) {
  FakeLlm llm(json({{"responses",
                     {Turn({Call("Read", {{"file_path", "a.txt"}})}),
                      Text("```json\n{\"files\": [\"a.txt\"], \"count\": 1}\n```")}}})
                  .dump());
  Ran r = Run(llm, {"-p", "list the files", "--json-schema", "schema.json", "--output-format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json result = json::parse(r.out);
  EXPECT_EQ(result["structured_output"], json::parse(R"({"files": ["a.txt"], "count": 1})"));
  EXPECT_EQ(result["subtype"], "success");
  std::vector<json> requests = ScriptRequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u);
  for (const json& q : requests) {
    std::string facts = q["body"]["messages"].back()["content"].get<std::string>();
    EXPECT_NE(facts.find("only a JSON value valid against this JSON Schema"), std::string::npos) << facts;
    EXPECT_NE(facts.find("\"additionalProperties\":false"), std::string::npos) << facts;
    EXPECT_EQ(q["body"]["messages"][0].dump().find("JSON Schema"), std::string::npos);
  }
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM gate_events WHERE kind = 'output_valid'")[0], "1");
}

// Prose around the JSON, then a wrong type: sent back once with the errors,
// then the run fails with exit 9, and nothing else is asked of the model.
TEST_F(OdinAnswerTest, AnInvalidAnswerIsSentBackOnceThenTheRunFailsWithExitNine) {
  FakeLlm llm(json({{"responses",
                     {Text("Here you go: {\"files\": [], \"count\": 0}"),
                      Text("{\"files\": [\"a.txt\"], \"count\": \"one\"}"), Text("never asked")}}})
                  .dump());
  Ran r = Run(llm, {"-p", "list the files", "--output-schema", "schema.json", "--output-format", "json"});
  EXPECT_EQ(r.exit_code, 9) << r.out << r.err;
  json result = json::parse(r.out);
  EXPECT_EQ(result["status"], "invalid_output");
  EXPECT_EQ(result["subtype"], "error_max_structured_output_retries");
  EXPECT_FALSE(result.contains("structured_output"));
  EXPECT_NE(result["error"].get<std::string>().find("/count: expected \"integer\", got string"), std::string::npos)
      << result["error"];
  std::vector<json> requests = ScriptRequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u);
  std::string sent_back = LastMessageOf(requests[1])["content"].get<std::string>();
  EXPECT_NE(sent_back.find("not valid against the JSON Schema"), std::string::npos) << sent_back;
  EXPECT_NE(sent_back.find("not JSON"), std::string::npos) << sent_back;
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM gate_events WHERE kind = 'output_invalid'")[0], "2");
}

TEST_F(OdinAnswerTest, AnAnswerFixedOnItsRetryPasses) {
  FakeLlm llm(json({{"responses",
                     {Text("{\"files\": \"a.txt\", \"count\": 1}"), Text("{\"files\": [\"a.txt\"], \"count\": 1}")}}})
                  .dump());
  Ran r = Run(llm, {"-p", "list the files", "--json-schema", kSchema, "--output-format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(json::parse(r.out)["structured_output"]["count"], 1);
}

// A valid answer the checks then refuse is no result: the run did not end
// done, so the JSON has no structured_output (a stale one once stayed).
TEST_F(OdinAnswerTest, AValidAnswerTheChecksRefuseLeavesNoStructuredOutput) {
  UserConfig({{"checks", {{"build", ""}, {"lint", ""}, {"tests", "exit 1"}, {"retry_cap", 1}}}});
  FakeLlm llm(json({{"responses",
                     {Turn({Call("WriteFile", {{"file_path", "b.txt"}, {"content", "b\n"}})}),
                      Text("{\"files\": [\"a.txt\"], \"count\": 1}"), Text("{\"files\": [\"a.txt\"], \"count\": 1}"),
                      Text("{\"files\": [\"a.txt\"], \"count\": 1}")}}})
                  .dump());
  Ran r = Run(llm, {"-p", "list the files", "--json-schema", "schema.json", "--output-format", "json"});
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  json result = json::parse(r.out);
  EXPECT_NE(result["status"], "done") << r.out;
  EXPECT_FALSE(result.contains("structured_output")) << r.out;
  EXPECT_FALSE(result["report"]["checks"].empty()) << r.out;
  EXPECT_NE(Rows("SELECT COUNT(*) FROM gate_events WHERE kind = 'output_valid'")[0], "0");
}

// A schema Odin cannot apply is a usage error before any model is asked.
TEST_F(OdinAnswerTest, ASchemaOdinCannotApplyIsAUsageError) {
  FakeLlm llm(json({{"responses", {Text("{}")}}}).dump());
  struct Case {
    std::string schema, says;
  };
  for (const Case& c : {Case{R"({"type": "object", "unevaluatedProperties": false})",
                             "keyword 'unevaluatedProperties' is not supported"},
                        Case{R"({"$ref": "https://example.com/s.json"})", "only references within the schema"},
                        Case{R"({"type": "object", "propertis": {}})", "keyword 'propertis' is not a draft 2020-12"},
                        Case{"missing.json", "no such file"}, Case{R"({"type": )", "JSON Schema"}}) {
    Ran r = Run(llm, {"-p", "x", "--json-schema", c.schema});
    EXPECT_EQ(r.exit_code, 2) << c.schema << r.err;
    EXPECT_EQ(r.err.rfind("odin: --json-schema: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  Ran keyword = Run(llm, {"-p", "x", "--json-schema", R"({"unevaluatedItems": false})"});
  EXPECT_NE(keyword.err.find("(docs/commands.md lists those supported)"), std::string::npos) << keyword.err;
  EXPECT_TRUE(ScriptRequestsOf(llm).empty());
  Ran interactive = Run(llm, {"--json-schema", "schema.json"});
  EXPECT_EQ(interactive.exit_code, 2) << interactive.err;
}

// A PNG's bytes with something to find after them.
std::string Png(const std::string& marker) {
  return std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16) + marker + std::string(64, '\x01');
}

// Images, per provider: the request holds each in its format, after the
// message's text; the ledger holds their hashes and sizes, never their
// bytes.
class OdinImagesTest : public OdinAnswerTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(OdinImagesTest, ImagesReachAModelThatSeesThemInItsProvidersFormat) {
  const std::string provider = GetParam();
  UserConfig({{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}}, {"llm", {{"vision", true}}}});
  const std::string shot = Png("SHOT-PIXELS-7f3a"), diagram = "\xff\xd8\xff\xe0JPEG-PIXELS-19c2";
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("shot.png"), shot).ok());
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("diagram.bin"), diagram).ok());  // the bytes decide, not the name
  FakeLlm llm(json({{"responses", {Text("A screenshot and a diagram.")}}}).dump());
  Ran r = Run(llm, {"-p", "what do @shot.png and this show?", "--image", "diagram.bin", "--provider", provider,
                    "--output-format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<json> requests = ScriptRequestsOf(llm);
  ASSERT_EQ(requests.size(), 1u);
  const json& body = requests[0]["body"];
  json user;  // the first user message
  for (const json& m : provider == "openai-responses" ? body["input"] : body["messages"]) {
    if (m.value("role", "") == "user") {
      user = m;
      break;
    }
  }
  ASSERT_TRUE(user["content"].is_array()) << body.dump();
  const json& parts = user["content"];
  ASSERT_EQ(parts.size(), 3u) << parts.dump();
  std::string text = parts[0]["text"];
  EXPECT_NE(text.find("what do @shot.png and this show?"), std::string::npos);
  // The --image first, then the @path's.
  std::vector<std::pair<std::string, std::string>> expected = {{"image/jpeg", diagram}, {"image/png", shot}};
  for (size_t i = 0; i < 2; ++i) {
    const json& part = parts[i + 1];
    std::string media = expected[i].first;
    std::string data = Base64Encode(expected[i].second);
    if (provider == "anthropic") {
      EXPECT_EQ(part["type"], "image");
      EXPECT_EQ(part["source"]["type"], "base64");
      EXPECT_EQ(part["source"]["media_type"], media);
      EXPECT_EQ(part["source"]["data"], data);
    } else if (provider == "openai") {
      EXPECT_EQ(part["type"], "image_url");
      EXPECT_EQ(part["image_url"]["url"], "data:" + media + ";base64," + data);
    } else {
      EXPECT_EQ(part["type"], "input_image");
      EXPECT_EQ(part["image_url"], "data:" + media + ";base64," + data);
    }
  }
  // Hashes and sizes in the ledger; no image's bytes anywhere in it.
  std::vector<std::string> events =
      Rows("SELECT detail_json FROM gate_events WHERE kind = 'image_attached' ORDER BY created_at_ms");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_NE(events[1].find(Sha256Hex(shot)), std::string::npos) << events[1];
  StatusOr<std::string> read = ReadFileToString(ws_.Join(".odin/odin.db"));
  ASSERT_TRUE(read.ok());
  const std::string& db = *read;
  EXPECT_EQ(db.find("SHOT-PIXELS-7f3a"), std::string::npos);
  EXPECT_EQ(db.find(Base64Encode(shot).substr(0, 40)), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Providers, OdinImagesTest, ::testing::Values("openai", "anthropic", "openai-responses"));

// A Read of an image: the model that sees images gets it after the turn's
// results, in its provider's format; the result says so; the ledger has
// its hash and size, never its bytes.
TEST_P(OdinImagesTest, AReadImageFollowsTheToolResults) {
  const std::string provider = GetParam();
  UserConfig({{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}}, {"llm", {{"vision", true}}}});
  const std::string shot = Png("READ-PIXELS-5b1e");
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("shot.png"), shot).ok());
  FakeLlm llm(
      json({{"responses", {Turn({Call("Read", {{"file_path", "shot.png"}})}), Text("It shows pixels.")}}}).dump());
  Ran r = Run(llm, {"-p", "look at shot.png", "--provider", provider});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<json> requests = ScriptRequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u);
  const json& body = requests[1]["body"];
  std::string all = body.dump();
  EXPECT_NE(all.find("sent: it follows the tool results as an image"), std::string::npos) << all;
  // The images' part: a user message's content, after the results.
  json parts;
  for (const json& m : provider == "openai-responses" ? body["input"] : body["messages"]) {
    if (m.value("role", "") != "user" || !m["content"].is_array()) continue;
    for (size_t i = 0; i < m["content"].size(); ++i) {
      if (m["content"][i].value("text", "").find("[odin] The images the Read calls above returned: \"shot.png\"") ==
          0) {
        parts = json(std::vector<json>(m["content"].begin() + static_cast<long>(i), m["content"].end()));
        if (provider == "anthropic") EXPECT_EQ(m["content"][0]["type"], "tool_result") << m.dump();
      }
    }
  }
  ASSERT_TRUE(parts.is_array() && parts.size() >= 2) << all;
  const json& image = parts[1];
  std::string data = Base64Encode(shot);
  if (provider == "anthropic") {
    EXPECT_EQ(image["type"], "image");
    EXPECT_EQ(image["source"]["media_type"], "image/png");
    EXPECT_EQ(image["source"]["data"], data);
  } else if (provider == "openai") {
    EXPECT_EQ(image["image_url"]["url"], "data:image/png;base64," + data);
  } else {
    EXPECT_EQ(image["type"], "input_image");
    EXPECT_EQ(image["image_url"], "data:image/png;base64," + data);
  }
  EXPECT_NE(Rows("SELECT result_json FROM execution_ends").front().find(Sha256Hex(shot)), std::string::npos);
  StatusOr<std::string> db = ReadFileToString(ws_.Join(".odin/odin.db"));
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(db->find("READ-PIXELS-5b1e"), std::string::npos);
}

// A model that cannot see images is told so in the Read's result.
TEST_F(OdinAnswerTest, AReadImageIsANoteForAModelThatCannotSeeImages) {
  UserConfig({{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}}, {"llm", {{"vision", {{"*", false}}}}}});
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("shot.png"), Png("PIXELS")).ok());
  FakeLlm llm(
      json({{"responses", {Turn({Call("Read", {{"file_path", "shot.png"}})}), Text("I cannot see it.")}}}).dump());
  Ran r = Run(llm, {"-p", "look at shot.png"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<json> requests = ScriptRequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u);
  std::string all = requests[1]["body"]["messages"].dump();
  EXPECT_EQ(all.find("image_url"), std::string::npos) << all;
  EXPECT_NE(all.find("shot.png is an image: image/png"), std::string::npos) << all;
  EXPECT_NE(all.find("not sent: the model in use cannot see images"), std::string::npos) << all;
}

// A model that cannot see images gets a note in each one's place, and is
// never sent an image block.
TEST_F(OdinAnswerTest, AModelThatCannotSeeImagesGetsANote) {
  UserConfig({{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}}, {"llm", {{"vision", {{"*", false}}}}}});
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("shot.png"), Png("PIXELS")).ok());
  FakeLlm llm(json({{"responses", {Text("I cannot see it.")}}}).dump());
  Ran r = Run(llm, {"-p", "what does @shot.png show?"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<json> requests = ScriptRequestsOf(llm);
  ASSERT_EQ(requests.size(), 1u);
  std::string all = requests[0]["body"]["messages"].dump();
  EXPECT_EQ(all.find("image_url"), std::string::npos);
  EXPECT_NE(all.find("[image shot.png (image/png, "), std::string::npos) << all;
  EXPECT_NE(all.find("does not accept images"), std::string::npos) << all;
}

// --image names a file as the shell does: relative to where odin was
// started, not to the workspace's root.
TEST_F(OdinAnswerTest, AnImagePathIsRelativeToWhereOdinStarted) {
  UserConfig({{"checks", {{"build", ""}, {"lint", ""}, {"tests", ""}}}, {"llm", {{"vision", true}}}});
  ASSERT_TRUE(MakeDirs(ws_.Join("docs")).ok());
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("docs/shot.png"), Png("IN-DOCS")).ok());
  FakeLlm llm(json({{"responses", {Text("seen")}}}).dump());
  std::map<std::string, std::string> env = FakeModelEnv(llm, marker_, user_);
  Ran r = RunOdin(ws_.Join("docs"), {"-p", "look", "--image", "shot.png"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<json> requests = ScriptRequestsOf(llm);
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_NE(requests[0]["body"].dump().find(Base64Encode(Png("IN-DOCS")).substr(0, 40)), std::string::npos);
  // The same name from the root is another file: none there.
  Ran root = RunOdin(ws_.path(), {"-p", "look", "--image", "shot.png"}, env);
  EXPECT_EQ(root.exit_code, 2) << root.err;
}

// What is not an image, or is one outside the safe file layer's reach, is
// refused with one line before any model is asked.
TEST_F(OdinAnswerTest, AnImageThatIsNotOneOrLeadsOutOfTheWorkspaceIsRefused) {
  TempWorkspace outside;
  ASSERT_TRUE(WriteFileAtomic(outside.Join("private.png"), Png("PRIVATE")).ok());
  ASSERT_EQ(symlink(outside.Join("private.png").c_str(), ws_.Join("link.png").c_str()), 0);
  FakeLlm llm(json({{"responses", {Text("ok")}}}).dump());
  for (const std::string& file : {std::string("a.txt"), std::string("link.png"), std::string("none.png")}) {
    Ran r = Run(llm, {"-p", "look", "--image", file});
    EXPECT_EQ(r.exit_code, 2) << file << r.err;
    EXPECT_EQ(r.err.rfind("odin: --image: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // An @path the same: not attached, said, and the message goes without it.
  Ran r = Run(llm, {"-p", "look at @link.png", "--output-format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("@link.png: not attached"), std::string::npos) << r.err;
  std::vector<json> requests = ScriptRequestsOf(llm);
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0]["body"].dump().find("image_url"), std::string::npos);
}

}  // namespace
}  // namespace odin::testing

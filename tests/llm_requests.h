#pragma once
// Scripts for a FakeLlm and the requests it received, parsed: for the
// integration tests that script a model and check what it was sent. (JSON
// stays out of test_util.h.)

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/test_util.h"

namespace odin::testing {

// Each request the server received, in arrival order: {"n", "t_ns", "path", "body"}.
inline std::vector<nlohmann::json> RequestsOf(const FakeLlm& llm) {
  std::vector<nlohmann::json> out;
  for (const std::string& line : llm.LogLines()) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j.contains("path")) out.push_back(j);
  }
  return out;
}

// The tool results in an OpenAI request, in order, as parsed records.
inline std::vector<nlohmann::json> ToolResultsOf(const nlohmann::json& request) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& m : request["body"]["messages"]) {
    if (m["role"] == "tool") out.push_back(nlohmann::json::parse(m["content"].get<std::string>()));
  }
  return out;
}

// The environment of an odin run against the fake model (OpenAI format):
// its URL and a key, no Anthropic settings, the test's process mark, and
// the user's config and state directories under `user`.
inline std::map<std::string, std::string> FakeModelEnv(const FakeLlm& llm, const std::string& marker,
                                                       const TempWorkspace& user) {
  return {{"OPENAI_BASE_URL", llm.OpenAiUrl()},
          {"OPENAI_API_KEY", "test-key"},
          {"ANTHROPIC_BASE_URL", ""},
          {"ANTHROPIC_API_KEY", ""},
          {"ODIN_TEST_MARK", marker},
          {"XDG_CONFIG_HOME", user.Join("config")},
          {"XDG_STATE_HOME", user.Join("state")}};
}

// Pieces of a script: a tool call, a response with calls, a text answer.
inline nlohmann::json Call(const std::string& tool, const nlohmann::json& args) {
  return {{"name", tool}, {"arguments", args}};
}
inline nlohmann::json Turn(std::vector<nlohmann::json> calls) { return {{"tool_calls", calls}}; }
inline nlohmann::json Text(const std::string& text) { return {{"text", text}}; }

}  // namespace odin::testing

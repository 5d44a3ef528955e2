#pragma once
// Scripts for a FakeLlm and the requests it received, parsed: for the
// integration tests that script a model and check what it was sent. (JSON
// stays out of test_util.h.)

#include <algorithm>
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

// The requests the main script answered (not the utility model's or the
// reviewers' by_system ones, nor routed subagents').
inline std::vector<nlohmann::json> ScriptRequestsOf(const FakeLlm& llm) {
  std::vector<nlohmann::json> out;
  for (nlohmann::json& r : RequestsOf(llm)) {
    if (r["n"].get<int64_t>() < 1000000) out.push_back(std::move(r));
  }
  return out;
}

// How a request's per-turn facts begin (ChatRequest::tail: the file cache,
// the todo list, the budget), sent after the conversation.
inline constexpr char kTurnFactsPrefix[] = "[runtime] This turn's state, from Odin:";

// The last message of an OpenAI request's conversation: the one before the
// per-turn facts, if they came.
inline const nlohmann::json& LastMessageOf(const nlohmann::json& request) {
  const nlohmann::json& messages = request["body"]["messages"];
  const nlohmann::json& last = messages.back();
  if (messages.size() > 1 && last["role"] == "user" && last["content"].is_string() &&
      last["content"].get<std::string>().rfind(kTurnFactsPrefix, 0) == 0) {
    return messages[messages.size() - 2];
  }
  return last;
}

// The per-turn facts of an OpenAI request, or "".
inline std::string TurnFactsOf(const nlohmann::json& request) {
  const nlohmann::json& last = request["body"]["messages"].back();
  if (last["role"] != "user" || !last["content"].is_string()) return "";
  std::string text = last["content"].get<std::string>();
  return text.rfind(kTurnFactsPrefix, 0) == 0 ? text : "";
}

// The tool results in an OpenAI request, in order, as parsed records.
inline std::vector<nlohmann::json> ToolResultsOf(const nlohmann::json& request) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& m : request["body"]["messages"]) {
    if (m["role"] == "tool") out.push_back(nlohmann::json::parse(m["content"].get<std::string>()));
  }
  return out;
}

// The names of the tools an OpenAI request offers, in order.
inline std::vector<std::string> ToolNamesOf(const nlohmann::json& request) {
  std::vector<std::string> names;
  for (const nlohmann::json& t : request["body"]["tools"]) names.push_back(t["function"]["name"]);
  return names;
}

// Whether v holds x.
inline bool Contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
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
          {"CLAUDE_CONFIG_DIR", user.Join("claude")},  // never the tester's own ~/.claude
          {"XDG_STATE_HOME", user.Join("state")}};
}

// Pieces of a script: a tool call, a response with calls, a text answer.
inline nlohmann::json Call(const std::string& tool, const nlohmann::json& args) {
  return {{"name", tool}, {"arguments", args}};
}
inline nlohmann::json Turn(std::vector<nlohmann::json> calls) { return {{"tool_calls", calls}}; }
inline nlohmann::json Text(const std::string& text) { return {{"text", text}}; }
// Letters for n, to tell scripted calls apart: the stall detector blurs
// digits.
inline std::string Word(int n) {
  std::string w;
  do {
    w += static_cast<char>('a' + n % 26);
    n /= 26;
  } while (n > 0);
  return w;
}

// A "by_system" map (fake_llm_server) under which every reviewer passes:
// the hydrator's one-step qa-proof plan, the critic's PROCEED, the drift
// auditor's OK, the QA verifier's VERIFIED (citing the first evidence id),
// a reflection. For tests of something else in the safe and strict profiles,
// which turn the reviewers on.
inline nlohmann::json PassingReviewers() {
  using nlohmann::json;
  auto answer = [](const json& j) { return json{{"text", j.dump()}}; };
  return {{"You are Odin's hydrator", answer({{"intent", "do what the user asked"},
                                              {"acceptance_criteria", {"the user's request is met"}},
                                              {"steps", {{{"text", "make the change"}}}},
                                              {"workflow", "qa-proof"}})},
          {"You are Odin's plan critic", answer({{"verdict", "PROCEED"}, {"reasons", json::array()}})},
          {"You are Odin's drift auditor", answer({{"verdict", "OK"}, {"reasons", json::array()}})},
          {"You are Odin's QA verifier",
           answer({{"verdict", "VERIFIED"},
                   {"criteria",
                    {{{"criterion", "the user's request is met"}, {"met", true}, {"evidence", {"@evidence_id"}}}}},
                   {"findings", json::array()}})},
          {"You are Odin's session reflector", answer({{"asked", "a change"},
                                                       {"done", "the change"},
                                                       {"failed_and_fixed", json::array()},
                                                       {"open_risks", json::array()}})}};
}

}  // namespace odin::testing

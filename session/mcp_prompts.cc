#include "session/mcp_prompts.h"

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "odin/v1/worker.pb.h"
#include "session/agent_session.h"
#include "tools/check_output.h"      // SplitCommandLine
#include "tools/text_file.h"         // ToDisplayText
#include "session/session_events.h"  // ToolResultLine

namespace odin {

namespace {

const McpRegistry::Server* ServerNamed(const McpRegistry& registry, const std::string& name) {
  for (const McpRegistry::Server& s : registry.servers()) {
    if (s.spec.name == name) return &s;
  }
  return nullptr;
}

}  // namespace

std::optional<McpPromptLine> ParseMcpPromptLine(const McpRegistry& registry, const std::string& line) {
  const std::string prefix = std::string("/") + kMcpToolPrefix;
  if (line.rfind(prefix, 0) != 0) return std::nullopt;
  size_t end = line.find_first_of(" \t\n");
  std::string name = line.substr(1, end == std::string::npos ? std::string::npos : end - 1);
  McpPromptLine out;
  if (!McpRegistry::SplitName(name, &out.server, &out.prompt) || ServerNamed(registry, out.server) == nullptr) {
    return std::nullopt;
  }
  if (end != std::string::npos) {
    size_t start = line.find_first_not_of(" \t\n", end);
    if (start != std::string::npos) out.args = line.substr(start);
  }
  return out;
}

StatusOr<std::map<std::string, std::string>> McpPromptArguments(const McpPrompt& prompt, const std::string& args) {
  std::map<std::string, std::string> out;
  std::vector<std::string> positional;
  for (const std::string& word : SplitCommandLine(args)) {
    size_t eq = word.find('=');
    bool named = false;
    if (eq != std::string::npos && eq > 0) {
      for (const McpPromptArgument& a : prompt.arguments) named = named || a.name == word.substr(0, eq);
    }
    if (named) {
      out[word.substr(0, eq)] = word.substr(eq + 1);
    } else {
      positional.push_back(word);
    }
  }
  size_t next = 0;
  for (const McpPromptArgument& a : prompt.arguments) {
    if (out.count(a.name) || next >= positional.size()) continue;
    out[a.name] = positional[next++];
  }
  if (next < positional.size()) {
    return Status::InvalidArgument("takes " + std::to_string(prompt.arguments.size()) + " arguments; '" +
                                   positional[next] + "' is one too many");
  }
  for (const McpPromptArgument& a : prompt.arguments) {
    if (a.required && !out.count(a.name)) return Status::InvalidArgument("missing " + a.name + " (required)");
  }
  return out;
}

StatusOr<std::string> ExpandMcpPrompt(AgentSession& session, const McpPromptLine& line, Mode mode) {
  Coordinator& co = session.runtime().coordinator();
  const std::string shown = std::string("/") + kMcpToolPrefix + line.server + "__" + line.prompt;
  const McpRegistry::Server* s = ServerNamed(co.mcp(), line.server);
  if (s == nullptr) return Status::NotFound(shown, "no MCP server is named '" + line.server + "'");
  // The session starts its servers in the background: this one may still be.
  SteadyTime deadline = RealClock::Get()->Now() + std::chrono::seconds(s->spec.startup_timeout_seconds + 5);
  while (s->state == McpRegistry::State::kStarting) {
    RETURN_IF_ERROR(session.Poll(std::chrono::milliseconds(100)));
    if (RealClock::Get()->Now() > deadline) {
      return Status::DeadlineExceeded(shown, "MCP server " + line.server + " did not start; nothing was sent");
    }
  }
  if (s->state == McpRegistry::State::kFailed) {
    return Status::FailedPrecondition(shown, "MCP server " + line.server + " failed: " + s->error);
  }
  const McpPrompt* prompt = nullptr;
  for (const McpPrompt& p : s->prompts) {
    if (p.name == line.prompt) prompt = &p;
  }
  if (prompt == nullptr) {
    return Status::NotFound(shown, "MCP server " + line.server + " has no prompt '" + line.prompt + "'");
  }
  StatusOr<std::map<std::string, std::string>> args = McpPromptArguments(*prompt, line.args);
  if (!args.ok()) return Status::InvalidArgument(shown, args.status().message() + "; nothing was sent");
  auto result = std::make_shared<std::optional<v1::ToolResult>>();
  // In the user's mode: in ask mode a writable server's prompt is fetched
  // where it cannot write.
  co.GetMcpPrompt(line.server, line.prompt,
                  nlohmann::json(*args).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  CallModeOf(mode), [result](const v1::ToolResult& r) { *result = r; });
  // The call's own deadline (the server's timeout) ends it.
  while (!*result) RETURN_IF_ERROR(session.Poll(std::chrono::milliseconds(100)));
  const v1::ToolResult& r = **result;
  if (r.status() != v1::TOOL_STATUS_OK) {
    return Status::FailedPrecondition(
        shown, ToDisplayText(ToolResultLine(kMcpGetPromptTool, r)) + " (" + r.execution_id() + "); nothing was sent");
  }
  nlohmann::json out = ParseJson(r.output_json());
  if (!out.is_object() || !out.contains("text") || !out["text"].is_string()) {
    return Status::Internal(shown, "the MCP worker's answer has no text; nothing was sent");
  }
  return out["text"].get<std::string>();
}

std::string DescribeMcpPrompts(const McpRegistry& registry) {
  std::string out;
  for (const McpRegistry::Server& s : registry.servers()) {
    for (const McpPrompt& p : s.prompts) {
      std::string args;
      for (const McpPromptArgument& a : p.arguments)
        args += " " + std::string(a.required ? "" : "[") + a.name + (a.required ? "" : "]");
      out += "  /" + std::string(kMcpToolPrefix) + s.spec.name + "__" + p.name + args +
             (p.description.empty() ? "" : "  " + p.description.substr(0, 120)) + "\n";
    }
  }
  return out;
}

}  // namespace odin

#pragma once
// An MCP server's prompts as slash commands: "/mcp__SERVER__PROMPT ARGS",
// typed interactively or given to `odin -p`, becomes the message the
// server's prompt makes (prompts/get), fetched by Odin's own call
// McpGetPrompt in the server's worker and recorded like any execution.
// Built-in commands and custom commands come first: only a line none of
// them takes gets here, and only for a configured server.
//
// Arguments: NAME=VALUE sets a declared argument; other words fill the
// declared arguments not set that way, in order; quotes group words. A
// missing required argument, or one the prompt does not declare, is an
// error naming it, and nothing is sent.

#include <map>
#include <optional>
#include <string>

#include "base/status.h"
#include "mcp/mcp_registry.h"
#include "planner/tool_host.h"  // Mode

namespace odin {

class AgentSession;

struct McpPromptLine {
  std::string server;
  std::string prompt;
  std::string args;  // the rest of the line
};

// The MCP prompt command the line names, if it names one of a configured
// server (whether or not it has that prompt: ExpandMcpPrompt says so).
std::optional<McpPromptLine> ParseMcpPromptLine(const McpRegistry& registry, const std::string& line);

// The prompt's arguments from what was typed.
StatusOr<std::map<std::string, std::string>> McpPromptArguments(const McpPrompt& prompt, const std::string& args);

// The message: waits for the server while it starts (its startup timeout at
// most), then gets the prompt. Runs the session's loop meanwhile. An error
// is one line naming the command; nothing is sent then.
StatusOr<std::string> ExpandMcpPrompt(AgentSession& session, const McpPromptLine& line, Mode mode);

// The servers' prompts with their arguments and descriptions, for /help; ""
// if none.
std::string DescribeMcpPrompts(const McpRegistry& registry);

}  // namespace odin

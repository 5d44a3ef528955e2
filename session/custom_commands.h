#pragma once
// Custom slash commands (.claude/commands/NAME.md, ~/.claude/commands,
// ~/.config/odin/commands): "/NAME ARGS" typed interactively or given to
// `odin -p` becomes the message the file's body makes, as Claude Code makes
// it: $ARGUMENTS, $ARGUMENTS[N] and $N take the arguments; @path attaches
// a workspace file; a !`command` runs first, as the user's own command
// (sandboxed, in the session's mode, through the command rules, recorded
// in the ledger, time- and size-capped), and its output takes its place.
// allowed-tools narrows the message's tools (the gate enforces it).

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "planner/agent.h"
#include "planner/claude_defs.h"
#include "session/mcp_prompts.h"

namespace odin {

class AgentSession;

// The command line names ("/review-pr 12"): the definition (a custom
// command's, else a skill's, as Claude Code takes both; null when none has
// that name) and the arguments after the name.
const ClaudeDef* FindCustomCommand(const ClaudeDefs& defs, const std::string& line, std::string* args);

struct ExpandedCommand {
  std::string text;  // the message
  std::optional<std::vector<std::string>> tool_list;
  std::vector<std::string> notes;  // one line each: a file attached or not, a model not applied
};

// The message of def run with args in mode; an error (one line, naming the
// command) when a !`command` fails, is refused or times out: nothing is
// sent then. Runs the session's loop while its commands run.
StatusOr<ExpandedCommand> ExpandCustomCommand(AgentSession& session, const ClaudeDef& def, const std::string& args,
                                              Mode mode);

// $ARGUMENTS, $ARGUMENTS[N] and $N (from 1) in body replaced by args. In a
// shell line (in_shell), by the variables ${ODIN_ARGUMENTS} and
// ${ODIN_ARG_N} instead, which the line sets first: arguments are data there.
std::string SubstituteArguments(const std::string& body, const std::string& args, bool in_shell);

// The message with each @path's workspace file attached after it: the
// message as typed, then the files. What cannot be attached (outside the
// workspace, Odin's state, a file a Read deny rule covers: unreadable, as
// tool_rules.h's UnreadablePatterns) is said in *notes, and the @word stays.
// With images set, a PNG, JPEG, GIF or WebP file (by its bytes) goes there
// instead (llm/images.h's limits), for the message's images.
std::string AttachFiles(const std::string& text, const std::string& root, const std::vector<std::string>& unreadable,
                        std::vector<std::string>* notes, std::vector<ImageData>* images = nullptr);

// Custom commands and their descriptions, for /help.
std::string DescribeCustomCommands(const ClaudeDefs& defs);

// A slash command that is not a built-in: a custom command (or skill), else
// an MCP server's prompt; what a line names, in that order.
struct SlashCommand {
  const ClaudeDef* def = nullptr;           // a custom command's
  std::optional<McpPromptLine> mcp_prompt;  // else an MCP prompt's
  std::string args;
  std::string origin;  // for the user: "/NAME from SOURCE"
};
std::optional<SlashCommand> FindSlashCommand(AgentSession& session, const std::string& line);
// Its message, as ExpandCustomCommand or ExpandMcpPrompt makes it.
StatusOr<ExpandedCommand> ExpandSlashCommand(AgentSession& session, const SlashCommand& command, Mode mode);
// /help's sections for them: custom commands, MCP prompts; "" if none.
std::string DescribeSlashCommands(AgentSession& session);

}  // namespace odin

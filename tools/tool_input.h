#pragma once
// One call's arguments, typed (v1::ToolInput, worker.proto). The coordinator
// parses a call's JSON once, at Submit, and makes its typed input here; the
// gates, the coordinator's handlers and the worker read that value and
// parse no JSON again. (An MCP server's tool has no typed input: its
// arguments pass through to the server as canonical JSON text.)

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"
#include "tools/exec_command.h"
#include "tools/file_tool_args.h"
#include "tools/tool_catalog.h"

namespace odin {
namespace v1 {
class ToolInput;
class ReadInput;
class WriteInput;
class EditInput;
class EditSymbolInput;
class GrepInput;
class GlobInput;
class LsInput;
class CommandInput;
class WebFetchInput;
}  // namespace v1

// The typed input of `tool` from its arguments (a parsed JSON object),
// checked against the tool's schema; InvalidArgument naming the tool and the
// problem. Tools whose handler runs in the coordinator on the parsed object
// itself (TodoWrite, plan_update, memory_query, ContextSummarizer, the index
// queries, AgentTool, lsp_check), MCP tools and unknown ones get an empty
// input: their handlers check their own arguments.
StatusOr<v1::ToolInput> ParseToolInput(const std::string& tool, const nlohmann::json& args);

// Back into the tools' own forms, for the worker that runs the call.
ReadArgs ArgsOf(const v1::ReadInput& in);
WriteArgs ArgsOf(const v1::WriteInput& in);
EditArgs ArgsOf(const v1::EditInput& in);
EditSymbolArgs ArgsOf(const v1::EditSymbolInput& in);
GrepArgs ArgsOf(const v1::GrepInput& in);
GlobArgs ArgsOf(const v1::GlobInput& in);
LsArgs ArgsOf(const v1::LsInput& in);
CommandArgs ArgsOf(const v1::CommandInput& in);
WebFetchArgs ArgsOf(const v1::WebFetchInput& in);

// The worker's answer to a request without the typed input its tool needs.
Status MissingInput(const std::string& tool);

// And from them, for the calls the coordinator makes up itself.
void SetInput(const WriteArgs& a, v1::ToolInput* in);
void SetInput(const EditSymbolArgs& a, v1::ToolInput* in);

// The path a reading tool (Read, Grep, Glob, LS) looks at, as given: "" if
// it gives none (the workspace) or the input is another tool's.
std::string ReadPathOf(const v1::ToolInput& in);
// The file a writing tool (WriteFile, InitTool, EditTool, MultiEditTool, a
// resolved EditSymbol) writes, as given; "" for any other input.
std::string WritePathOf(const v1::ToolInput& in);

}  // namespace odin

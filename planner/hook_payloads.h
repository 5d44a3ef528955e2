#pragma once
// What a PostToolUse hook is told a call returned, in Claude Code's shape
// for the tools Claude Code has (its tool_response, as Claude Code 2.1.197
// sends it: tests/claude_code/side_by_side.sh), Odin's for the others.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace odin {

// The facts of a call's result the payload is made of (the coordinator
// fills them from the worker's ToolResult).
struct HookToolFacts {
  std::string status;  // Odin's: "ok", "error", "timeout", ...
  std::optional<int> exit_code;
  std::string output;        // the combined output (capped)
  bool interrupted = false;  // timed out or cancelled
  // A writing tool's file: whether it is new, its content before and after,
  // and the unified diff of the change.
  bool wrote = false;
  bool created = false;
  std::string content_before;
  std::string content_after;
  std::string diff;
  // Read: the file as read (whole when full).
  bool read = false;
  bool read_full = false;
  std::string read_content;
  std::vector<std::pair<std::string, std::string>> changes;  // a command's: path, "created"/"modified"/...
};

// Claude Code's structuredPatch of a unified diff: one {oldStart, oldLines,
// newStart, newLines, lines} per hunk, each line with its ' ', '-' or '+'.
nlohmann::json StructuredPatch(const std::string& unified_diff);

// The tool_response of a call of odin_tool whose tool_input (Claude Code's
// form, planner/hooks.h HookToolInput) was input:
//   Bash   {stdout, stderr, interrupted, isImage, noOutputExpected}, and Odin's
//          "changes" ([{path, change}]) when the command changed files
//   Write  {type: create|update, filePath, content, structuredPatch, originalFile, userModified}
//   Edit   {filePath, oldString, newString, originalFile, structuredPatch, userModified, replaceAll}
//   MultiEdit {filePath, edits, originalFileContents, structuredPatch}
//   Read   {type: "text", file: {filePath, content, numLines, startLine, totalLines}}
// and Odin's {status, exit_code, output, changes} for every other tool. A
// file's text (content, originalFile, a patch) is cut at 64 KiB, said in it:
// the payload is every hook's stdin and is recorded.
nlohmann::json HookToolResponse(const std::string& odin_tool, const nlohmann::json& input, const HookToolFacts& facts);

// One line of the transcript hooks read (transcript_path), in Claude Code's
// JSONL shape: {parentUuid, isSidechain, userType, cwd, sessionId, version,
// type: user|assistant, message: {role, content}, uuid, timestamp}. A user
// message's content is its text; an assistant's is [{type: text}, {type:
// tool_use, id, name, input}] with Claude Code's tool names and inputs (as
// hooks are told them); tool results are a user line of [{type:
// tool_result, tool_use_id, content, is_error}].
struct TranscriptContext {
  std::string session_id;
  std::string cwd;
  std::string workspace;  // where tool inputs' paths resolve
  std::string model;
  std::string parent_uuid;  // the previous line's ("" for the first: null)
};
enum class TranscriptRole { kUser, kAssistant, kToolResults };
struct TranscriptCall {
  std::string id;
  std::string tool;  // Odin's name
  std::string arguments_json;
};
struct TranscriptResult {
  std::string call_id;
  std::string content;
  bool is_error = false;
};
// uuid: this line's; ms: its time (Unix milliseconds).
nlohmann::json ClaudeTranscriptLine(const TranscriptContext& context, TranscriptRole role, const std::string& text,
                                    const std::vector<TranscriptCall>& calls,
                                    const std::vector<TranscriptResult>& results, const std::string& uuid, int64_t ms);
// A random UUID (version 4), as Claude Code's lines carry.
std::string NewUuid();

}  // namespace odin

#pragma once
// The arguments of the file tools (LS, Glob, Grep, Read, WriteFile, EditTool,
// MultiEditTool, TodoWrite), parsed and checked against their schemas (those
// of the seed, plus Read and Grep's offset/limit). Both sides use these: the
// coordinator's gates and the worker that runs the call.
//
// Every parse returns InvalidArgument naming the tool and the problem:
// malformed JSON, a missing required field, a wrong type, an unknown field.
// The *ArgsOf forms read arguments already parsed (a call's, once, at
// Submit: tools/tool_input.h); the Parse*Args forms parse JSON text first
// (the ledger's records, tests).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"

namespace odin {

constexpr const char kLsTool[] = "LS";
constexpr const char kGlobTool[] = "Glob";
constexpr const char kGrepTool[] = "Grep";
constexpr const char kReadTool[] = "Read";
constexpr const char kWriteFileTool[] = "WriteFile";
constexpr const char kEditTool[] = "EditTool";
constexpr const char kMultiEditTool[] = "MultiEditTool";
constexpr const char kTodoWriteTool[] = "TodoWrite";

// Read shows at most this many lines unless asked for more.
constexpr uint32_t kDefaultReadLines = 2000;

struct ReadArgs {
  std::string file_path;
  uint32_t offset = 1;  // first line, 1-based
  uint32_t limit = 0;   // lines; 0: kDefaultReadLines
};

struct WriteArgs {
  std::string file_path;
  std::string content;
};

struct EditSpec {
  std::string old_string;
  std::string new_string;
  bool replace_all = false;
};

// EditTool (one edit) and MultiEditTool (several, applied in order).
struct EditArgs {
  std::string file_path;
  std::vector<EditSpec> edits;
};

struct GrepArgs {
  std::string pattern;
  std::string path;  // "" : the working directory
  std::string glob;
  std::string type;
  std::string output_mode = "files_with_matches";  // or "content", "count"
  bool line_numbers = false;                       // -n
  bool ignore_case = false;                        // -i
  int after = -1, before = -1, context = -1;       // -A, -B, -C; -1: unset
  uint32_t head_limit = 0;                         // 0: no limit
  bool multiline = false;
  uint32_t offset = 0;  // with limit: a line range of one file; 0: unset
  uint32_t limit = 0;
};

struct GlobArgs {
  std::string pattern;
  std::string path;
};

struct LsArgs {
  std::string path;
  std::vector<std::string> ignore;
};

struct TodoItem {
  std::string id;
  std::string content;
  std::string status;  // pending, in_progress, completed
};

struct TodoArgs {
  std::vector<TodoItem> todos;
};

StatusOr<ReadArgs> ReadArgsOf(const nlohmann::json& args);
StatusOr<WriteArgs> WriteArgsOf(const nlohmann::json& args);
// InitTool's: {"content": string}, the whole new ODIN.md (file_path is
// "ODIN.md", always: the model does not choose it).
StatusOr<WriteArgs> InitToolArgsOf(const nlohmann::json& args);
StatusOr<EditArgs> EditArgsOf(std::string_view tool, const nlohmann::json& args);
StatusOr<GrepArgs> GrepArgsOf(const nlohmann::json& args);
StatusOr<GlobArgs> GlobArgsOf(const nlohmann::json& args);
StatusOr<LsArgs> LsArgsOf(const nlohmann::json& args);
StatusOr<TodoArgs> TodoArgsOf(const nlohmann::json& args);

StatusOr<ReadArgs> ParseReadArgs(std::string_view json);
// tool is kEditTool or kMultiEditTool.
StatusOr<EditArgs> ParseEditArgs(std::string_view tool, std::string_view json);

// EditSymbol (seed 000's splice_patch): replaces, inserts before or after,
// or deletes the span of a symbol the index knows, with the span's SHA-256
// as its compare-and-swap precondition.
constexpr const char kEditSymbolTool[] = "EditSymbol";
enum class SpanOperation { kReplace, kInsertBefore, kInsertAfter, kDelete };
struct EditSymbolArgs {
  std::string symbol_id;
  std::string span_sha256;
  SpanOperation operation = SpanOperation::kReplace;
  std::string content;  // empty for delete
  // Set by the coordinator once it has found the span in the index (never
  // by the model): what the worker splices.
  std::string file_path;
  uint32_t start_byte = 0, end_byte = 0;
};
// resolved: the coordinator's arguments for the worker (file_path and the
// span included); else the model's, which must not name them.
StatusOr<EditSymbolArgs> EditSymbolArgsOf(const nlohmann::json& args, bool resolved);
StatusOr<EditSymbolArgs> ParseEditSymbolArgs(std::string_view json, bool resolved);
StatusOr<GrepArgs> ParseGrepArgs(std::string_view json);
StatusOr<TodoArgs> ParseTodoArgs(std::string_view json);

// The file a writing tool targets, from its arguments ("" if they do not parse).
std::string TargetFileOf(std::string_view tool, std::string_view json);

}  // namespace odin

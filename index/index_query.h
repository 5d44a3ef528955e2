#pragma once
// The query tools the model grounds its edits with (issue 20): symbols,
// references, impact and outline, answered from the symbol index as JSON
// text, and the repository map. Each answer names the files it covered
// (QueryAnswer::covered), which the strict workflow takes as evidence.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "index/index_db.h"

namespace odin::index {

constexpr char kSymbolsTool[] = "symbols";
constexpr char kReferencesTool[] = "references";
constexpr char kImpactTool[] = "impact";
constexpr char kOutlineTool[] = "outline";
// True for the four tools above.
bool IsIndexQueryTool(std::string_view tool);

// A workspace file's bytes by its relative path (the coordinator resolves
// it inside the workspace, never through a symlink out of it).
using ReadWorkspaceFile = std::function<StatusOr<std::string>(const std::string& relative_path)>;

struct QueryAnswer {
  std::string text;                  // JSON, for the model
  std::vector<std::string> covered;  // relative paths the answer named
};

// Runs tool with its JSON arguments. InvalidArgument names a bad argument;
// NotFound a symbol id that is not (or no longer) in the index.
StatusOr<QueryAnswer> RunIndexQuery(std::string_view tool, const std::string& arguments_json, IndexDb* db,
                                    const ReadWorkspaceFile& read);

// A symbol's span as the index has it, checked against the file now: the
// span's bytes and both checksums. FailedPrecondition when the file is not
// what the index parsed (it changed since), NotFound when the id is gone.
struct SpanNow {
  SymbolRow symbol;
  std::string file_content;
  std::string file_sha256;
  std::string span_sha256;
};
StatusOr<SpanNow> ResolveSpan(const std::string& symbol_id, IndexDb* db, const ReadWorkspaceFile& read);

// The repository map: the most connected symbols, grouped by file, within
// about budget_tokens (4 bytes a token). Empty when the index is empty.
StatusOr<std::string> RepoMap(IndexDb* db, size_t budget_tokens);

}  // namespace odin::index

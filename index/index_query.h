#pragma once
// The query tools the model grounds its edits with (issue 20): symbols,
// references, impact and outline, answered from the symbol index as JSON
// text, and the repository map. Each answer names the files it covered
// (QueryAnswer::covered), which the strict workflow takes as evidence.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"
#include "index/index_db.h"

namespace odin::index {

constexpr char kSymbolsTool[] = "symbols";
constexpr char kReferencesTool[] = "references";
constexpr char kImpactTool[] = "impact";
constexpr char kOutlineTool[] = "outline";
// A workspace file's bytes by its relative path (the coordinator resolves
// it inside the workspace, never through a symlink out of it).
using ReadWorkspaceFile = std::function<StatusOr<std::string>(const std::string& relative_path)>;

struct QueryAnswer {
  std::string text;                  // JSON, for the model
  std::vector<std::string> covered;  // relative paths the answer named
};

// Whether a language server may answer tool's query better than the index
// (references: the semantic set); the coordinator asks one first then.
bool LanguageServerMayAnswer(std::string_view tool);

// Runs tool with its arguments (a JSON object, parsed once at Submit). InvalidArgument names a bad argument;
// NotFound a symbol id that is not (or no longer) in the index.
StatusOr<QueryAnswer> RunIndexQuery(std::string_view tool, const nlohmann::json& arguments, IndexDb* db,
                                    const ReadWorkspaceFile& read);

// `references` from the index alone: every use of the symbol's name,
// labelled syntactic and not complete; semantic_unavailable, when not empty,
// says why no language server answered.
StatusOr<QueryAnswer> SyntacticReferences(const nlohmann::json& arguments, IndexDb* db,
                                          const std::string& semantic_unavailable);

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

// Where a language server is pointed for `references` (the coordinator asks
// one when one serves the symbol's file): the symbol, the file as the index
// parsed it, and the position of the symbol's name in it (0-based line,
// 0-based UTF-16 column, as LSP counts). Errors as ResolveSpan's, and
// InvalidArgument for bad arguments.
struct ReferenceTarget {
  SymbolRow symbol;
  std::string file_content;
  uint32_t line = 0, character = 0;
  size_t limit = 100;  // the call's "limit": locations answered at most
};
StatusOr<ReferenceTarget> FindReferenceTarget(const nlohmann::json& arguments, IndexDb* db,
                                              const ReadWorkspaceFile& read);

// A language server's references made the answer to `references`: each
// place (a workspace-relative path and 1-based line) grouped under the
// indexed symbol that encloses it. `outside` counts places outside the
// workspace (system headers, libraries); `completeness` says why the set is
// or is not known to be complete.
struct ServerReference {
  std::string path;
  uint32_t line = 0;
};
StatusOr<QueryAnswer> SemanticReferences(const ReferenceTarget& target, const std::string& server,
                                         const std::vector<ServerReference>& places, size_t outside, bool complete,
                                         const std::string& completeness, IndexDb* db);

// The repository map: the most connected symbols, grouped by file, within
// about budget_tokens (4 bytes a token). Empty when the index is empty.
StatusOr<std::string> RepoMap(IndexDb* db, size_t budget_tokens);

}  // namespace odin::index

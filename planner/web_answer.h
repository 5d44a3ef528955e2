#pragma once
// WebFetch's second half, in the planner: the utility model answers the
// call's prompt over the fetched page (as Claude Code's WebFetch does), and
// the model reads that answer, marked as untrusted content. The page itself
// never reaches the planner model.

#include <string>

#include "base/status.h"
#include "llm/llm.h"

namespace odin {
namespace v1 {
class ToolResult;
}  // namespace v1

// The page's bytes the utility model reads, at most.
constexpr size_t kWebAnswerPageBytes = 100 * 1024;

// Whether a WebFetch result gets an answer: ok, with a page (a redirect to
// another host has none).
bool NeedsWebAnswer(const v1::ToolResult& r);

// The utility model's request: the page (cut at kWebAnswerPageBytes), its
// URL, and the prompt.
ChatRequest WebAnswerRequest(const std::string& model, const std::string& arguments_json, const v1::ToolResult& r);

// What the model reads of a WebFetch that got an answer (or whose answer
// failed: then the error, and the page is not shown).
std::string WebFetchRecord(const std::string& execution_id, const v1::ToolResult& r,
                           const StatusOr<std::string>& answer);

}  // namespace odin

#pragma once
// Ending a tool call in failure, the same way in every tool.

#include <string>

#include "base/status.h"

namespace odin {
namespace v1 {
class ToolResult;
}

// Sets r's status (a v1::ToolStatus: ERROR, or REJECTED for a gate's refusal),
// exit reason NORMAL and error from s. Returns the text the model sees:
// "Error: <message>\n" (or "Rejected: ...").
std::string FailResult(v1::ToolResult* r, int tool_status, const Status& s);

}  // namespace odin

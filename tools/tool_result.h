#pragma once
// Ending a tool call in failure, the same way in every tool.

#include <string>

#include "base/status.h"

namespace odin {
namespace v1 {
class ToolResult;
enum ToolStatus : int;
enum ExitReason : int;
}  // namespace v1

// Sets r's status (a v1::ToolStatus: ERROR, or REJECTED for a gate's refusal),
// exit reason NORMAL and error from s. Returns the text the model sees:
// "Error: <message>\n" (or "Rejected: ...").
std::string FailResult(v1::ToolResult* r, v1::ToolStatus tool_status, const Status& s);

// Ledger names of statuses and exit reasons ("timed_out", "sandbox_setup_failed").
const char* ToolStatusName(v1::ToolStatus tool_status);
const char* ExitReasonName(v1::ExitReason exit_reason);

}  // namespace odin

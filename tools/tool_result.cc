#include "tools/tool_result.h"

#include "odin/v1/worker.pb.h"

namespace odin {

std::string FailResult(v1::ToolResult* r, v1::ToolStatus tool_status, const Status& s) {
  r->set_status(tool_status);
  r->set_exit_reason(v1::EXIT_REASON_NORMAL);
  r->mutable_error()->set_code(static_cast<v1::Code>(s.code()));
  r->mutable_error()->set_message(s.message());
  return (tool_status == v1::TOOL_STATUS_REJECTED ? "Rejected: " : "Error: ") + s.message() + "\n";
}

const char* ToolStatusName(v1::ToolStatus s) {
  switch (s) {
    case v1::TOOL_STATUS_OK: return "ok";
    case v1::TOOL_STATUS_ERROR: return "error";
    case v1::TOOL_STATUS_REJECTED: return "rejected";
    case v1::TOOL_STATUS_TIMED_OUT: return "timed_out";
    case v1::TOOL_STATUS_CRASHED: return "crashed";
    case v1::TOOL_STATUS_CANCELLED: return "cancelled";
    default: return "unknown";
  }
}

const char* ExitReasonName(v1::ExitReason r) {
  switch (r) {
    case v1::EXIT_REASON_NORMAL: return "normal";
    case v1::EXIT_REASON_TIMEOUT: return "timeout";
    case v1::EXIT_REASON_KILLED: return "killed";
    case v1::EXIT_REASON_CRASHED: return "crashed";
    case v1::EXIT_REASON_SANDBOX_SETUP_FAILED: return "sandbox_setup_failed";
    case v1::EXIT_REASON_BUDGET_EXCEEDED: return "budget_exceeded";
    case v1::EXIT_REASON_STALLED: return "stalled";
    default: return "unspecified";
  }
}

}  // namespace odin

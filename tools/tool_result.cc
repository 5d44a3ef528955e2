#include "tools/tool_result.h"

#include "odin/v1/worker.pb.h"

namespace odin {

std::string FailResult(v1::ToolResult* r, int tool_status, const Status& s) {
  r->set_status(static_cast<v1::ToolStatus>(tool_status));
  r->set_exit_reason(v1::EXIT_REASON_NORMAL);
  r->mutable_error()->set_code(static_cast<v1::Code>(s.code()));
  r->mutable_error()->set_message(s.message());
  return (tool_status == v1::TOOL_STATUS_REJECTED ? "Rejected: " : "Error: ") + s.message() + "\n";
}

}  // namespace odin

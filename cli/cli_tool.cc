// odin tool: one tool call without a model, through the same gates, workers
// and ledger as the agent's. --session continues a session, so a Read and a
// following Edit can be scripted.

#include <unistd.h>

#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "base/canonical_json.h"
#include "base/json_input.h"
#include "planner/agent.h"
#include "cli/cli.h"
#include "session/runtime.h"
#include "tools/tool_catalog.h"
#include "odin/v1/worker.pb.h"
#include "tools/tool_result.h"

namespace odin {

int RunTool(const GlobalFlags& g, const ToolFlags& f) {
  auto fail = [](const std::string& message) {
    std::cerr << "odin tool: " << message << "\n";
    return kError;
  };
  Mode mode;
  if (!ParseMode(f.mode, &mode)) return fail("unknown mode '" + f.mode + "' (ask, plan or edit)");
  if (!IsValidUtf8(f.arguments)) return fail("the arguments are not valid UTF-8");

  std::optional<v1::ToolResult> result;
  Status recorded;
  std::string text;
  RuntimeFlags rf;
  rf.dir = g.dir;
  rf.sandbox = g.sandbox;
  rf.network = g.network;
  rf.workers = 1;
  rf.session_kind = "tool";
  rf.mode = f.mode;
  rf.resume_session = f.session;
  rf.validate = true;
  rf.approval = f.approval;
  StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Start(rf);
  if (!rt.ok()) return fail(rt.status().message());
  Coordinator& coord = (*rt)->coordinator();
  coord.on_worker_ready = [](const v1::Hello& hello) {
    if (!hello.sandbox().namespaces()) {
      std::cerr << "odin tool: warning: running WITHOUT a sandbox (" << hello.sandbox().description() << ")\n";
    }
  };

  ToolCall call;
  call.tool = f.name;
  call.arguments_json = f.arguments;
  call.mode = CallModeOf(mode);
  call.stream_limit_bytes = (*rt)->config().artifact_cap_bytes;
  call.output_head_bytes = (*rt)->config().output_head_bytes;
  call.output_tail_bytes = (*rt)->config().output_tail_bytes;
  call.last_command = true;  // one call: the worker need not make an overlay for another
  // The deadline an agent's call would get: the tool's, or the command's own.
  call.timeout = ToolTimeout((*rt)->config().tool_timeouts, call.tool, call.arguments_json);
  CallHandlers handlers;
  handlers.on_progress = [&](const v1::ToolProgress& p) {
    if (!p.has_output()) return;
    if (f.json) {
      text += p.output().data();
    } else {
      std::cout << p.output().data() << std::flush;
    }
  };
  handlers.on_done = [&](const v1::ToolResult& r, const Status& s) {
    result = r;
    recorded = s;
  };
  std::string id = coord.Submit(std::move(call), std::move(handlers));
  while (!result) {
    Status s = coord.Poll(seconds(1));
    if (!s.ok()) return fail(s.message());
  }
  if (!recorded.ok()) std::cerr << "odin tool: " << recorded.message() << "\n";
  const v1::ValidationVerdict& verdict = result->verdict();
  if (!f.json && result->has_verdict()) {
    // lsp_check's verdict is its output; a write's follows the write's.
    if (HandlerOf(f.name) == ToolHandler::kLspCheck) {
      std::cout << result->output_head();
    } else {
      std::cout << "validation: " << verdict.status() << " (lsp_check " << verdict.execution_id()
                << (verdict.validator().empty() ? "" : ", " + verdict.validator()) << ")\n"
                << verdict.summary() << (verdict.reason().empty() ? "" : verdict.reason() + "\n");
    }
  }
  if (f.json) {
    using nlohmann::json;
    json structured = ParseJson(result->output_json());
    json out = {{"session_id", coord.session_id()},
                {"execution_id", id},
                {"tool", f.name},
                {"status", ToolStatusName(result->status())},
                {"output", text},
                {"error", result->has_error() ? json(result->error().message()) : json()},
                {"result", structured.is_discarded() ? json() : structured},
                {"recorded", recorded.ok()}};
    if (result->has_exit_code()) out["exit_code"] = result->exit_code();
    if (result->has_verdict()) {
      out["validation"] = {{"execution_id", verdict.execution_id()}, {"status", verdict.status()},
                           {"validator", verdict.validator()},       {"new_errors", verdict.new_errors()},
                           {"summary", verdict.summary()},           {"reason", verdict.reason()}};
      if (HandlerOf(f.name) == ToolHandler::kLspCheck) out["output"] = result->output_head();
    }
    std::cout << out.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
  }
  return result->status() == v1::TOOL_STATUS_OK && recorded.ok() ? 0 : kError;
}

}  // namespace odin

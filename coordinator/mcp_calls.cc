// MCP servers' side of the coordinator: each stdio server is started (and
// its tools listed) by an McpListTools execution in an MCP worker of its
// own, in the background at session start; a call of mcp__SERVER__TOOL
// goes to that server's worker, after gate 1 (McpRegistry::CheckMode) and
// every other gate Submit applies to any call.

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "base/ids.h"
#include "coordinator/coordinator.h"
#include "odin/v1/worker.pb.h"
#include "planner/tool_specs.h"
#include "mcp/mcp_client.h"
#include "tools/tool_result.h"

namespace odin {

using nlohmann::json;

WorkerPolicy Coordinator::McpPolicy(const McpServerSpec& spec, CallMode mode) const {
  if (!spec.sandbox) return WorkerPolicy::kMcpHost;
  bool edit = mode == CallMode::kEdit || mode == CallMode::kExec;
  return spec.writable && edit ? WorkerPolicy::kMcpWritable : WorkerPolicy::kMcpReadonly;
}

void Coordinator::StartMcpServers() {
  for (const McpRegistry::Server& s : mcp_.servers()) {
    if (s.state != McpRegistry::State::kStarting) {
      if (on_mcp_server) on_mcp_server(s);
      continue;
    }
    std::string id = NewId("ex");
    std::string name = s.spec.name;
    Call& c = calls_[id];
    c.call.execution_id = id;
    c.call.tool = kMcpListToolsTool;
    c.call.arguments_json = json({{"server", name}}).dump();
    c.call.timeout = seconds(s.spec.startup_timeout_seconds);
    c.call.agent_id = o_.agent_id;
    c.call.mode = o_.mode;
    c.request.policy = McpPolicy(s.spec, o_.mode);
    c.request.lane = name;
    c.call.internal = true;
    mcp_.FindServer(name)->start_execution = id;
    c.handlers.on_done = [this, name](const v1::ToolResult& r, const Status&) {
      if (r.status() == v1::TOOL_STATUS_OK) {
        Status listed = mcp_.OnListed(name, r.output_json());
        if (!listed.ok()) spdlog::warn("{}", listed.message());
      } else {
        std::string why = r.has_error() ? r.error().message() : ToolStatusName(r.status());
        if (r.status() == v1::TOOL_STATUS_TIMED_OUT) why = "it did not start and list its tools in time";
        mcp_.OnFailed(name, why);
      }
      const McpRegistry::Server* s = mcp_.FindServer(name);
      spdlog::info("MCP server {}: {} {}", name, McpRegistry::StateName(s->state), s->error);
      // A start cut short by the session's end is no news to anyone.
      if (on_mcp_server && r.status() != v1::TOOL_STATUS_CANCELLED) on_mcp_server(*s);
      ReleaseMcpWaiting(name);
    };
    Dispatch(c);
  }
}

bool Coordinator::WaitForMcpServer(Call& c) {
  std::string server, tool;
  if (!McpRegistry::SplitName(c.call.tool, &server, &tool)) return false;
  McpRegistry::Server* s = mcp_.FindServer(server);
  if (s == nullptr || s->state != McpRegistry::State::kStarting || s->start_execution.empty()) return false;
  c.mcp_waiting = true;
  mcp_waiting_[server].push_back(c.call.execution_id);
  return true;
}

void Coordinator::ReleaseMcpWaiting(const std::string& server) {
  auto it = mcp_waiting_.find(server);
  if (it == mcp_waiting_.end()) return;
  std::vector<std::string> ids = std::move(it->second);
  mcp_waiting_.erase(it);
  for (const std::string& id : ids) {
    auto c = calls_.find(id);
    if (c == calls_.end()) continue;
    // Judged now, its arguments as Submit parsed them.
    c->second.mcp_waiting = false;
    Admit(c->second, Status::OK());
  }
}

std::vector<ToolSpec> Coordinator::ExtraToolSpecs(Mode mode) const {
  std::vector<ToolSpec> specs = mcp_.Specs(mode);
  if (init_active_ && mode == Mode::kEdit) specs.push_back(InitToolSpec());
  return specs;
}

Status Coordinator::PrepareMcpCall(Call& c) {
  ToolCall& tc = c.call;
  std::string server, tool;
  McpRegistry::SplitName(tc.tool, &server, &tool);
  McpRegistry::Server* s = mcp_.FindServer(server);
  if (s == nullptr) return Status::NotFound("unknown tool '" + tc.tool + "'");
  c.request.policy = McpPolicy(s->spec, tc.mode.value_or(o_.mode));
  c.request.lane = server;
  if (tc.timeout == Duration::zero()) tc.timeout = seconds(s->spec.timeout_seconds);
  return Status::OK();
}

}  // namespace odin

#include "coordinator/mcp_servers.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "base/ids.h"
#include "odin/v1/worker.pb.h"
#include "tools/tool_result.h"

namespace odin {

McpServers::McpServers(std::vector<McpServerSpec> specs, CallMode session_mode, Port port)
    : registry_(std::move(specs)), session_mode_(session_mode), port_(std::move(port)) {}

WorkerPolicy McpServers::PolicyOf(const McpServerSpec& spec, CallMode mode) {
  if (!spec.sandbox) return WorkerPolicy::kMcpHost;
  bool edit = mode == CallMode::kEdit || mode == CallMode::kExec;
  return spec.writable && edit ? WorkerPolicy::kMcpWritable : WorkerPolicy::kMcpReadonly;
}

void McpServers::Start() {
  for (const McpRegistry::Server& s : registry_.servers()) {
    if (s.state != McpRegistry::State::kStarting) {
      port_.news(s);
      continue;
    }
    std::string id = NewId("ex");
    std::string name = s.spec.name;
    // Known before the execution runs: one refused at once ends it here.
    registry_.FindServer(name)->start_execution = id;
    port_.list(id, nlohmann::json({{"server", name}}).dump(), PolicyOf(s.spec, session_mode_), name,
               seconds(s.spec.startup_timeout_seconds), [this, name](const v1::ToolResult& r) { Listed(name, r); });
  }
}

void McpServers::Listed(const std::string& name, const v1::ToolResult& r) {
  if (r.status() == v1::TOOL_STATUS_OK) {
    Status listed = registry_.OnListed(name, r.output_json());
    if (!listed.ok()) spdlog::warn("{}", listed.message());
  } else {
    std::string why = r.has_error() ? r.error().message() : ToolStatusName(r.status());
    if (r.status() == v1::TOOL_STATUS_TIMED_OUT) why = "it did not start and list its tools in time";
    registry_.OnFailed(name, why);
  }
  const McpRegistry::Server* s = registry_.FindServer(name);
  spdlog::info("MCP server {}: {} {}", name, McpRegistry::StateName(s->state), s->error);
  // A start cut short by the session's end is no news to anyone.
  if (r.status() != v1::TOOL_STATUS_CANCELLED) port_.news(*s);
  auto it = waiting_.find(name);
  if (it == waiting_.end()) return;
  std::vector<std::string> ids = std::move(it->second);
  waiting_.erase(it);
  for (const std::string& id : ids) port_.resume(id);
}

bool McpServers::Wait(const std::string& tool, const std::string& execution_id) {
  std::string server, name;
  if (!McpRegistry::SplitName(tool, &server, &name)) return false;
  McpRegistry::Server* s = registry_.FindServer(server);
  if (s == nullptr || s->state != McpRegistry::State::kStarting || s->start_execution.empty()) return false;
  waiting_[server].push_back(execution_id);
  return true;
}

void McpServers::Forget(const std::string& tool, const std::string& execution_id) {
  std::string server, name;
  McpRegistry::SplitName(tool, &server, &name);
  auto it = waiting_.find(server);
  if (it == waiting_.end()) return;
  std::erase(it->second, execution_id);
}

StatusOr<McpServers::Route> McpServers::RouteOf(const std::string& tool, CallMode mode) const {
  std::string server, name;
  McpRegistry::SplitName(tool, &server, &name);
  const McpRegistry::Server* s = nullptr;
  for (const McpRegistry::Server& each : registry_.servers()) {
    if (each.spec.name == server) s = &each;
  }
  if (s == nullptr) return Status::NotFound("unknown tool '" + tool + "'");
  return Route{PolicyOf(s->spec, mode), server, seconds(s->spec.timeout_seconds)};
}

}  // namespace odin

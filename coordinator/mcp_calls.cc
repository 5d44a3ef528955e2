// The coordinator's side of the session's MCP servers (coordinator/
// mcp_servers.h): the port their listings and waiting calls use, the tools
// they add, and what their listings' changes tell the model.

#include <nlohmann/json.hpp>

#include "base/ids.h"
#include "base/json_input.h"

#include "coordinator/coordinator.h"
#include "odin/v1/worker.pb.h"
#include "planner/tool_specs.h"
#include "tools/tool_catalog.h"

namespace odin {

using nlohmann::json;

McpServers::Port Coordinator::McpPort() {
  McpServers::Port port;
  port.list = [this](const std::string& id, const std::string& arguments_json, WorkerPolicy policy,
                     const std::string& lane, Duration timeout, std::function<void(const v1::ToolResult&)> done) {
    Call& c = calls_[id];
    c.call.execution_id = id;
    c.call.tool = kMcpListToolsTool;
    c.call.arguments_json = arguments_json;
    c.call.timeout = timeout;
    c.call.agent_id = o_.agent_id;
    c.call.mode = o_.mode;
    c.request.policy = policy;
    c.request.lane = lane;
    c.call.internal = true;
    c.handlers.on_done = [done = std::move(done)](const v1::ToolResult& r, const Status&) { done(r); };
    Dispatch(c);
  };
  port.resume = [this](const std::string& id) {
    auto c = calls_.find(id);
    if (c == calls_.end()) return;
    // Judged now, its arguments as Submit parsed them.
    c->second.mcp_waiting = false;
    Admit(c->second, Status::OK());
  };
  port.news = [this](const McpRegistry::Server& s) {
    if (on_mcp_server) on_mcp_server(s);
  };
  return port;
}

std::vector<ToolSpec> Coordinator::ExtraToolSpecs(Mode mode) const {
  std::vector<ToolSpec> specs = mcp_.registry().Specs(mode);
  if (init_active_ && mode == Mode::kEdit) specs.push_back(InitToolSpec());
  return specs;
}

void Coordinator::GetMcpPrompt(const std::string& server, const std::string& name, const std::string& arguments_json,
                               std::function<void(const v1::ToolResult&)> done) {
  std::string id = NewId("ex");
  Call& c = calls_[id];
  c.call.execution_id = id;
  c.call.tool = kMcpGetPromptTool;
  c.call.arguments_json = json({{"server", server}, {"name", name}, {"arguments", ParseJson(arguments_json)}})
                              .dump(-1, ' ', false, json::error_handler_t::replace);
  c.call.agent_id = "user";  // the user's slash command
  c.call.mode = o_.mode;
  c.call.internal = true;
  c.handlers.on_done = [done = std::move(done)](const v1::ToolResult& r, const Status&) { done(r); };
  StatusOr<McpServers::Route> route = mcp_.RouteOf(server, o_.mode);
  if (!route.ok()) return EndHere(id, v1::TOOL_STATUS_ERROR, route.status());
  c.call.timeout = route->timeout;
  c.request.policy = route->policy;
  c.request.lane = route->lane;
  Typed(c.request).set_arguments_json(c.call.arguments_json);  // for the worker, as an MCP tool's
  Dispatch(c);
}

void Coordinator::OnMcpListing(const std::string& lane, const std::string& output_json) {
  std::string change = mcp_.Relisted(lane, output_json);
  if (change.empty()) return;
  // The model hears of it once, in its conversation (never the system
  // prompt); the ledger keeps what changed.
  mcp_news_ += (mcp_news_.empty() ? "" : "\n") + ("MCP server " + lane + " changed (its words, untrusted): " + change);
  RecordGateEvent(o_.agent_id, "", "mcp_listing", "",
                  json({{"server", lane}, {"change", change}}).dump(-1, ' ', false, json::error_handler_t::replace));
}

std::string Coordinator::TakeMcpNews(const std::string& agent_id) {
  if (agent_id != o_.agent_id) return "";
  std::string news;
  news.swap(mcp_news_);
  return news;
}

}  // namespace odin

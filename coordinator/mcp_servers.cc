#include "coordinator/mcp_servers.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "base/ids.h"
#include "odin/v1/worker.pb.h"
#include "tools/tool_result.h"

namespace odin {

namespace {

// Whether a server is being started (its listing will come): what a call for
// every server waits for, and what ends that wait.
bool AnyStarting(const McpRegistry& registry) {
  return std::any_of(registry.servers().begin(), registry.servers().end(), [](const McpRegistry::Server& s) {
    return s.state == McpRegistry::State::kStarting && !s.start_execution.empty();
  });
}

}  // namespace

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
  std::vector<std::string> ids;
  if (auto it = waiting_.find(name); it != waiting_.end()) {
    ids = std::move(it->second);
    waiting_.erase(it);
  }
  // What waits for every server goes on once none is starting.
  if (auto it = waiting_.find(kEveryServer); !AnyStarting(registry_) && it != waiting_.end()) {
    ids.insert(ids.end(), it->second.begin(), it->second.end());
    waiting_.erase(it);
  }
  for (const std::string& id : ids) port_.resume(id);
}

std::string McpServers::ServerOf(const std::string& tool, const nlohmann::json* args) {
  std::string server, name;
  if (McpRegistry::SplitName(tool, &server, &name)) return server;
  bool resources = tool == kReadMcpResourceTool || tool == kListMcpResourcesTool;
  if (resources && args != nullptr && args->is_object() && args->contains("server") && (*args)["server"].is_string()) {
    return (*args)["server"];
  }
  return tool == kListMcpResourcesTool ? kEveryServer : "";
}

bool McpServers::Wait(const std::string& server, const std::string& execution_id) {
  if (server == kEveryServer) {
    if (!AnyStarting(registry_)) return false;
    waiting_[server].push_back(execution_id);
    return true;
  }
  McpRegistry::Server* s = registry_.FindServer(server);
  if (s == nullptr || s->state != McpRegistry::State::kStarting || s->start_execution.empty()) return false;
  waiting_[server].push_back(execution_id);
  return true;
}

void McpServers::Forget(const std::string& server, const std::string& execution_id) {
  auto it = waiting_.find(server);
  if (it == waiting_.end()) return;
  std::erase(it->second, execution_id);
}

namespace {

// "+a +b -c", five names of each at most.
std::string Difference(const std::set<std::string>& before, const std::set<std::string>& after) {
  std::string out;
  auto add = [&out](const std::set<std::string>& from, const std::set<std::string>& not_in, const char* sign) {
    size_t n = 0, more = 0;
    for (const std::string& x : from) {
      if (not_in.count(x)) continue;
      if (n++ < 5) {
        out += (out.empty() ? "" : " ") + std::string(sign) + x.substr(0, 200);
      } else {
        ++more;
      }
    }
    if (more > 0) out += " (" + std::string(sign) + std::to_string(more) + " more)";
  };
  add(after, before, "+");
  add(before, after, "-");
  return out;
}

}  // namespace

std::string McpServers::Relisted(const std::string& server, const std::string& output_json) {
  McpRegistry::Server* s = registry_.FindServer(server);
  // The first listing is the start's (McpListTools); a failed server stays so.
  if (s == nullptr || s->state != McpRegistry::State::kReady) return "";
  auto names = [s] {
    std::set<std::string> tools, resources;
    for (const McpToolInfo& t : s->tools) tools.insert(t.name);
    for (const McpResource& r : s->resources) resources.insert(r.uri);
    for (const McpResourceTemplate& t : s->resource_templates) resources.insert(t.uri_template);
    return std::make_pair(tools, resources);
  };
  auto before = names();
  Status listed = registry_.OnListed(server, output_json);
  if (!listed.ok()) spdlog::warn("{}", listed.message());
  auto after = names();
  std::string tools = Difference(before.first, after.first);
  std::string resources = Difference(before.second, after.second);
  std::string change = tools.empty() ? "" : "tools " + tools;
  if (!resources.empty()) change += (change.empty() ? "" : "; ") + std::string("resources ") + resources;
  if (!change.empty()) spdlog::info("MCP server {} changed: {}", server, change);
  return change;
}

StatusOr<McpServers::Route> McpServers::RouteOf(const std::string& server, CallMode mode) const {
  const McpRegistry::Server* s = nullptr;
  for (const McpRegistry::Server& each : registry_.servers()) {
    if (each.spec.name == server) s = &each;
  }
  if (s == nullptr) return Status::NotFound("no MCP server is named '" + server + "'");
  WorkerPolicy policy = PolicyOf(s->spec, mode);
  // A writable server runs one call at a time in every mode: its worker
  // stops it between calls.
  bool serial = WritesWorkspace(policy) || s->spec.writable;
  return Route{policy, server, seconds(s->spec.timeout_seconds), serial ? 1 : s->spec.concurrency};
}

}  // namespace odin

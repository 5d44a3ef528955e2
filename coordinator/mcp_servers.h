#pragma once
// The session's MCP servers, from the coordinator's side: each stdio server
// is started (and its tools listed) by an McpListTools execution in an MCP
// worker of its own, in the background at session start; a call of
// mcp__SERVER__TOOL (or ReadMcpResource of SERVER's) waits while its server
// is starting, then goes to that server's worker after gate 1
// (McpRegistry::CheckMode; CheckResources for a read) and every other gate
// any call meets. The executions and the calls themselves are the
// coordinator's, reached through the port.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/clock.h"
#include "base/status.h"
#include "mcp/mcp_registry.h"
#include "planner/tool_host.h"
#include "pool/worker_request.h"

namespace odin {
namespace v1 {
class ToolResult;
}  // namespace v1

// OAuth tokens of HTTP MCP servers (session/mcp_tokens.h implements it):
// what a server's worker is given, and a new one when the server refused
// it. Called on the coordinator's thread; Refresh's done runs from Poll.
class McpAuthorizer {
 public:
  virtual ~McpAuthorizer() = default;
  // The Authorization header's value for server's requests, "" for none.
  virtual std::string Header(const std::string& server) = 0;
  // After server answered 401: done gets a new value, or "" when there is
  // none (no token stored, or its refresh failed).
  virtual void Refresh(const std::string& server, std::function<void(std::string header)> done) = 0;
  // Runs the done of the refreshes that ended; true while one is under way.
  virtual bool Poll() = 0;
};

class McpServers {
 public:
  struct Port {
    // Runs McpListTools (arguments_json names the server) as execution_id
    // in a worker of policy, on the server's lane; done hears its result
    // (at once when it is refused).
    std::function<void(const std::string& execution_id, const std::string& arguments_json, WorkerPolicy policy,
                       const std::string& lane, Duration timeout, std::function<void(const v1::ToolResult&)> done)>
        list;
    // A call that waited for its server: judged now.
    std::function<void(const std::string& execution_id)> resume;
    // A server started, failed, or was never to be started.
    std::function<void(const McpRegistry::Server&)> news;
  };

  McpServers(std::vector<McpServerSpec> specs, CallMode session_mode, Port port);

  // Starts every server (each McpListTools in the background).
  void Start();
  // The server a call goes to (or waits for): mcp__SERVER__TOOL's, the one
  // a ReadMcpResource or ListMcpResources names, kEveryServer for a
  // ListMcpResources that names none; "" for any other call.
  static constexpr char kEveryServer[] = "*";
  static std::string ServerOf(const std::string& tool, const nlohmann::json* args);
  // Holds a call for a starting server (true) until the server has listed
  // its tools (Port::resume); for kEveryServer, until none is starting.
  bool Wait(const std::string& server, const std::string& execution_id);
  // A call that waited, cancelled: it will not be resumed.
  void Forget(const std::string& server, const std::string& execution_id);

  // Where a call to server runs in mode: its worker's policy, its lane
  // (the server), its default timeout, how many of its calls run at once
  // (one for a worker that may write the workspace).
  struct Route {
    WorkerPolicy policy;
    std::string lane;
    Duration timeout;
    int concurrency = 1;
  };
  StatusOr<Route> RouteOf(const std::string& server, CallMode mode) const;
  static WorkerPolicy PolicyOf(const McpServerSpec& spec, CallMode mode);

  // A ready server listed anew (its list changed): the registry takes the
  // listing; returns what changed, for the model ("tools +a -b; resources
  // +demo://x"), "" if nothing did.
  std::string Relisted(const std::string& server, const std::string& output_json);

  const McpRegistry& registry() const { return registry_; }

 private:
  void Listed(const std::string& server, const v1::ToolResult& r);

  McpRegistry registry_;
  CallMode session_mode_;
  Port port_;
  std::map<std::string, std::vector<std::string>> waiting_;  // server -> calls waiting for its tools
};

}  // namespace odin

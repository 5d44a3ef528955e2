#pragma once
// McpRegistry: a session's MCP servers and the tools their workers listed,
// offered to the model as mcp__SERVER__TOOL with the servers' own JSON
// schemas. It answers gate 1 for them: in ask and plan modes only tools
// annotated readOnlyHint from servers that are not "writable"; in edit mode
// all of them. A server's state: starting (its worker is starting it and
// listing its tools), ready, or failed (why).
//
// A server's resources (and templates of them) are offered through two
// tools of Odin's, in every mode (a read is a read): ListMcpResources,
// answered from the listing here, and ReadMcpResource, which the server's
// worker runs. They are offered only while some ready server has any.
//
// Thread-safety: none; the coordinator's loop owns it.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "mcp/mcp_client.h"  // McpResource
#include "mcp/mcp_config.h"
#include "llm/llm.h"
#include "tools/tool_catalog.h"

namespace odin {

struct McpToolInfo {
  std::string server;
  std::string name;       // the server's name for it
  std::string full_name;  // mcp__SERVER__TOOL
  std::string description;
  std::string input_schema_json;
  bool read_only = false;
  bool destructive = true;
};

class McpRegistry {
 public:
  enum class State { kStarting, kReady, kFailed };
  struct Server {
    McpServerSpec spec;
    State state = State::kStarting;
    std::string error;  // kFailed: why
    std::string protocol_version;
    std::string start_execution;  // the McpListTools execution
    std::vector<McpToolInfo> tools;
    bool offers_resources = false;
    std::vector<McpResource> resources;
    std::vector<McpResourceTemplate> resource_templates;
    std::vector<McpPrompt> prompts;  // slash commands /mcp__SERVER__PROMPT (session/mcp_prompts.h)
  };

  McpRegistry() = default;
  explicit McpRegistry(const std::vector<McpServerSpec>& specs);

  // Splits mcp__SERVER__TOOL; false if name is not one.
  static bool SplitName(const std::string& name, std::string* server, std::string* tool);
  // "starting", "ready", "failed".
  static const char* StateName(State s);

  bool empty() const { return servers_.empty(); }
  const std::vector<Server>& servers() const { return servers_; }
  Server* FindServer(const std::string& name);
  const McpToolInfo* FindTool(const std::string& full_name) const;

  // Gate 1 for an MCP tool: NotFound (no such server or tool, with the
  // server's state), or PermissionDenied (not allowed in mode).
  Status CheckMode(const std::string& full_name, Mode mode) const;
  // The tools offered in mode, for the model (ListMcpResources and
  // ReadMcpResource among them while some server has resources).
  // hidden: servers whose resources are not shown (the rules deny them).
  using Hidden = std::function<bool(const std::string& server)>;
  std::vector<ToolSpec> Specs(Mode mode, const Hidden& hidden = nullptr) const;
  // Whether ReadMcpResource may go to server in mode: NotFound with why not
  // (no such server, failed, starting, offers no resources);
  // PermissionDenied in ask and plan modes for a writable server, whose
  // process may write while it runs (as its tools that are not read-only).
  Status CheckResources(const std::string& server, Mode mode) const;
  // ListMcpResources' answer: the resources and templates of server, or of
  // every server ("") not hidden.
  StatusOr<std::string> DescribeResources(const std::string& server, const Hidden& hidden = nullptr) const;

  // A server's worker listed its tools (McpListTools' output_json).
  Status OnListed(const std::string& server, const std::string& output_json);
  void OnFailed(const std::string& server, const std::string& why);

 private:
  bool Allowed(const Server& s, const McpToolInfo& t, Mode mode) const;
  std::vector<Server> servers_;
};

// The servers, one line each: name, transport, state, tools (or why it
// failed), where it is configured; "no MCP servers" without any.
std::string DescribeMcpServers(const McpRegistry& registry);

}  // namespace odin

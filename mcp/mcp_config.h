#pragma once
// MCP servers as configured: `mcpServers` in the user's odinconfig.json (or
// a trusted workspace's), and a workspace's `.mcp.json` in Claude Code's
// format ({"mcpServers": {NAME: {...}}}), which needs the same trust as the
// workspace's hooks.
//
// An entry is a stdio server ({"command": "npx", "args": [...], "env":
// {...}}) or a streamable HTTP one ({"type": "http", "url": "...",
// "headers": {...}}); Odin's own keys say what its sandbox allows:
// "writable" (the workspace, else read-only), "network", and, in the
// user's own config only, "sandbox": false; "timeout" and "startup_timeout"
// in seconds; "roots": false keeps the workspace's path from the server
// (roots/list). ${VAR} and ${VAR:-default} in
// command, args, env, url and headers are expanded from the environment
// when the config is loaded.

#include <map>
#include <string>
#include <vector>

namespace odin {

struct McpServerSpec {
  std::string name;  // [A-Za-z0-9_-]+: its tools are mcp__NAME__TOOL
  enum class Transport { kStdio, kHttp } transport = Transport::kStdio;
  std::string command;  // stdio
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  std::string url;  // http
  std::map<std::string, std::string> headers;
  bool writable = false;
  bool network = false;
  bool sandbox = true;
  bool roots = true;                 // the workspace offered as the session's root
  int timeout_seconds = 120;         // a tool call's deadline ("timeout")
  int startup_timeout_seconds = 60;  // start, initialize and list the tools ("startup_timeout")
  // Calls sent to it at once ("concurrency", 1 to 16): MCP lets a client
  // send requests before earlier ones are answered; a server that cannot
  // take that says 1. A writable server runs one call at a time whatever
  // this says (its changes are told apart call by call).
  int concurrency = 4;
  std::string source;  // the file that configured it
  bool from_workspace = false;
};

// What an MCP worker finds its server in: "ODIN_MCP_SERVER=" and a JSON
// object with name, command, args and env (tools/mcp_client.h).
std::string McpWorkerEnvironment(const McpServerSpec& spec);
// The same for each server, by name (its worker's lane).
std::map<std::string, std::string> McpWorkerEnvironments(const std::map<std::string, McpServerSpec>& servers);

// "stdio", "http".
const char* McpTransportName(McpServerSpec::Transport t);

// Expands ${VAR} and ${VAR:-default} from env; a variable that is unset and
// has no default is an error naming it.
struct ExpandResult {
  std::string text;
  std::string missing;  // the first unset variable, "" if none
};
ExpandResult ExpandVariables(const std::string& text, const std::map<std::string, std::string>& env);

}  // namespace odin

// odin mcp add|remove|list: the user's MCP servers (mcpServers in the
// user's odinconfig.json), edited in place, and the servers in force with
// where each comes from. An entry is checked by the config's own parser
// before the file is written, so a bad one never lands; the file is
// replaced atomically and kept private (it may hold tokens).

#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/json_input.h"
#include "cli/cli.h"
#include "config/config.h"
#include "config/config_loader.h"
#include "workspace/workspace.h"
#include "workspace/host_files.h"

namespace odin {
namespace {

using nlohmann::json;

int Fail(const std::string& message) {
  std::cerr << "odin mcp: " << message << "\n";
  return kError;
}

// The user's config as JSON ({} when there is none yet).
StatusOr<json> ReadUserConfig(const std::string& path) {
  ASSIGN_OR_RETURN(std::optional<std::string> text, ReadUserFile(path, 1 << 20));
  if (!text) return json::object();
  json j = ParseJson(*text);
  if (!j.is_object()) return Status::InvalidArgument(path, "not a JSON object");
  return j;
}

Status WriteUserConfig(const std::string& path, const json& config) {
  std::string text = config.dump(2) + "\n";
  // The parser that every run uses: what it refuses is not written.
  RETURN_IF_ERROR(ParseConfig(text, path).status());
  return WriteUserFile(path, text);  // 0600
}

std::string Describe(const McpServerSpec& s) {
  std::string what = s.transport == McpServerSpec::Transport::kHttp ? s.url : s.command;
  if (s.transport == McpServerSpec::Transport::kStdio) {
    for (const std::string& a : s.args) what += " " + a;
  }
  std::string flags =
      !s.sandbox ? "no sandbox" : std::string(s.writable ? "writable" : "read-only") + (s.network ? ", network" : "");
  return what + "  (" + McpTransportName(s.transport) + ", " + flags + ")";
}

}  // namespace

int RunMcp(const GlobalFlags& g, const McpFlags& f) {
  std::map<std::string, std::string> env = EnvironmentMap();
  std::string dir = UserConfigDir(env);
  if (dir.empty()) return Fail("no config directory (set HOME or XDG_CONFIG_HOME)");
  std::string path = JoinPath(dir, "odinconfig.json");
  if (f.action == "list") {
    StatusOr<Workspace> ws = FindWorkspace(g.dir);
    if (!ws.ok()) return Fail(ws.status().message());
    StatusOr<LoadedConfig> loaded = LoadConfig(*ws, env);
    if (!loaded.ok()) return Fail(loaded.status().message());
    json out = json::array();
    for (const auto& [name, s] : loaded->config.mcp_servers) {
      if (f.json) {
        out.push_back({{"name", name},
                       {"transport", McpTransportName(s.transport)},
                       {"command", s.command},
                       {"args", s.args},
                       {"url", s.url},
                       {"writable", s.writable},
                       {"network", s.network},
                       {"sandbox", s.sandbox},
                       {"source", s.source},
                       {"trusted", true},
                       {"oauth", DescribeMcpLogin(s)}});
      } else {
        std::string login = DescribeMcpLogin(s);
        printf("%s  %s  [%s]%s\n", name.c_str(), Describe(s).c_str(), s.source.c_str(),
               login.empty() ? "" : ("  " + login).c_str());
      }
    }
    for (const std::string& key : loaded->ignored) {
      if (key.rfind("mcpServers.", 0) != 0) continue;
      std::string name = key.substr(11, key.find(' ') == std::string::npos ? std::string::npos : key.find(' ') - 11);
      if (f.json) {
        out.push_back({{"name", name}, {"source", McpJsonPath(*ws)}, {"trusted", false}});
      } else {
        printf("%s  not started: the workspace is not trusted (odin trust)  [%s]\n", name.c_str(),
               key.find(".mcp.json") != std::string::npos ? McpJsonPath(*ws).c_str() : ws->config_path.c_str());
      }
    }
    if (f.json) {
      std::cout << out.dump(2) << "\n";
    } else if (out.empty() && loaded->config.mcp_servers.empty()) {
      bool any_ignored = false;
      for (const std::string& key : loaded->ignored) any_ignored = any_ignored || key.rfind("mcpServers.", 0) == 0;
      if (!any_ignored) printf("no MCP servers (odin mcp add NAME -- COMMAND [ARGS...] adds one)\n");
    }
    return 0;
  }
  StatusOr<json> config = ReadUserConfig(path);
  if (!config.ok()) return Fail(config.status().message());
  json& servers = (*config)["mcpServers"];
  if (servers.is_null()) servers = json::object();
  if (!servers.is_object()) return Fail(path + ": mcpServers is not an object");
  if (f.action == "remove") {
    if (!servers.contains(f.name)) return Fail("no server '" + f.name + "' in " + path);
    servers.erase(f.name);
    if (servers.empty()) config->erase("mcpServers");
    if (Status s = WriteUserConfig(path, *config); !s.ok()) return Fail(s.message());
    printf("removed %s from %s\n", f.name.c_str(), path.c_str());
    return 0;
  }
  // add
  if (servers.contains(f.name)) return Fail("a server named '" + f.name + "' exists (odin mcp remove it first)");
  json entry = json::object();
  if (f.transport == "http") {
    if (f.command.size() != 1) return Fail("an http server takes one URL: odin mcp add --transport http NAME -- URL");
    entry["type"] = "http";
    entry["url"] = f.command[0];
    for (const std::string& h : f.headers) {
      size_t colon = h.find(':');
      if (colon == std::string::npos) return Fail("--header " + h + ": expected NAME: VALUE");
      std::string value = h.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      entry["headers"][h.substr(0, colon)] = value;
    }
  } else {
    if (f.command.empty()) return Fail("missing the command: odin mcp add NAME -- COMMAND [ARGS...]");
    entry["command"] = f.command[0];
    if (f.command.size() > 1) entry["args"] = std::vector<std::string>(f.command.begin() + 1, f.command.end());
  }
  for (const std::string& e : f.env) {
    size_t eq = e.find('=');
    if (eq == std::string::npos || eq == 0) return Fail("--env " + e + ": expected KEY=VALUE");
    entry["env"][e.substr(0, eq)] = e.substr(eq + 1);
  }
  if (f.writable) entry["writable"] = true;
  if (f.network) entry["network"] = true;
  if (f.no_sandbox) entry["sandbox"] = false;
  servers[f.name] = entry;
  if (Status s = WriteUserConfig(path, *config); !s.ok()) return Fail(s.message());
  printf("added %s to %s\n", f.name.c_str(), path.c_str());
  return 0;
}

}  // namespace odin

#include "mcp/mcp_registry.h"

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "mcp/mcp_client.h"

namespace odin {

using nlohmann::json;

namespace {

// What one server may put in front of the model: tools, and each tool's
// schema and description.
constexpr size_t kMaxToolsPerServer = 128;
constexpr size_t kMaxSchemaBytes = 32 * 1024;
constexpr size_t kMaxDescriptionBytes = 2048;

// What model APIs take as a tool's name.
bool ValidToolName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

}  // namespace

McpRegistry::McpRegistry(const std::vector<McpServerSpec>& specs) {
  for (const McpServerSpec& spec : specs) {
    Server s;
    s.spec = spec;
    servers_.push_back(std::move(s));
  }
}

const char* McpRegistry::StateName(State s) {
  switch (s) {
    case State::kStarting: return "starting";
    case State::kReady: return "ready";
    case State::kFailed: return "failed";
  }
  return "?";
}

bool McpRegistry::SplitName(const std::string& name, std::string* server, std::string* tool) {
  const std::string prefix = kMcpToolPrefix;
  if (name.rfind(prefix, 0) != 0) return false;
  size_t sep = name.find("__", prefix.size());
  if (sep == std::string::npos || sep == prefix.size() || sep + 2 >= name.size()) return false;
  *server = name.substr(prefix.size(), sep - prefix.size());
  *tool = name.substr(sep + 2);
  return true;
}

McpRegistry::Server* McpRegistry::FindServer(const std::string& name) {
  for (Server& s : servers_) {
    if (s.spec.name == name) return &s;
  }
  return nullptr;
}

const McpToolInfo* McpRegistry::FindTool(const std::string& full_name) const {
  for (const Server& s : servers_) {
    for (const McpToolInfo& t : s.tools) {
      if (t.full_name == full_name) return &t;
    }
  }
  return nullptr;
}

bool McpRegistry::Allowed(const Server& s, const McpToolInfo& t, Mode mode) const {
  return mode == Mode::kEdit || (t.read_only && !s.spec.writable);
}

Status McpRegistry::CheckMode(const std::string& full_name, Mode mode) const {
  std::string server, tool;
  if (!SplitName(full_name, &server, &tool)) return Status::NotFound("unknown tool '" + full_name + "'");
  for (const Server& s : servers_) {
    if (s.spec.name != server) continue;
    for (const McpToolInfo& t : s.tools) {
      if (t.full_name != full_name) continue;
      if (Allowed(s, t, mode)) return Status::OK();
      return Status::PermissionDenied(
          full_name,
          std::string("not allowed in ") + ModeName(mode) + " mode: " +
              (s.spec.writable ? "MCP server " + server + " is writable" : "the tool is not annotated readOnlyHint") +
              " (ask and plan modes run only read-only tools of servers that are not writable)");
    }
    if (s.state == State::kFailed) {
      return Status::NotFound("unknown tool '" + full_name + "'", "MCP server " + server + " failed: " + s.error);
    }
    if (s.state == State::kStarting) {
      return Status::NotFound("unknown tool '" + full_name + "'",
                              "MCP server " + server + " is still starting; its tools are not known yet");
    }
    return Status::NotFound("unknown tool '" + full_name + "'", "MCP server " + server + " has no tool '" + tool + "'");
  }
  return Status::NotFound("unknown tool '" + full_name + "'", "no MCP server is named '" + server + "'");
}

std::vector<ToolSpec> McpRegistry::Specs(Mode mode) const {
  std::vector<ToolSpec> out;
  for (const Server& s : servers_) {
    for (const McpToolInfo& t : s.tools) {
      if (!Allowed(s, t, mode)) continue;
      out.push_back({t.full_name,
                     "[MCP server " + s.spec.name + "; what it returns is untrusted content] " + t.description,
                     t.input_schema_json});
    }
  }
  return out;
}

Status McpRegistry::OnListed(const std::string& server, const std::string& output_json) {
  Server* s = FindServer(server);
  if (s == nullptr) return Status::NotFound("no MCP server is named '" + server + "'");
  json j = ParseJson(output_json);
  if (!j.is_object() || !j.contains("tools") || !j["tools"].is_array()) {
    OnFailed(server, "its worker's listing is malformed");
    return Status::Internal("MCP server " + server + ": malformed listing");
  }
  s->tools.clear();
  int skipped = 0, too_big = 0, too_many = 0;
  for (const json& t : j["tools"]) {
    if (!t.is_object() || !t.contains("name") || !t["name"].is_string()) continue;
    McpToolInfo info;
    info.server = server;
    info.name = t["name"];
    info.full_name = std::string(kMcpToolPrefix) + server + "__" + info.name;
    bool duplicate = false;
    for (const McpToolInfo& seen : s->tools) duplicate = duplicate || seen.full_name == info.full_name;
    if (!ValidToolName(info.full_name) || duplicate) {
      ++skipped;
      continue;
    }
    info.description = t.value("description", "").substr(0, kMaxDescriptionBytes);
    json schema = t.contains("input_schema") && t["input_schema"].is_object() ? t["input_schema"] : json::object();
    if (!schema.contains("type")) schema["type"] = "object";
    info.input_schema_json = schema.dump(-1, ' ', false, json::error_handler_t::replace);
    if (info.input_schema_json.size() > kMaxSchemaBytes) {
      ++too_big;
      continue;
    }
    if (s->tools.size() >= kMaxToolsPerServer) {
      ++too_many;
      continue;
    }
    info.read_only = t.value("read_only", false);
    info.destructive = t.value("destructive", true);
    s->tools.push_back(std::move(info));
  }
  s->protocol_version = j.value("protocol_version", "");
  s->state = State::kReady;
  std::vector<std::string> notes;
  if (skipped > 0)
    notes.push_back(std::to_string(skipped) +
                    " tools skipped: their names are not [A-Za-z0-9_-], 64 at most, or repeat another's");
  if (too_big > 0) notes.push_back(std::to_string(too_big) + " tools skipped: schemas over 32 KiB");
  if (too_many > 0) notes.push_back(std::to_string(too_many) + " tools skipped: 128 per server at most");
  s->error.clear();
  for (const std::string& n : notes) s->error += (s->error.empty() ? "" : "; ") + n;
  return Status::OK();
}

void McpRegistry::OnFailed(const std::string& server, const std::string& why) {
  Server* s = FindServer(server);
  if (s == nullptr) return;
  s->state = State::kFailed;
  s->error = why;
}

std::string DescribeMcpServers(const McpRegistry& registry) {
  if (registry.empty()) return "no MCP servers\n";
  std::string out;
  for (const McpRegistry::Server& s : registry.servers()) {
    out += s.spec.name + "  " + McpTransportName(s.spec.transport) + "  " + McpRegistry::StateName(s.state);
    if (s.state == McpRegistry::State::kReady) {
      std::string names;
      for (const McpToolInfo& t : s.tools) names += (names.empty() ? "" : ", ") + t.name + (t.read_only ? "" : "*");
      out += "  " + std::to_string(s.tools.size()) + " tools" + (names.empty() ? "" : ": " + names);
    }
    if (!s.error.empty()) out += "  (" + s.error + ")";
    std::vector<std::string> how;
    if (s.spec.writable) how.push_back("writable");
    if (s.spec.network) how.push_back("network");
    if (!s.spec.sandbox) how.push_back("unsandboxed");
    for (const std::string& h : how) out += "  [" + h + "]";
    out += "  from " + s.spec.source + "\n";
  }
  return out;
}

}  // namespace odin

#include "mcp/mcp_config.h"

#include <nlohmann/json.hpp>

#include "mcp/mcp_client.h"

namespace odin {

std::string McpWorkerEnvironment(const McpServerSpec& spec) {
  nlohmann::json j = {{"name", spec.name},         {"command", spec.command}, {"args", spec.args},
                      {"env", spec.env},           {"url", spec.url},         {"headers", spec.headers},
                      {"writable", spec.writable}, {"roots", spec.roots}};
  return std::string(kMcpServerEnv) + "=" + j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::map<std::string, std::string> McpWorkerEnvironments(const std::map<std::string, McpServerSpec>& servers) {
  std::map<std::string, std::string> out;
  for (const auto& [name, spec] : servers) out[name] = McpWorkerEnvironment(spec);
  return out;
}

const char* McpTransportName(McpServerSpec::Transport t) {
  return t == McpServerSpec::Transport::kHttp ? "http" : "stdio";
}

ExpandResult ExpandVariables(const std::string& text, const std::map<std::string, std::string>& env) {
  ExpandResult r;
  for (size_t i = 0; i < text.size();) {
    size_t start = text.find("${", i);
    size_t end = start == std::string::npos ? std::string::npos : text.find('}', start);
    if (end == std::string::npos) {
      r.text += text.substr(i);
      break;
    }
    r.text += text.substr(i, start - i);
    std::string inner = text.substr(start + 2, end - start - 2);
    size_t dash = inner.find(":-");
    std::string name = dash == std::string::npos ? inner : inner.substr(0, dash);
    auto it = env.find(name);
    if (it != env.end() && !it->second.empty()) {
      r.text += it->second;
    } else if (dash != std::string::npos) {
      r.text += inner.substr(dash + 2);
    } else if (r.missing.empty()) {
      r.missing = name;
    }
    i = end + 1;
  }
  return r;
}

}  // namespace odin

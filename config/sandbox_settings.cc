#include "config/sandbox_settings.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "base/file_util.h"

namespace odin {

StatusOr<SandboxPolicy> EffectiveSandboxPolicy(const Config& config, const std::string& flag) {
  if (flag.empty()) return config.sandbox_policy;
  return ParseSandboxPolicy(flag);
}

WorkerSandboxOptions WorkerSandboxSettings(const Config& config, const Workspace& ws) {
  WorkerSandboxOptions o;
  o.bwrap_path = config.bwrap_path;
  o.limits = config.sandbox_limits;
  o.hide = config.sandbox_hide;
  o.hide_home = config.sandbox_hide_home;
  o.root_hidden = config.sandbox_root_hidden;
  o.hooks = !config.hooks.empty();
  const char* home = getenv("HOME");
  o.hook_scripts = HookScriptPaths(config.hooks, ws.root, home != nullptr ? home : "");
  o.hooks_network = config.hooks.network;
  // An HTTP server is reached over the network, so its worker keeps it.
  for (const auto& [name, m] : config.mcp_servers) {
    if (m.network || m.transport == McpServerSpec::Transport::kHttp) o.mcp_network.push_back(name);
  }
  return o;
}

std::vector<std::string> HookScriptPaths(const HooksConfig& hooks, const std::string& workspace,
                                         const std::string& home) {
  std::vector<std::string> out;
  for (const auto& [event, groups] : hooks.events) {
    for (const HookGroup& g : groups) {
      for (const HookCommand& h : g.hooks) {
        // Only the user's own hooks: a workspace's live in the workspace,
        // and naming ~/.ssh/id_rsa in its command must not show it.
        if (h.from_workspace) continue;
        // Words of the command, quotes dropped, the project and home
        // variables expanded: those naming a file outside the workspace are
        // the hook's scripts (the workspace is visible anyway).
        std::string word;
        auto flush = [&] {
          for (const char* var :
               {"${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR", "${ODIN_PROJECT_DIR}", "$ODIN_PROJECT_DIR"}) {
            if (word.rfind(var, 0) == 0) word = workspace + word.substr(strlen(var));
          }
          for (const char* var : {"${HOME}", "$HOME", "~"}) {
            if (!home.empty() && word.rfind(var, 0) == 0 && (word.size() == strlen(var) || word[strlen(var)] == '/')) {
              word = home + word.substr(strlen(var));
            }
          }
          struct stat st;
          if (!word.empty() && word[0] == '/' && !PathIsBelow(word, workspace) && stat(word.c_str(), &st) == 0 &&
              S_ISREG(st.st_mode)) {
            if (std::find(out.begin(), out.end(), word) == out.end()) out.push_back(word);
          }
          word.clear();
        };
        for (char ch : h.command) {
          if (ch == '"' || ch == '\'') continue;
          if (ch == ' ' || ch == '\t' || ch == ';' || ch == '&' || ch == '|' || ch == '\n' || ch == '(' || ch == ')' ||
              ch == '<' || ch == '>') {
            flush();
          } else {
            word += ch;
          }
        }
        flush();
      }
    }
  }
  return out;
}

}  // namespace odin

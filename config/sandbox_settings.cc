#include "config/sandbox_settings.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "base/file_util.h"
#include "gates/tool_rules.h"
#include "workspace/workspace_files.h"

namespace odin {
namespace {

// Entries looked at, at most, to find what the Read deny rules name.
constexpr size_t kMaxMaskWalk = 200000;

bool HasGlob(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

// Adds to *out the paths below rel (relative to the workspace; "" the root)
// that a rule covers, not descending below one it covers (the mask covers
// what is below). .git and .odin are not walked: git's files and Odin's
// state are the sandbox's own business.
void FindCovered(const WorkspaceFiles& files, const std::string& rel, const std::vector<std::string>& specs,
                 const std::string& home, size_t* budget, std::vector<std::string>* out) {
  StatusOr<std::vector<std::string>> names = files.List(rel);
  if (!names.ok()) return;
  for (const std::string& name : *names) {
    if (*budget == 0) return;
    --*budget;
    std::string child = rel.empty() ? name : rel + "/" + name;
    std::string abs = files.Absolute(child);
    bool covered = std::any_of(specs.begin(), specs.end(),
                               [&](const std::string& spec) { return PathRuleMatches(spec, abs, files.root(), home); });
    if (covered) {
      out->push_back(abs);
    } else if (name != ".git" && name != ".odin" && files.Look(child).is_dir()) {
      FindCovered(files, child, specs, home, budget, out);
    }
  }
}

}  // namespace

std::vector<std::string> ReadDenyMasks(const CommandRules& rules, const std::string& workspace,
                                       const std::string& home) {
  std::vector<std::string> literal, globbed;
  for (const std::string& rule : rules.deny) {
    std::optional<ToolRule> r = ParseToolRule(rule);
    if (!r || r->tool != "Read" || !r->specifier || r->specifier->empty()) continue;
    (HasGlob(*r->specifier) || r->specifier->find('/') == std::string::npos ? globbed : literal)
        .push_back(*r->specifier);
  }
  std::vector<std::string> out;
  if (literal.empty() && globbed.empty()) return out;
  StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(workspace);
  if (!files.ok()) return out;
  // A rule without a pattern names one path: look at it, no walk.
  for (const std::string& spec : literal) {
    StatusOr<std::string> rel = files->Relative(PathRulePattern(spec, workspace, home));
    if (rel.ok() && !rel->empty() && files->Look(*rel).exists()) out.push_back(files->Absolute(*rel));
  }
  if (!globbed.empty()) {
    size_t budget = kMaxMaskWalk;
    FindCovered(*files, "", globbed, home, &budget, &out);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

StatusOr<SandboxPolicy> EffectiveSandboxPolicy(const Config& config, const std::string& flag) {
  if (flag.empty()) return config.sandbox_policy;
  return ParseSandboxPolicy(flag);
}

WorkerSandboxOptions WorkerSandboxSettings(const Config& config, const Workspace& ws) {
  WorkerSandboxOptions o;
  o.bwrap_path = config.bwrap_path;
  o.limits = config.sandbox_limits;
  o.hide = config.sandbox_hide;
  const char* home_env = getenv("HOME");
  for (std::string& p : ReadDenyMasks(config.permissions, ws.root, home_env != nullptr ? home_env : "")) {
    o.hide.push_back(std::move(p));
  }
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

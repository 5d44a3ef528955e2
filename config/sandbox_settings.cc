#include "config/sandbox_settings.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "base/file_util.h"
#include "gates/tool_rules.h"
#include "tools/workspace_path.h"
#include "workspace/workspace_files.h"

namespace odin {
namespace {

// Entries looked at, at most, to find what the Read deny rules name.
constexpr size_t kMaxMaskWalk = 200000;

bool HasGlob(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

// Adds to *out the paths below rel (relative to the workspace; "" the root)
// that a pattern covers, not descending below one it covers (the mask
// covers what is below) nor into a directory where no pattern can match.
// states: each pattern's state at rel. .git and .odin are not walked:
// git's files and Odin's state are the sandbox's own business. False when
// the budget ran out first.
bool FindCovered(const WorkspaceFiles& files, const std::string& rel, const std::vector<PathPatternState>& states,
                 size_t* budget, std::vector<std::string>* out) {
  StatusOr<std::vector<WorkspaceFiles::Entry>> entries = files.ListEntries(rel);
  if (!entries.ok()) return true;
  std::vector<PathPatternState> next;
  for (const WorkspaceFiles::Entry& e : *entries) {
    if (*budget == 0) return false;
    --*budget;
    std::string child = rel.empty() ? e.name : rel + "/" + e.name;
    next.clear();
    bool covered = false, below = false;
    for (const PathPatternState& s : states) {
      next.push_back(s.Enter(e.name));
      covered = covered || next.back().Covers();
      below = below || next.back().MayCoverBelow();
    }
    if (covered) {
      out->push_back(files.Absolute(child));
    } else if (below && e.is_dir && e.name != ".git" && e.name != ".odin") {
      std::vector<PathPatternState> inside = next;
      if (!FindCovered(files, child, inside, budget, out)) return false;
    }
  }
  return true;
}

}  // namespace

ReadDenyMaskSet ReadDenyMasks(const CommandRules& rules, const std::string& workspace, const std::string& home) {
  ReadDenyMaskSet set;
  std::vector<std::string> patterns = UnreadablePatterns(rules, workspace, home);
  if (patterns.empty()) return set;
  StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(workspace);
  if (!files.ok()) return set;
  std::vector<std::string> globbed;
  for (const std::string& pattern : patterns) {
    // A pattern without a wildcard names one path: look at it, no walk.
    if (HasGlob(pattern)) {
      globbed.push_back(pattern);
      continue;
    }
    StatusOr<std::string> rel = files->Relative(pattern);
    if (rel.ok() && !rel->empty() && files->Look(*rel).exists()) set.paths.push_back(files->Absolute(*rel));
  }
  size_t budget = kMaxMaskWalk;
  // Each pattern's state at the workspace root, entered from "/".
  std::vector<PathPatternState> at_root;
  for (const std::string& pattern : globbed) {
    PathPatternState s(pattern);
    for (size_t start = 1; start < workspace.size();) {
      size_t end = workspace.find('/', start);
      if (end == std::string::npos) end = workspace.size();
      if (end > start) s = s.Enter(std::string_view(workspace).substr(start, end - start));
      start = end + 1;
    }
    at_root.push_back(std::move(s));
  }
  if (!globbed.empty() && !FindCovered(*files, "", at_root, &budget, &set.paths)) {
    set.incomplete = "the Read deny rules' masks stop after " + std::to_string(kMaxMaskWalk) +
                     " entries of the workspace: commands may read what those rules name beyond them (the file "
                     "and search tools still refuse it)";
  }
  std::sort(set.paths.begin(), set.paths.end());
  set.paths.erase(std::unique(set.paths.begin(), set.paths.end()), set.paths.end());
  return set;
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
  ReadDenyMaskSet masks = ReadDenyMasks(config.permissions, ws.root, home_env != nullptr ? home_env : "");
  o.hide.insert(o.hide.end(), masks.paths.begin(), masks.paths.end());
  o.mask_notice = std::move(masks.incomplete);
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

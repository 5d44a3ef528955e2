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

// What masks rel (relative to the workspace), added to *out: rel itself, or
// where a link there leads if that is in the workspace. A link is never
// masked itself: bubblewrap cannot bind onto one that dangles, and a mask
// on a link would not hide what it points at. A link out of the workspace
// leads where the sandbox hides or shows only read-only system files.
void Mask(const WorkspaceFiles& files, const std::string& rel, bool is_link, std::vector<std::string>* out) {
  std::string at = files.Absolute(rel), at_rel = rel;
  for (int hop = 0; is_link && hop < 8; ++hop) {
    StatusOr<std::string> target = files.ReadLink(at_rel);
    if (!target.ok()) return;
    at = LexicalPath(*target, DirName(at));
    StatusOr<std::string> inside = files.Relative(at);
    if (!inside.ok() || inside->empty()) return;
    at_rel = *inside;
    FileEntry e = files.Look(at_rel);
    if (!e.exists()) return;
    is_link = e.is_link();
  }
  if (!is_link) out->push_back(at);
}

// Adds to *out what masks the paths below rel (relative to the workspace;
// "" the root) that a pattern covers, not descending below one it covers
// (the mask covers what is below) nor into a directory where no pattern can
// match. states: each pattern's state at rel. .git and .odin are not
// walked: git's files and Odin's state are the sandbox's own business.
// Returns why the walk is incomplete ("" if it is not).
std::string FindCovered(const WorkspaceFiles& files, const std::string& rel,
                        const std::vector<PathPatternState>& states, size_t* budget, std::vector<std::string>* out) {
  StatusOr<std::vector<WorkspaceFiles::Entry>> entries = files.ListEntries(rel);
  if (!entries.ok()) return entries.status().message();
  std::vector<PathPatternState> next;
  for (const WorkspaceFiles::Entry& e : *entries) {
    if (*budget == 0) return "they stop after " + std::to_string(kMaxMaskWalk) + " entries of the workspace";
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
      Mask(files, child, e.is_link, out);
    } else if (below && e.is_dir && e.name != ".git" && e.name != ".odin") {
      std::vector<PathPatternState> inside = next;
      if (std::string why = FindCovered(files, child, inside, budget, out); !why.empty()) return why;
    }
  }
  return "";
}

}  // namespace

StatusOr<SandboxPolicy> EffectiveSandboxPolicy(const Config& config, const std::string& flag) {
  if (flag.empty()) return config.sandbox_policy;
  return ParseSandboxPolicy(flag);
}

ReadDenyMaskSet ReadDenyMasks(const CommandRules& rules, const std::string& workspace, const std::string& home) {
  ReadDenyMaskSet set;
  std::vector<std::string> patterns = UnreadablePatterns(rules, workspace, home);
  if (patterns.empty()) return set;
  StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(workspace);
  if (!files.ok()) return set;
  std::string incomplete;
  // Each pattern's state at the workspace root, entered from "/".
  std::vector<PathPatternState> at_root;
  for (const std::string& pattern : patterns) {
    PathPatternState s = PathPatternState(pattern).EnterPath(workspace);
    if (s.Covers()) {
      incomplete =
          "a Read deny rule covers the whole workspace, which no sandbox can mask (the file tools refuse "
          "every read)";
      continue;
    }
    // A pattern without a wildcard names one path: look at it, no walk.
    if (!HasGlob(pattern)) {
      StatusOr<std::string> rel = files->Relative(pattern);
      if (rel.ok() && !rel->empty()) {
        if (FileEntry e = files->Look(*rel); e.exists()) Mask(*files, *rel, e.is_link(), &set.paths);
      }
      continue;
    }
    at_root.push_back(std::move(s));
  }
  size_t budget = kMaxMaskWalk;
  if (!at_root.empty()) {
    if (std::string why = FindCovered(*files, "", at_root, &budget, &set.paths); !why.empty()) incomplete = why;
  }
  if (!incomplete.empty()) {
    set.incomplete = "the masks of what the Read deny rules name are incomplete: " + incomplete +
                     "; commands may read what those rules name (the file and search tools still refuse it)";
  }
  std::sort(set.paths.begin(), set.paths.end());
  set.paths.erase(std::unique(set.paths.begin(), set.paths.end()), set.paths.end());
  return set;
}

WorkerSandboxOptions WorkerSandboxSettings(const Config& config, const Workspace& ws) {
  WorkerSandboxOptions o;
  o.bwrap_path = config.bwrap_path;
  o.limits = config.sandbox_limits;
  o.hide = config.sandbox_hide;
  const char* home_env = getenv("HOME");
  const std::string home = home_env != nullptr ? home_env : "";
  ReadDenyMaskSet masks = ReadDenyMasks(config.permissions, ws.root, home);
  o.hide.insert(o.hide.end(), masks.paths.begin(), masks.paths.end());
  o.mask_notice = std::move(masks.incomplete);
  o.hide_home = config.sandbox_hide_home;
  o.root_hidden = config.sandbox_root_hidden;
  o.hooks = !config.hooks.empty();
  o.hook_scripts = HookScriptPaths(config.hooks, ws.root, home);
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

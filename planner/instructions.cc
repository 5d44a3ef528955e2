#include "planner/instructions.h"

#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "base/file_util.h"
#include "tools/text_file.h"
#include "tools/workspace_path.h"
#include "workspace/workspace_files.h"

namespace odin {
namespace {

// The @path words of a CLAUDE file, outside code fences and `code` spans.
std::vector<std::string> ImportsOf(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  bool fenced = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    bool code = false;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '`') code = !code;
      if (code || line[i] != '@' || (i > 0 && !isspace(static_cast<unsigned char>(line[i - 1])))) continue;
      size_t end = line.find_first_of(" \t", i);
      std::string path = line.substr(i + 1, end == std::string::npos ? std::string::npos : end - i - 1);
      while (!path.empty() && (path.back() == '.' || path.back() == ',' || path.back() == ')')) path.pop_back();
      if (!path.empty()) out.push_back(path);
    }
  }
  return out;
}

struct Reader {
  const WorkspaceFiles& files;
  const std::string& root;
  std::vector<std::string>* refused;
  std::set<std::string> seen;  // files given (absolute)
  std::string out;

  void Refuse(const std::string& why) {
    if (refused != nullptr) refused->push_back(why);
  }

  // path's text, or nullopt (named in refused) if it cannot be read or
  // was given already.
  std::optional<std::string> Read(const std::string& path) {
    if (!seen.insert(path).second) return std::nullopt;
    StatusOr<std::string> read = files.ReadFile(path, kMaxInstructionFileBytes);
    if (!read.ok()) {
      Refuse(read.status().message());  // "AGENTS.md: why"
      return std::nullopt;
    }
    return std::move(*read);
  }

  // path's text as a section. by: the file that imports it ("" for none).
  void Add(const std::string& path, const std::string& by, const std::string& text) {
    if (text.empty()) return;
    out +=
        "## " + DisplayPath(path, root) + (by.empty() ? "" : " (imported by " + by + ")") + "\n" + ToDisplayText(text);
    if (out.back() != '\n') out += '\n';
    out += '\n';
  }

  void Imports(const std::string& path, const std::string& text, int depth) {
    if (depth >= kMaxImportDepth) return;
    for (const std::string& given : ImportsOf(text)) {
      std::string shown = DisplayPath(path, root);
      if (given[0] == '~') {
        Refuse(shown + ": @" + given + ": imports from the home directory are not read in a workspace's file");
        continue;
      }
      std::string target = LexicalPath(given, DirName(path));
      if (!IsInsideDir(target, root) || target == root) {
        Refuse(shown + ": @" + given + ": outside the workspace");
        continue;
      }
      if (!files.Look(target).exists()) continue;  // an @mention, not an import
      std::optional<std::string> imported = Read(target);
      if (!imported) continue;
      Add(target, shown, *imported);
      Imports(target, *imported, depth + 1);
    }
  }
};

}  // namespace

std::string LoadInstructions(const std::string& root, const std::string& cwd, std::vector<std::string>* refused,
                             const InstructionSources& sources) {
  std::vector<std::string> dirs;
  for (std::string d = cwd; IsInsideDir(d, root); d = DirName(d)) {
    dirs.insert(dirs.begin(), d);
    if (d == root || d == "/") break;
  }
  // Through the safe file layer: a repository's "AGENTS.md ->
  // /proc/self/environ" or "ODIN.md -> ~/.ssh/id_ed25519" is refused (only
  // relative symlinks that stay in the workspace and reach a regular file
  // are followed, so "AGENTS.md -> CLAUDE.md" works), and a device or a
  // huge file is never read whole (security review 3, findings 4 and 7).
  StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(root);
  if (!files.ok()) return "";
  Reader r{*files, root, refused, {}, ""};
  if (!sources.user_claude_md.empty()) {
    r.out += "## ~/.claude/CLAUDE.md\n" + ToDisplayText(sources.user_claude_md);
    if (r.out.back() != '\n') r.out += '\n';
    r.out += '\n';
  }
  for (const std::string& dir : dirs) {
    std::set<std::string> texts;  // what this directory gave already
    // CLAUDE.md before AGENTS.md: a link between them is given once, with
    // CLAUDE.md's imports; the local file, the most personal, last.
    for (const char* name : {"ODIN.md", "CLAUDE.md", "AGENTS.md", "CLAUDE.local.md"}) {
      bool claude = name[0] == 'C';
      if (claude && !sources.claude_files) continue;
      std::string path = JoinPath(dir, name);
      if (!files->Look(path).exists()) continue;
      std::optional<std::string> text = r.Read(path);
      if (!text || !texts.insert(*text).second) continue;  // a link to a file this directory gave
      r.Add(path, "", *text);
      if (claude) r.Imports(path, *text, 0);
    }
  }
  std::string& out = r.out;
  if (out.size() > kMaxInstructionBytes) {
    // Cut at a line boundary, and say so.
    size_t cut = out.rfind('\n', kMaxInstructionBytes);
    out.resize(cut == std::string::npos ? kMaxInstructionBytes : cut + 1);
    out += "[instructions cut at 32 KiB]\n";
  }
  return out;
}

}  // namespace odin

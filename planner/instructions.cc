#include "planner/instructions.h"

#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "base/file_util.h"
#include "base/sha256.h"
#include "tools/text_file.h"
#include "tools/workspace_path.h"
#include "workspace/workspace_files.h"

namespace odin {
namespace {

constexpr size_t kMaxRefusals = 10;

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

// One section of the instructions: a file and the file that imported it.
struct Section {
  std::string path;  // absolute
  std::string by;    // as shown, "" for none
  std::string text;
};

struct Reader {
  const WorkspaceFiles& files;
  const std::string& root;
  const std::vector<std::string>& unreadable;
  std::vector<std::string> refused;
  size_t refusals = 0;
  std::set<std::string> seen;  // files given (absolute)
  size_t bytes = 0;            // read so far: past the cap nothing more is
  int imports = 0;

  void Refuse(const std::string& why) {
    if (++refusals <= kMaxRefusals) refused.push_back(why);
  }

  // Why path (or what a link there leads to) is no instruction: in .git or
  // .odin, or covered by a Read deny rule. "" if it may be read.
  std::string Forbidden(const std::string& path) {
    std::string at = path;
    for (int hop = 0; hop < 8; ++hop) {
      std::string rel = DisplayPath(at, root);
      for (const char* dir : {".git", ".odin"}) {
        if (rel == dir || rel.starts_with(std::string(dir) + "/") ||
            rel.find(std::string("/") + dir + "/") != std::string::npos) {
          return "git's and Odin's own files are not instructions";
        }
      }
      for (const std::string& pattern : unreadable) {
        if (PathPatternCovers(pattern, at)) return "a Read deny rule covers it";
      }
      if (!files.Look(at).is_link()) return "";
      StatusOr<std::string> target = files.ReadLink(at);
      if (!target.ok()) return "";
      at = LexicalPath(*target, DirName(at));
    }
    return "";
  }

  // path's text, or nullopt (named) if it cannot or may not be read, was
  // given already, or the instructions are full.
  std::optional<std::string> Read(const std::string& path) {
    if (bytes > kMaxInstructionBytes || !seen.insert(path).second) return std::nullopt;
    if (std::string why = Forbidden(path); !why.empty()) {
      Refuse(DisplayPath(path, root) + ": " + why);
      return std::nullopt;
    }
    StatusOr<std::string> read = files.ReadFile(path, kMaxInstructionFileBytes);
    if (!read.ok()) {
      Refuse(read.status().message());  // "AGENTS.md: why"
      return std::nullopt;
    }
    bytes += read->size();
    return std::move(*read);
  }

  // The imports of path (text), depth hops from a CLAUDE file, into *out.
  void Imports(const std::string& path, const std::string& text, int depth, std::vector<Section>* out) {
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
      if (++imports > kMaxImports) {
        Refuse(shown + ": @" + given + ": more than " + std::to_string(kMaxImports) + " imports");
        return;
      }
      std::optional<std::string> imported = Read(target);
      if (!imported) continue;
      out->push_back({target, shown, *imported});
      Imports(target, *imported, depth + 1, out);
    }
  }

  // The root's CLAUDE file `name` with its imports.
  std::vector<Section> ClaudeFile(const char* name) {
    std::vector<Section> out;
    std::string path = JoinPath(root, name);
    if (!files.Look(path).exists()) return out;
    std::optional<std::string> text = Read(path);
    if (!text) return out;
    out.push_back({path, "", *text});
    Imports(path, *text, 0, &out);
    return out;
  }

  std::vector<std::string> Refused() {
    std::vector<std::string> all = refused;
    if (refusals > kMaxRefusals) all.push_back(std::to_string(refusals - kMaxRefusals) + " more not read");
    return all;
  }
};

std::string Hash(const std::vector<Section>& md, const std::vector<Section>& local, const std::string& root) {
  if (md.empty() && local.empty()) return "";
  std::string all;
  for (const std::vector<Section>* list : {&md, &local}) {
    for (const Section& s : *list) all += DisplayPath(s.path, root) + '\0' + s.text + '\0';
  }
  return Sha256Hex("odin-claude-files-v1\n" + all);
}

void Append(const std::string& root, const Section& s, std::string* out) {
  if (s.text.empty()) return;
  *out += "## " + DisplayPath(s.path, root) + (s.by.empty() ? "" : " (imported by " + s.by + ")") + "\n" +
          ToDisplayText(s.text);
  if (out->back() != '\n') *out += '\n';
  *out += '\n';
}

}  // namespace

std::string ClaudeFilesSha256(const std::string& root, const std::vector<std::string>& unreadable) {
  StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(root);
  if (!files.ok()) return "";
  Reader r{*files, root, unreadable};
  std::vector<Section> md = r.ClaudeFile("CLAUDE.md");
  std::vector<Section> local = r.ClaudeFile("CLAUDE.local.md");
  return Hash(md, local, root);
}

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
  Reader r{*files, root, sources.unreadable};
  std::string out;
  if (!sources.user_claude_md.empty()) Append(root, {"~/.claude/CLAUDE.md", "", sources.user_claude_md}, &out);
  // The root's CLAUDE files, only as they were trusted.
  std::vector<Section> md, local;
  if (!sources.claude_sha256.empty()) {
    md = r.ClaudeFile("CLAUDE.md");
    local = r.ClaudeFile("CLAUDE.local.md");
    if (Hash(md, local, root) != sources.claude_sha256) {
      r.Refuse("CLAUDE.md, CLAUDE.local.md or an import changed since `odin trust`: not read");
      md.clear();
      local.clear();
    }
  }
  for (const std::string& dir : dirs) {
    std::set<std::string> texts;  // what this directory gave already
    auto add = [&](const std::vector<Section>& sections) {
      for (const Section& s : sections) Append(root, s, &out);
      if (!sections.empty()) texts.insert(sections[0].text);
    };
    for (const char* name : {"ODIN.md", "CLAUDE.md", "AGENTS.md", "CLAUDE.local.md"}) {
      if (name[0] == 'C') {
        // CLAUDE.md before AGENTS.md: a link between them is given once,
        // with CLAUDE.md's imports; the local file, the most personal, last.
        if (dir == root) add(std::string(name) == "CLAUDE.md" ? md : local);
        continue;
      }
      std::string path = JoinPath(dir, name);
      if (!files->Look(path).exists()) continue;
      std::optional<std::string> text = r.Read(path);
      if (!text || !texts.insert(*text).second) continue;  // a link to a file this directory gave
      Append(root, {path, "", *text}, &out);
    }
  }
  if (refused != nullptr) *refused = r.Refused();
  return CutInstructions(std::move(out));
}

std::string NestedInstructions(const std::string& root, const std::string& path,
                               const std::vector<std::string>& unreadable, std::set<std::string>* given) {
  if (!IsInsideDir(path, root) || path == root) return "";
  std::vector<std::string> dirs;  // below the root, outermost first
  for (std::string d = DirName(path); IsInsideDir(d, root) && d != root && d != "/"; d = DirName(d)) {
    dirs.insert(dirs.begin(), d);
  }
  // Each directory is looked at once a session: most calls open nothing.
  std::erase_if(dirs, [given](const std::string& d) { return !given->insert(d).second; });
  if (dirs.empty()) return "";
  StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(root);
  if (!files.ok()) return "";
  Reader r{*files, root, unreadable};
  std::string out;
  for (const std::string& dir : dirs) {
    for (const char* name : {"CLAUDE.md", "CLAUDE.local.md"}) {
      std::string file = JoinPath(dir, name);
      if (!files->Look(file).exists()) continue;
      std::optional<std::string> text = r.Read(file);
      if (text) Append(root, {file, "", *text}, &out);
    }
  }
  return CutInstructions(std::move(out));
}

std::string CutInstructions(std::string out) {
  if (out.size() > kMaxInstructionBytes) {
    // Cut at a line boundary, and say so.
    size_t cut = out.rfind('\n', kMaxInstructionBytes);
    out.resize(cut == std::string::npos ? kMaxInstructionBytes : cut + 1);
    out += "[instructions cut at 32 KiB]\n";
  }
  return out;
}

}  // namespace odin

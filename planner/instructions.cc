#include "planner/instructions.h"

#include <iostream>
#include <vector>

#include "base/file_util.h"
#include "tools/text_file.h"
#include "tools/workspace_path.h"
#include "workspace/workspace_files.h"

namespace odin {

std::string LoadInstructions(const std::string& root, const std::string& cwd, std::vector<std::string>* refused) {
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
  std::string out;
  for (const std::string& dir : dirs) {
    for (const char* name : {"ODIN.md", "AGENTS.md"}) {
      std::string path = JoinPath(dir, name);
      if (!files->Look(path).exists()) continue;
      // Past the cap, a file's rest would be cut anyway.
      StatusOr<std::string> text = files->ReadFile(path, kMaxInstructionFileBytes);
      if (!text.ok()) {
        if (refused != nullptr) refused->push_back(text.status().message());  // "AGENTS.md: why"
        continue;
      }
      if (text->empty()) continue;
      out += "## " + DisplayPath(path, root) + "\n" + ToDisplayText(*text);
      if (out.back() != '\n') out += '\n';
      out += '\n';
    }
  }
  if (out.size() > kMaxInstructionBytes) {
    // Cut at a line boundary, and say so.
    size_t cut = out.rfind('\n', kMaxInstructionBytes);
    out.resize(cut == std::string::npos ? kMaxInstructionBytes : cut + 1);
    out += "[instructions cut at 32 KiB]\n";
  }
  return out;
}

}  // namespace odin

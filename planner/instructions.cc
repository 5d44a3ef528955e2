#include "planner/instructions.h"

#include <vector>

#include "base/file_util.h"
#include "tools/text_file.h"
#include "tools/workspace_path.h"

namespace odin {

std::string LoadInstructions(const std::string& root, const std::string& cwd) {
  std::vector<std::string> dirs;
  for (std::string d = cwd; IsInsideDir(d, root); d = DirName(d)) {
    dirs.insert(dirs.begin(), d);
    if (d == root || d == "/") break;
  }
  std::string out;
  for (const std::string& dir : dirs) {
    for (const char* name : {"ODIN.md", "AGENTS.md"}) {
      std::string path = JoinPath(dir, name);
      if (!PathExists(path)) continue;
      StatusOr<std::string> text = ReadFileToString(path);
      if (!text.ok() || text->empty()) continue;
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

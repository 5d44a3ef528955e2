#include "session/init_prompt.h"

#include "base/file_util.h"
#include "planner/checks.h"
#include "workspace/workspace_files.h"

namespace odin {

std::string InitPrompt(const std::string& root, const ChecksConfig& checks) {
  bool exists = ExistsBelow(root, "ODIN.md");
  std::string text =
      exists ? "Update ODIN.md, this repository's instructions for coding agents. Read it first, keep what still "
               "holds, fix what is wrong, add what is missing.\n"
             : "Write ODIN.md, this repository's instructions for coding agents.\n";
  text +=
      "Survey the repository first: its build system, how to build, test and lint it, its layout, and the "
      "conventions a newcomer would get wrong. Read the files that say so (build files, CI configuration, README, "
      "existing agent instructions) rather than guessing; name only commands you found. Then write the file with "
      "InitTool (the only tool that can write ODIN.md). Keep it short: commands first, then layout, then "
      "conventions.\n";
  std::string found;
  for (const char* name : {"AGENTS.md", "CLAUDE.md", ".cursorrules", "README.md", "README", "CONTRIBUTING.md"}) {
    if (ExistsBelow(root, name)) found += std::string(found.empty() ? "" : ", ") + name;
  }
  if (!found.empty()) text += "\nInstruction and documentation files present: " + found + ".\n";
  std::string detected;
  for (const CheckSpec& c : ChecksForProfile(Profile::kSafe, checks, root)) {
    if (c.command.empty()) continue;
    detected += "- " + c.name + ": `" + c.command + "` (from " + c.origin + ")\n";
  }
  if (!detected.empty()) {
    text += "\nThe check commands Odin detected (it runs them when an agent claims completion):\n" + detected;
  }
  return text;
}

}  // namespace odin

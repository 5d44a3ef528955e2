#pragma once
// Project instructions for the system prompt: ODIN.md and AGENTS.md in every
// directory from the repository root down to the working directory, in that
// order (the more specific last), after the user's own ~/.claude/CLAUDE.md;
// in a trusted workspace also Claude Code's CLAUDE.md and CLAUDE.local.md at
// the root, with their imports; capped at 32 KiB.
//
// A CLAUDE file's "@path" imports (Claude Code's: a word starting with @,
// outside code) are read too, each once, as sections of their own after the
// file that names them: paths relative to that file, inside the workspace
// only, at most kMaxImportDepth hops deep and kMaxImports in all. The root's
// CLAUDE files and their imports are what the trust hash pins
// (ClaudeFilesSha256, config/config_loader.h): they are read only while
// they are what the user trusted, so neither a `git pull` nor the agent
// (writing a file an import names) can change them unseen. Nothing a Read
// deny rule covers, and nothing in .git or .odin, is read as instructions,
// through a link neither. CLAUDE.md files below the root are read when the
// agent works there (NestedInstructions), into the conversation's tail.

#include <set>
#include <string>
#include <vector>

namespace odin {

constexpr size_t kMaxInstructionBytes = 32 * 1024;
// An instruction file larger than this is not read at all (it would be cut
// at kMaxInstructionBytes anyway).
constexpr size_t kMaxInstructionFileBytes = 1 << 20;
// Imports of imports, as deep as Claude Code follows them, and in all.
constexpr int kMaxImportDepth = 4;
constexpr int kMaxImports = 64;

struct InstructionSources {
  // The root's CLAUDE files are read only if their hash (ClaudeFilesSha256)
  // is this one, the trusted one; "" reads none.
  std::string claude_sha256;
  // The text of the user's ~/.claude/CLAUDE.md ("" for none); its imports
  // are not followed.
  std::string user_claude_md;
  // The Read deny rules' patterns (gates/tool_rules.h UnreadablePatterns).
  std::vector<std::string> unreadable;
};

// The hash over the root's CLAUDE.md, CLAUDE.local.md and their imports as
// they are now (paths and texts), "" when there are none.
std::string ClaudeFilesSha256(const std::string& root, const std::vector<std::string>& unreadable);

// Reads through the safe file layer (workspace/workspace_files.h): a file
// that is a symlink out of the workspace, a device, a FIFO or larger than
// kMaxInstructionFileBytes is left out, and named in refused ("path: why";
// at most 10 lines, then a count), if given. A file whose text a directory
// already gave (AGENTS.md linked to CLAUDE.md) is given once.
// REQUIRES: cwd is root or below it; both absolute.
std::string LoadInstructions(const std::string& root, const std::string& cwd,
                             std::vector<std::string>* refused = nullptr, const InstructionSources& sources = {});

// The CLAUDE.md and CLAUDE.local.md of the directories between the root
// (excluded: LoadInstructions gives it) and path's, outermost first, that
// are not in *given (each directory is looked at once a session; it is
// added): their text as sections, for the conversation's tail when the
// agent reads or writes path, never the system prompt (which stays
// byte-stable for prompt caching). Read as LoadInstructions reads; their
// imports are not followed. "" when there is none.
std::string NestedInstructions(const std::string& root, const std::string& path,
                               const std::vector<std::string>& unreadable, std::set<std::string>* given);
// out cut at kMaxInstructionBytes at a line boundary, said in it.
std::string CutInstructions(std::string out);

}  // namespace odin

#pragma once
// Project instructions for the system prompt: ODIN.md and AGENTS.md, and in
// a trusted workspace Claude Code's CLAUDE.md and CLAUDE.local.md, in every
// directory from the repository root down to the working directory, in that
// order (the more specific last), after the user's own ~/.claude/CLAUDE.md;
// capped at 32 KiB.
//
// A CLAUDE file's "@path" imports (Claude Code's: a word starting with @,
// outside code) are read too, each once, as sections of their own after the
// file that names them: paths relative to that file, inside the workspace
// only, at most kMaxImportDepth hops deep. An import that cannot be read
// (outside the workspace, a link out of it, missing) is left out and named.

#include <string>
#include <vector>

namespace odin {

constexpr size_t kMaxInstructionBytes = 32 * 1024;
// An instruction file larger than this is not read at all (it would be cut
// at kMaxInstructionBytes anyway).
constexpr size_t kMaxInstructionFileBytes = 1 << 20;
// Imports of imports, as deep as Claude Code follows them.
constexpr int kMaxImportDepth = 4;

struct InstructionSources {
  // CLAUDE.md and CLAUDE.local.md (and their imports): the workspace is
  // trusted (config/config_loader.h: they are trusted-only).
  bool claude_files = false;
  // The text of the user's ~/.claude/CLAUDE.md ("" for none); its imports
  // are not followed.
  std::string user_claude_md;
};

// Reads through the safe file layer (workspace/workspace_files.h): a file
// that is a symlink out of the workspace, a device, a FIFO or larger than
// kMaxInstructionFileBytes is left out, and named in refused ("path: why"),
// if given. A file whose text a directory already gave (AGENTS.md linked to
// CLAUDE.md) is given once.
// REQUIRES: cwd is root or below it; both absolute.
std::string LoadInstructions(const std::string& root, const std::string& cwd,
                             std::vector<std::string>* refused = nullptr, const InstructionSources& sources = {});

}  // namespace odin

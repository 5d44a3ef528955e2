#pragma once
// Project instructions for the system prompt: ODIN.md and AGENTS.md in every
// directory from the repository root down to the working directory, in that
// order (the more specific last), capped at 32 KiB.

#include <string>
#include <vector>

namespace odin {

constexpr size_t kMaxInstructionBytes = 32 * 1024;
// An instruction file larger than this is not read at all (it would be cut
// at kMaxInstructionBytes anyway).
constexpr size_t kMaxInstructionFileBytes = 1 << 20;

// Reads through the safe file layer (workspace/workspace_files.h): a file
// that is a symlink out of the workspace, a device, a FIFO or larger than
// kMaxInstructionFileBytes is left out, and named in refused ("path: why"),
// if given.
// REQUIRES: cwd is root or below it; both absolute.
std::string LoadInstructions(const std::string& root, const std::string& cwd,
                             std::vector<std::string>* refused = nullptr);

}  // namespace odin

#pragma once
// Project instructions for the system prompt: ODIN.md and AGENTS.md in every
// directory from the repository root down to the working directory, in that
// order (the more specific last), capped at 32 KiB.

#include <string>

namespace odin {

constexpr size_t kMaxInstructionBytes = 32 * 1024;

// REQUIRES: cwd is root or below it; both absolute.
std::string LoadInstructions(const std::string& root, const std::string& cwd);

}  // namespace odin

#pragma once
// /init and `odin init`: the message that asks the model to write ODIN.md,
// with what Odin itself knows of the project (the check commands it
// detected, the instruction files that exist), so the model starts from
// facts rather than guesses.

#include <string>

namespace odin {

struct ChecksConfig;

// The /init message for the workspace at root.
std::string InitPrompt(const std::string& root, const ChecksConfig& checks);

}  // namespace odin

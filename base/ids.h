#pragma once
// Random identifiers for sessions, executions, artifacts and workers.

#include <string>
#include <string_view>

namespace odin {

// Returns prefix + "_" + 12 random lower-case hex digits, e.g. "ex_3f9a1c0b7d2e".
std::string NewId(std::string_view prefix);

}  // namespace odin

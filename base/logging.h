#pragma once
// Logging setup shared by every binary: spdlog to stderr, lines prefixed by the
// program name. The level comes from ODIN_LOG (trace, debug, info, warn, error,
// off); the default is warn, so a normal run prints nothing of its own.

#include <string_view>

namespace odin {

void InitLogging(std::string_view program);

}  // namespace odin

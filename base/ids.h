#pragma once
// Random identifiers for sessions, executions, artifacts and workers.

#include <string>
#include <cstddef>
#include <string_view>

namespace odin {

// Returns prefix + "_" + 12 random lower-case hex digits, e.g. "ex_3f9a1c0b7d2e".
std::string NewId(std::string_view prefix);

// `bytes` random bytes from the kernel, as lowercase hex (a secret token).
std::string RandomHex(size_t bytes);

// Whether two secrets are equal, in time that depends only on their lengths.
bool SecretsEqual(std::string_view a, std::string_view b);

}  // namespace odin

#pragma once
// Canonical JSON: the form tool arguments are recorded and compared in (sorted
// object keys, no insignificant whitespace, numbers as parsed).

#include <string>
#include <string_view>

#include "base/status.h"

namespace odin {

// Parses json and re-serializes it canonically. Returns InvalidArgument with
// the parser's message when json is malformed.
StatusOr<std::string> CanonicalizeJson(std::string_view json);

// Returns true iff text is well-formed UTF-8 (what a JSON string can carry).
bool IsValidUtf8(std::string_view text);

}  // namespace odin

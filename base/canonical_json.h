#pragma once
// Canonical JSON: the form tool arguments are recorded and compared in (sorted
// object keys, no insignificant whitespace, numbers as parsed).

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"

namespace odin {

// Objects and arrays nested in one another, at most, in JSON that odin reads
// from a model or a client (tool arguments, stream events). The parser
// (nlohmann) reads deeper input without recursion, but copying, comparing
// and serializing a value recurse once per level: deep input must be refused
// before it becomes a value.
constexpr int kMaxJsonDepth = 64;

// How deeply objects and arrays nest in json text, read without parsing
// (strings skipped); counting stops at limit + 1. Malformed text gets a
// number too (its brackets counted): callers parse it afterwards.
int JsonNestingDepth(std::string_view json, int limit = kMaxJsonDepth);

// Whether json text nests deeper than kMaxJsonDepth.
inline bool JsonTooDeep(std::string_view json) { return JsonNestingDepth(json) > kMaxJsonDepth; }

// Parses json and re-serializes it canonically. Returns InvalidArgument with
// the parser's message when json is malformed, and ("nested more than 64
// levels deep") when it nests deeper than kMaxJsonDepth, before parsing.
StatusOr<std::string> CanonicalizeJson(std::string_view json);
// The same checks, and the parsed value in *value (a call's arguments,
// parsed once at Submit); its dump() is the canonical form.
Status ParseJsonValue(std::string_view json, nlohmann::json* value);

// Returns true iff text is well-formed UTF-8 (what a JSON string can carry).
bool IsValidUtf8(std::string_view text);

}  // namespace odin

#pragma once
// The one door for JSON that Odin reads: model output, MCP messages both
// ways, hooks' output, gRPC JSON fields, configs, tool arguments and the
// ledger's own JSON all come in through ParseJson. Size and nesting depth
// are checked on the text, before a value exists: the parser (nlohmann)
// reads deep input without recursion, but copying, comparing, dumping and
// destroying a value recurse once per level, so a value 300,000 levels
// deep crashes whatever touches it next (security review 3, finding 8).
// scripts/check-layering.py refuses json::parse anywhere else.

#include <cstddef>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "base/canonical_json.h"
#include "base/status.h"

namespace odin {

// The most bytes of JSON text read by default: configs, messages and
// ledger rows are far smaller; a model's or a tool's answer is cut long
// before this.
constexpr size_t kMaxJsonInputBytes = 64u << 20;

struct JsonLimits {
  size_t max_bytes = kMaxJsonInputBytes;
  int max_depth = kMaxJsonDepth;
};

// Parses text, or says why not: InvalidArgument naming what ("MCP message",
// "hook output") and the reason ("larger than N bytes", "nested more than
// 64 levels deep", the parser's message).
StatusOr<nlohmann::json> ParseJsonOrError(std::string_view text, std::string_view what, JsonLimits limits = {});

// The same, with a discarded value (is_discarded()) in place of the error:
// what json::parse(text, nullptr, false) returned, behind the same checks.
nlohmann::json ParseJson(std::string_view text, JsonLimits limits = {});

}  // namespace odin

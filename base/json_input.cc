#include "base/json_input.h"

#include <nlohmann/json.hpp>

namespace odin {

namespace {

// Why text may not become a value, or "".
std::string Refusal(std::string_view text, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) return "larger than " + std::to_string(limits.max_bytes) + " bytes";
  if (JsonNestingDepth(text, limits.max_depth) > limits.max_depth) {
    return "nested more than " + std::to_string(limits.max_depth) + " levels deep";
  }
  return "";
}

}  // namespace

StatusOr<nlohmann::json> ParseJsonOrError(std::string_view text, std::string_view what, JsonLimits limits) {
  if (std::string why = Refusal(text, limits); !why.empty()) return Status::InvalidArgument(what, why);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 3, column 5:
    // syntax error ...": the bracketed id means nothing to a reader.
    std::string message = e.what();
    if (message.rfind("[json.exception.", 0) == 0 && message.find("] ") != std::string::npos) {
      message.erase(0, message.find("] ") + 2);
    }
    return Status::InvalidArgument(what, "not valid JSON: " + message);
  }
}

nlohmann::json ParseJson(std::string_view text, JsonLimits limits) {
  if (!Refusal(text, limits).empty()) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

}  // namespace odin

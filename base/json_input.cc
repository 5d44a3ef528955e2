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
    return Status::InvalidArgument(what, std::string("not valid JSON: ") + e.what());
  }
}

nlohmann::json ParseJson(std::string_view text, JsonLimits limits) {
  if (!Refusal(text, limits).empty()) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

}  // namespace odin

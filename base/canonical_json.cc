#include "base/canonical_json.h"

#include <nlohmann/json.hpp>

namespace odin {

StatusOr<std::string> CanonicalizeJson(std::string_view json) {
  // nlohmann::json keeps objects in a std::map, so dump() sorts keys.
  nlohmann::json value = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return Status::InvalidArgument("JSON arguments", "not valid JSON");
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace odin

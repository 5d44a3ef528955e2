#include "llm/wire_json.h"

#include <nlohmann/json.hpp>

#include "base/canonical_json.h"
#include "base/json_input.h"

namespace odin::wire {

json ParseOr(const std::string& text, json fallback) {
  if (JsonTooDeep(text)) return fallback;
  json j = ParseJson(text);
  if (j.is_discarded()) return fallback;
  return j;
}

StatusOr<json> ParseEvent(const SseEvent& e) {
  if (JsonTooDeep(e.data)) {
    return Status::Unavailable("malformed stream event",
                               "nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
  }
  return ParseJson(e.data);
}

Status Guarded(const SseEvent& e, const std::function<Status()>& handle) {
  try {
    return handle();
  } catch (const json::exception& ex) {
    return Status::Unavailable("malformed stream event", std::string(ex.what()) + ": " + e.data.substr(0, 200));
  }
}

int64_t Int(const json& object, const char* key, int64_t fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

std::string Str(const json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace odin::wire

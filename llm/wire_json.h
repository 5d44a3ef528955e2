#pragma once
// The JSON helpers the wire formats share (llm_wire.cc, responses_wire.cc):
// reading a server's events and fields without throwing on odd JSON.
// Included only by those files: nlohmann's header stays out of the others.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "base/canonical_json.h"
#include "base/json_input.h"
#include "base/status.h"
#include "llm/sse_parser.h"

namespace odin::wire {

using nlohmann::json;

// text as a value, or fallback if it is malformed or nests too deep to copy
// and serialize (a model's tool arguments go back to it in the next request).
inline json ParseOr(const std::string& text, json fallback) {
  if (JsonTooDeep(text)) return fallback;
  json j = ParseJson(text);
  if (j.is_discarded()) return fallback;
  return j;
}

// A stream event's data as a value; discarded if malformed. An event nested
// deeper than kMaxJsonDepth is an error: no real event is, and serializing
// one (an error object, say) would recurse once per level.
inline StatusOr<json> ParseEvent(const SseEvent& e) {
  if (JsonTooDeep(e.data)) {
    return Status::Unavailable("malformed stream event",
                               "nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
  }
  return ParseJson(e.data);
}

// A server's odd JSON (null where a number was expected, an array where an
// object was) must not throw out of a libcurl callback: the decoders' event
// handlers run under this guard, which turns it into a stream error.
template <typename F>
Status Guarded(const SseEvent& e, F handle) {
  try {
    return handle();
  } catch (const json::exception& ex) {
    return Status::Unavailable("malformed stream event", std::string(ex.what()) + ": " + e.data.substr(0, 200));
  }
}

inline int64_t Int(const json& object, const char* key, int64_t fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

inline std::string Str(const json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

inline std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace odin::wire

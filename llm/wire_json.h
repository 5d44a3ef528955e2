#pragma once
// The JSON helpers the wire formats share (llm_wire.cc, responses_wire.cc):
// reading a server's events and fields without throwing on odd JSON. Their
// users include <nlohmann/json.hpp> themselves.

#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"
#include "llm/sse_parser.h"

namespace odin::wire {

using json = nlohmann::json;

// text as a value, or fallback if it is malformed or nests too deep to copy
// and serialize (a model's tool arguments go back to it in the next request).
json ParseOr(const std::string& text, json fallback);

// A stream event's data as a value; discarded if malformed. An event nested
// deeper than kMaxJsonDepth is an error: no real event is, and serializing
// one (an error object, say) would recurse once per level.
StatusOr<json> ParseEvent(const SseEvent& e);

// A server's odd JSON (null where a number was expected, an array where an
// object was) must not throw out of a libcurl callback: the decoders' event
// handlers run under this guard, which turns it into a stream error.
Status Guarded(const SseEvent& e, const std::function<Status()>& handle);

// A field of an object, or fallback ("") when it is missing, of another
// type, or object is not an object.
int64_t Int(const json& object, const char* key, int64_t fallback);
std::string Str(const json& object, const char* key);

// Serialized, invalid UTF-8 replaced.
std::string Dump(const json& j);

}  // namespace odin::wire

#include "base/canonical_json.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "base/json_input.h"

namespace odin {

int JsonNestingDepth(std::string_view json, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return limit + 1;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

Status ParseJsonValue(std::string_view json, nlohmann::json* value) {
  if (JsonTooDeep(json)) {
    return Status::InvalidArgument("JSON arguments",
                                   "nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
  }
  *value = ParseJson(json);
  if (value->is_discarded()) return Status::InvalidArgument("JSON arguments", "not valid JSON");
  return Status::OK();
}

StatusOr<std::string> CanonicalizeJson(std::string_view json) {
  // nlohmann::json keeps objects in a std::map, so dump() sorts keys.
  nlohmann::json value;
  RETURN_IF_ERROR(ParseJsonValue(json, &value));
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool IsValidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t len;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > text.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    static const uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

}  // namespace odin

#include "base/image_type.h"

namespace odin {

std::optional<std::string> ImageMediaType(std::string_view b) {
  auto starts = [b](std::string_view p) { return b.substr(0, p.size()) == p; };
  if (starts("\x89PNG\r\n\x1a\n")) return "image/png";
  if (starts("\xff\xd8\xff")) return "image/jpeg";
  if (starts("GIF87a") || starts("GIF89a")) return "image/gif";
  if (b.size() >= 12 && starts("RIFF") && b.substr(8, 4) == "WEBP") return "image/webp";
  return std::nullopt;
}

}  // namespace odin

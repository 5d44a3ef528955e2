#pragma once
// What counts as an image Odin gives a model (PNG, JPEG, GIF, WebP), by the
// bytes' magic, never by name and never decoded: one answer for the tool
// worker's Read and for the model clients (llm/images.h).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace odin {

// At most this many bytes an image (5 MB in base64: Anthropic's limit, and
// under OpenAI's), and this many images a message.
constexpr size_t kMaxImageBytes = 3'750'000;
constexpr size_t kMaxImagesPerMessage = 20;

// "image/png", "image/jpeg", "image/gif" or "image/webp" by bytes' magic;
// nullopt for anything else.
std::optional<std::string> ImageMediaType(std::string_view bytes);

}  // namespace odin

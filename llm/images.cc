#include "llm/images.h"

#include <algorithm>
#include <cctype>

#include "base/base64.h"

namespace odin {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

StatusOr<ImageData> MakeImage(std::string bytes, const std::string& label) {
  if (bytes.size() > kMaxImageBytes) {
    return Status::InvalidArgument(label, "an image over " + std::to_string(kMaxImageBytes / 1000) +
                                              " kB, more than the models accept; make it smaller");
  }
  std::optional<std::string> type = ImageMediaType(bytes);
  if (!type) return Status::InvalidArgument(label, "not a PNG, JPEG, GIF or WebP image (by its first bytes)");
  return ImageData{*type, std::move(bytes), label};
}

bool ModelSeesImages(const std::string& model, const std::map<std::string, bool>& vision) {
  if (auto it = vision.find(model); it != vision.end()) return it->second;
  if (auto it = vision.find("*"); it != vision.end()) return it->second;
  std::string m = Lower(model);
  // The provider's prefix ("anthropic/claude-...", "openai/gpt-4o").
  if (size_t slash = m.rfind('/'); slash != std::string::npos) m = m.substr(slash + 1);
  for (const char* p : {"o1-mini", "o1-preview", "o3-mini"}) {
    if (StartsWith(m, p)) return false;
  }
  for (const char* p : {"claude-3", "claude-sonnet", "claude-opus", "claude-haiku", "claude-4", "gpt-4o", "gpt-4.1",
                        "gpt-4-turbo", "gpt-5", "o1", "o3", "o4", "gemini", "chatgpt-4o"}) {
    if (StartsWith(m, p)) return true;
  }
  for (const char* p : {"llava", "-vl", "vision", "gemma3", "pixtral", "minicpm-v", "qwen2.5vl", "moondream"}) {
    if (m.find(p) != std::string::npos) return true;
  }
  return false;
}

std::string ImageDataUrl(const ImageData& image) {
  return "data:" + image.media_type + ";base64," + Base64Encode(image.bytes);
}

std::string ToolImagesIntro(const std::vector<ImageData>& images) {
  std::string text = "[odin] The images the Read calls above returned:";
  // A file's name is the repository's words: quoted, no control character.
  for (size_t i = 0; i < images.size(); ++i) {
    std::string label;
    for (char ch : images[i].label.substr(0, 200)) {
      label += static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f || ch == '"' ? '?' : ch;
    }
    text += (i == 0 ? " \"" : ", \"") + label + "\"";
  }
  return text;
}

}  // namespace odin

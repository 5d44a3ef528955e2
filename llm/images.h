#pragma once
// Images for the model: what counts as one (PNG, JPEG, GIF, WebP, by their
// magic bytes, never by name and never decoded), how large one may be, and
// which models accept them.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/image_type.h"
#include "llm/llm.h"

namespace odin {

// The image of bytes labelled label, or why not (one line: not an image,
// too large).
StatusOr<ImageData> MakeImage(std::string bytes, const std::string& label);

// Whether model accepts images: llm.vision's entry for it, else its "*",
// else a guess from its name (Claude 3 and later, GPT-4o, GPT-4.1, GPT-5,
// o1, o3, o4, Gemini, and local models named for vision: llava, *-vl,
// *vision*, gemma3, pixtral, minicpm-v).
bool ModelSeesImages(const std::string& model, const std::map<std::string, bool>& vision);

// An image as a data: URL (OpenAI's image_url).
std::string ImageDataUrl(const ImageData& image);

// The text before the images a turn's Read calls returned, which follow
// its tool results (each provider's image block, in a user message):
// "[odin] The images the Read calls above returned: "a.png", "b.png""
// (names quoted, control characters and quotes as '?').
std::string ToolImagesIntro(const std::vector<ImageData>& images);

}  // namespace odin

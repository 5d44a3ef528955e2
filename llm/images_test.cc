#include "llm/images.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

const std::string kPng = std::string("\x89PNG\r\n\x1a\n", 8) + std::string("\0\0\0\rIHDR", 8);

TEST(ImagesTest, TheBytesDecideNotTheName) {
  EXPECT_EQ(ImageMediaType(kPng), "image/png");
  EXPECT_EQ(ImageMediaType("\xff\xd8\xff\xe0rest"), "image/jpeg");
  EXPECT_EQ(ImageMediaType("GIF89a..."), "image/gif");
  EXPECT_EQ(ImageMediaType(std::string("RIFF\x10\0\0\0WEBPVP8 ", 16)), "image/webp");
  EXPECT_EQ(ImageMediaType(std::string("RIFF\x10\0\0\0WAVEfmt ", 16)), std::nullopt);
  EXPECT_EQ(ImageMediaType("<svg xmlns=...>"), std::nullopt);
  EXPECT_EQ(ImageMediaType(""), std::nullopt);
  StatusOr<ImageData> fake = MakeImage("not an image at all", "shot.png");
  ASSERT_FALSE(fake.ok());
  EXPECT_EQ(fake.status().message(), "shot.png: not a PNG, JPEG, GIF or WebP image (by its first bytes)");
  StatusOr<ImageData> big = MakeImage(kPng + std::string(kMaxImageBytes, 'x'), "big.png");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("make it smaller"), std::string::npos);
  StatusOr<ImageData> ok = MakeImage(kPng, "a.png");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->media_type, "image/png");
  EXPECT_EQ(ImageDataUrl(*ok).rfind("data:image/png;base64,iVBORw0KGgo", 0), 0u);
}

TEST(ImagesTest, WhichModelsSeeImages) {
  EXPECT_TRUE(ModelSeesImages("claude-sonnet-4-5", {}));
  EXPECT_TRUE(ModelSeesImages("gpt-4o-mini", {}));
  EXPECT_TRUE(ModelSeesImages("anthropic/claude-3-5-haiku", {}));
  EXPECT_TRUE(ModelSeesImages("llava:13b", {}));
  EXPECT_FALSE(ModelSeesImages("gpt-3.5-turbo", {}));
  EXPECT_FALSE(ModelSeesImages("qwen2.5-coder:7b", {}));
  EXPECT_FALSE(ModelSeesImages("claude-2.1", {}));
  EXPECT_FALSE(ModelSeesImages("o3-mini", {}));
  EXPECT_TRUE(ModelSeesImages("o4-mini", {}));
  // The config decides first: the model by name, then "*".
  EXPECT_TRUE(ModelSeesImages("qwen2.5-coder:7b", {{"qwen2.5-coder:7b", true}}));
  EXPECT_FALSE(ModelSeesImages("gpt-4o", {{"*", false}}));
  EXPECT_TRUE(ModelSeesImages("gpt-4o", {{"*", false}, {"gpt-4o", true}}));
}

}  // namespace
}  // namespace odin

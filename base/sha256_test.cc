#include "base/sha256.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Test, IncrementalEqualsOneShot) {
  Sha256 h;
  h.Update("a");
  h.Update("bc");
  EXPECT_EQ(HexDigest(h.Finish()), Sha256Hex("abc"));
}

}  // namespace
}  // namespace odin

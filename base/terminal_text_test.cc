#include "base/terminal_text.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

TEST(TerminalTextTest, EscapeSequencesAndNulsBecomeVisible) {
  EXPECT_EQ(VisibleControls("\x1b[2J\x1b]0;owned\x07ok"), "\\x1b[2J\\x1b]0;owned\\x07ok");
  EXPECT_EQ(VisibleControls(std::string("a\0b", 3)), "a\\0b");
  // A carriage return would let a line overwrite itself.
  EXPECT_EQ(VisibleControls("rm -rf /\rls"), "rm -rf /\\rls");
  EXPECT_EQ(VisibleControls("\x7f\x01"), "\\x7f\\x01");
}

TEST(TerminalTextTest, LayoutStaysUnlessOneLineIsAsked) {
  EXPECT_EQ(VisibleControls("a\n\tb\n"), "a\n\tb\n");
  EXPECT_EQ(VisibleControls("a\n\tb", Layout::kOneLine), "a\\n\\tb");
}

TEST(TerminalTextTest, C1ControlsAndBidiOverridesBecomeVisible) {
  EXPECT_EQ(VisibleControls("\xc2\x9b"
                            "31m"),
            "\\u009b31m");  // CSI, as one code point
  EXPECT_EQ(VisibleControls("ls \xe2\x80\xae"
                            "txt.exe"),
            "ls \\u202etxt.exe");
  EXPECT_EQ(VisibleControls("\xe2\x81\xa6x\xe2\x81\xa9"), "\\u2066x\\u2069");
}

TEST(TerminalTextTest, TextAndOtherUnicodePassUnchanged) {
  std::string text = "héllo wörld ⏺ ✓ 日本 🙂 \\x1b literal";
  EXPECT_EQ(VisibleControls(text), text);
}

TEST(TerminalTextTest, BytesThatAreNotUtf8AreShownInHex) {
  EXPECT_EQ(VisibleControls("a\x9b"
                            "b"),
            "a\\x9bb");                                           // a raw C1 byte (CSI in 8-bit terminals)
  EXPECT_EQ(VisibleControls("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(VisibleControls("\xe2\x80"), "\\xe2\\x80");           // cut short
  EXPECT_EQ(VisibleControls("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
}

TEST(TerminalTextTest, CutsAtACharacterBoundary) {
  EXPECT_EQ(CutAtCharacter("abc", 5), "abc");
  EXPECT_EQ(CutAtCharacter("ab日本", 4), "ab");
  EXPECT_EQ(CutAtCharacter("ab日本", 5), "ab日");
}

TEST(TerminalTextTest, JsonKeepsItsMeaningWithoutRawControls) {
  EXPECT_EQ(JsonForTerminal(R"({"a":"x)"
                            "\xe2\x80\xae"
                            "\x7f"
                            "\xc2\x9b"
                            R"(y é"})"),
            R"({"a":"x\u202e\u007f\u009by é"})");
  std::string plain = R"({"a":"\u001b[31m","b":[1,2]})";
  EXPECT_EQ(JsonForTerminal(plain), plain);
}

}  // namespace
}  // namespace odin

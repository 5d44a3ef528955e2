#include "tools/check_output.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

TEST(CheckOutput, GccErrorsAndWarningsMapToTheRealFile) {
  std::string out =
      "/tmp/odin-check-1/a.cc: In function 'int main()':\n"
      "/tmp/odin-check-1/a.cc:3:10: error: 'x' was not declared in this scope\n"
      "/tmp/odin-check-1/a.cc:4:3: warning: unused variable 'y' [-Wunused-variable]\n"
      "/tmp/odin-check-1/a.cc:3:10: note: suggested alternative: 'y'\n"
      "/ws/inc.h:1:1: error: expected unqualified-id\n";
  auto d = ParseCheckOutput(out, 1, "/tmp/odin-check-1/a.cc", "/ws/a.cc", "g++");
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].path, "/ws/a.cc");
  EXPECT_EQ(d[0].diag.line, 3u);
  EXPECT_EQ(d[0].diag.column, 10u);
  EXPECT_EQ(d[0].diag.severity, 1u);
  EXPECT_EQ(d[0].diag.message, "'x' was not declared in this scope");
  EXPECT_EQ(d[0].diag.source, "g++");
  EXPECT_EQ(d[1].diag.severity, 2u);
  EXPECT_EQ(d[2].path, "/ws/inc.h");
}

TEST(CheckOutput, CargosShortFormKeepsTheCodeAndPlacesRelativePathsInTheCrate) {
  std::string out =
      "src/lib.rs:194:31: error[E0061]: this function takes 3 arguments but 2 arguments were supplied\n"
      "/tmp/odin-check-1/crate-1/src/version.rs:9:5: warning: unused variable: `x`\n"
      "/home/u/.cargo/registry/src/dep-1.0/src/lib.rs:1:1: error: dependency's own error\n"
      "error: could not compile `autocfg` (lib) due to 1 previous error\n";
  auto d = ParseCheckOutput(out, 0, "/tmp/odin-check-1/crate-1/", "/ws/autocfg/", "cargo", "/ws/autocfg");
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].path, "/ws/autocfg/src/lib.rs");
  EXPECT_EQ(d[0].diag.line, 194u);
  EXPECT_EQ(d[0].diag.column, 31u);
  EXPECT_EQ(d[0].diag.code, "E0061");
  EXPECT_EQ(d[0].diag.message, "this function takes 3 arguments but 2 arguments were supplied");
  EXPECT_EQ(d[1].path, "/ws/autocfg/src/version.rs");
  EXPECT_EQ(d[1].diag.severity, 2u);
  EXPECT_EQ(d[2].path, "/home/u/.cargo/registry/src/dep-1.0/src/lib.rs");
}

TEST(CheckOutput, PythonSyntaxError) {
  std::string out =
      "  File \"/tmp/c/a.py\", line 2\n"
      "    def f(:\n"
      "          ^\n"
      "SyntaxError: invalid syntax\n";
  auto d = ParseCheckOutput(out, 1, "/tmp/c/a.py", "/ws/a.py", "python3");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].path, "/ws/a.py");
  EXPECT_EQ(d[0].diag.line, 2u);
  EXPECT_EQ(d[0].diag.code, "SyntaxError");
  EXPECT_EQ(d[0].diag.message, "invalid syntax");
}

TEST(CheckOutput, NodeSyntaxError) {
  std::string out =
      "/tmp/c/a.js:3\n"
      "  foo(\n"
      "     ^\n\n"
      "SyntaxError: missing ) after argument list\n"
      "    at internalCompileFunction (node:internal/vm:76:18)\n";
  auto d = ParseCheckOutput(out, 1, "/tmp/c/a.js", "/ws/a.js", "node");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].path, "/ws/a.js");
  EXPECT_EQ(d[0].diag.line, 3u);
  EXPECT_EQ(d[0].diag.message, "missing ) after argument list");
}

TEST(CheckOutput, AFailureWithNothingParsableIsStillAnError) {
  auto d = ParseCheckOutput("\n  something odd happened\nmore\n", 2, "/tmp/c/a.x", "/ws/a.x", "check");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].path, "/ws/a.x");
  EXPECT_EQ(d[0].diag.severity, 1u);
  EXPECT_EQ(d[0].diag.message, "  something odd happened");
  EXPECT_TRUE(ParseCheckOutput("all fine\n", 0, "/tmp/c/a.x", "/ws/a.x", "check").empty());
}

TEST(CheckOutput, SplitsCommandLinesLikeAShell) {
  EXPECT_EQ(SplitCommandLine(R"(g++ -DX="a b" 'c d' e\ f  -I/x)"),
            (std::vector<std::string>{"g++", "-DX=a b", "c d", "e f", "-I/x"}));
  EXPECT_TRUE(SplitCommandLine("   ").empty());
}

TEST(CheckOutput, CompileDbEntryBecomesASyntaxCheck) {
  std::string db = R"([
    {"directory": "/ws/build", "file": "/ws/other.cc", "command": "g++ -c /ws/other.cc"},
    {"directory": "/ws/build", "file": "../src/a.cc",
     "command": "/usr/bin/g++ -DFOO -I/ws/include -std=c++20 -o obj/a.o -c ../src/a.cc"}
  ])";
  std::string dir;
  auto argv = SyntaxCheckFromCompileDb(db, "/ws/src/a.cc", "/tmp/c/a.cc", &dir);
  EXPECT_EQ(argv, (std::vector<std::string>{"/usr/bin/g++", "-fsyntax-only", "-DFOO", "-I/ws/include", "-std=c++20",
                                            "/tmp/c/a.cc"}));
  EXPECT_EQ(dir, "/ws/build");
  std::string args_db =
      R"([{"directory": "/ws", "file": "/ws/b.cc", "arguments": ["cc", "-c", "/ws/b.cc", "-o", "b.o"]}])";
  EXPECT_EQ(SyntaxCheckFromCompileDb(args_db, "/ws/b.cc", "/t/b.cc", &dir),
            (std::vector<std::string>{"cc", "-fsyntax-only", "/t/b.cc"}));
  EXPECT_TRUE(SyntaxCheckFromCompileDb(args_db, "/ws/none.cc", "/t/x.cc", &dir).empty());
  EXPECT_TRUE(SyntaxCheckFromCompileDb("not json", "/ws/b.cc", "/t/x.cc", &dir).empty());
}

}  // namespace
}  // namespace odin

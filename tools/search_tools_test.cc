#include "tools/search_tools.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "tools/tool_input.h"

#include "base/file_util.h"
#include "odin/v1/worker.pb.h"
#include "tools/file_tool_args.h"

namespace odin {
namespace {

class SearchToolsTest : public ::testing::Test {
 protected:
  void SetUp() override { ws_ = *RealPath(*MakeTempDir("odin-search")); }
  void TearDown() override { RemoveTree(ws_); }
  v1::ToolRequest Req(const std::string& tool, const std::string& args) {
    v1::ToolRequest r;
    r.set_tool(tool);
    // The typed input, as the coordinator makes it at Submit.
    StatusOr<v1::ToolInput> input = ParseToolInput(tool, ParseJson(args));
    EXPECT_TRUE(input.ok()) << input.status().ToString();
    if (input.ok()) *r.mutable_input() = std::move(*input);
    return r;
  }
  std::string ws_;
};

TEST_F(SearchToolsTest, GrepCommandLines) {
  auto argv = PlanSearch(Req(kGrepTool, R"({"pattern":"foo","-i":true,"glob":"*.cc","type":"cpp"})"), ws_, "rg");
  ASSERT_TRUE(argv.ok());
  EXPECT_EQ(*argv, (std::vector<std::string>{"rg", "--no-config", "--files-with-matches", "--null", "-i", "--glob",
                                             "*.cc", "--type", "cpp", "-e", "foo", "--", ws_}));
  auto content =
      PlanSearch(Req(kGrepTool, R"({"pattern":"x","output_mode":"content","-C":2,"multiline":true})"), ws_, "rg");
  EXPECT_EQ(*content, (std::vector<std::string>{"rg", "--no-config", "--json", "-C", "2", "-U", "--multiline-dotall",
                                                "-e", "x", "--", ws_}));
  EXPECT_FALSE(PlanSearch(Req(kGrepTool, R"({"pattern":"x","path":"../out"})"), ws_, "rg").ok());
  EXPECT_FALSE(PlanSearch(Req(kGrepTool, R"({"pattern":"x","path":"missing"})"), ws_, "rg").ok());
}

// What a Read deny rule hides never shows in a search, in any output mode.
TEST_F(SearchToolsTest, WhatReadMayNotReadIsLeftOutOfEveryResult) {
  std::string env = ws_ + "/sub/.env", ok = ws_ + "/a.txt";
  for (const char* mode : {"files_with_matches", "count", "content"}) {
    v1::ToolRequest req = Req(kGrepTool, std::string(R"({"pattern":"TOKEN","output_mode":")") + mode + "\"}");
    req.add_unreadable(ws_ + "/**/.env");
    std::string rg;
    if (std::string(mode) == "content") {
      for (const std::string& f : {env, ok}) {
        rg += R"({"type":"match","data":{"path":{"text":")" + f +
              R"("},"lines":{"text":"TOKEN=1\n"},"line_number":1,"submatches":[]}})" + "\n";
      }
    } else if (std::string(mode) == "count") {
      rg = env + std::string("\0", 1) + "1\n" + ok + std::string("\0", 1) + "1\n";
    } else {
      rg = env + std::string("\0", 1) + ok + std::string("\0", 1);
    }
    v1::ToolResult r;
    std::string text = FinishSearch(req, ws_, rg, "", 0, false, &r);
    EXPECT_EQ(text.find(".env"), std::string::npos) << mode << ": " << text;
    EXPECT_NE(text.find("a.txt"), std::string::npos) << mode << ": " << text;
  }
  v1::ToolRequest glob = Req(kGlobTool, R"({"pattern":"**/*"})");
  glob.add_unreadable(ws_ + "/sub");
  v1::ToolResult r;
  std::string text = FinishSearch(glob, ws_, env + std::string("\0", 1) + ok + std::string("\0", 1), "", 0, false, &r);
  EXPECT_EQ(text, "a.txt\n");
}

TEST_F(SearchToolsTest, ContentOutputShowsLinesAndRecordsThemAsRead) {
  ASSERT_TRUE(WriteFileAtomic(ws_ + "/f.txt", "a\nhello world\nb\nc\nd\nhello\n").ok());
  std::string f = ws_ + "/f.txt";
  std::string rg = R"({"type":"begin","data":{"path":{"text":")" + f +
                   R"("}}})"
                   "\n"
                   R"({"type":"context","data":{"path":{"text":")" +
                   f +
                   R"("},"lines":{"text":"a\n"},"line_number":1}})"
                   "\n"
                   R"({"type":"match","data":{"path":{"text":")" +
                   f +
                   R"("},"lines":{"text":"hello world\n"},"line_number":2}})"
                   "\n"
                   R"({"type":"context","data":{"path":{"text":")" +
                   f +
                   R"("},"lines":{"text":"b\n"},"line_number":3}})"
                   "\n"
                   R"({"type":"context","data":{"path":{"text":")" +
                   f +
                   R"("},"lines":{"text":"d\n"},"line_number":5}})"
                   "\n"
                   R"({"type":"match","data":{"path":{"text":")" +
                   f +
                   R"("},"lines":{"text":"hello\n"},"line_number":6}})"
                   "\n";
  v1::ToolRequest req = Req(kGrepTool, R"({"pattern":"hello","output_mode":"content","-n":true,"-C":1})");
  v1::ToolResult r;
  std::string text = FinishSearch(req, ws_, rg, "", 0, false, &r);
  EXPECT_EQ(text, "f.txt-1-a\nf.txt:2:hello world\nf.txt-3-b\n--\nf.txt-5-d\nf.txt:6:hello\n");
  ASSERT_EQ(r.files_read_size(), 1);
  const v1::FileSnapshot& s = r.files_read(0);
  EXPECT_FALSE(s.full());
  ASSERT_EQ(s.segments_size(), 2);
  EXPECT_EQ(s.segments(0).start_line(), 1u);
  EXPECT_EQ(s.segments(0).end_line(), 3u);
  EXPECT_EQ(s.segments(0).content(), "a\nhello world\nb\n");
  EXPECT_EQ(s.segments(1).start_line(), 5u);
}

TEST_F(SearchToolsTest, LinesThatChangedSinceRgShowedThemAreNotRead) {
  // rg showed "old" on line 2, but the file now has "new" there.
  ASSERT_TRUE(WriteFileAtomic(ws_ + "/f.txt", "a\nnew\nc\n").ok());
  std::string f = ws_ + "/f.txt";
  std::string rg = R"({"type":"match","data":{"path":{"text":")" + f +
                   R"("},"lines":{"text":"a\n"},"line_number":1}})"
                   "\n"
                   R"({"type":"match","data":{"path":{"text":")" +
                   f +
                   R"("},"lines":{"text":"old\n"},"line_number":2}})"
                   "\n";
  v1::ToolResult r;
  FinishSearch(Req(kGrepTool, R"({"pattern":".","output_mode":"content"})"), ws_, rg, "", 0, false, &r);
  ASSERT_EQ(r.files_read_size(), 1);
  ASSERT_EQ(r.files_read(0).segments_size(), 1);
  EXPECT_EQ(r.files_read(0).segments(0).end_line(), 1u);
}

TEST_F(SearchToolsTest, OffsetAndLimitShowOneRangeOfOneFile) {
  ASSERT_TRUE(WriteFileAtomic(ws_ + "/f.txt", "x1\nx2\nx3\nx4\n").ok());
  std::string f = ws_ + "/f.txt", rg;
  for (int i = 1; i <= 4; ++i) {
    rg += R"({"type":"match","data":{"path":{"text":")" + f + R"("},"lines":{"text":"x)" + std::to_string(i) +
          R"(\n"},"line_number":)" + std::to_string(i) + "}}\n";
  }
  v1::ToolResult r;
  std::string text = FinishSearch(
      Req(kGrepTool, R"({"pattern":"x","path":"f.txt","output_mode":"content","offset":2,"limit":2,"-n":true})"), ws_,
      rg, "", 0, false, &r);
  EXPECT_EQ(text, "f.txt:2:x2\nf.txt:3:x3\n");
  EXPECT_EQ(r.files_read(0).segments(0).start_line(), 2u);
  EXPECT_EQ(r.files_read(0).segments(0).end_line(), 3u);
}

TEST_F(SearchToolsTest, FilesWithMatchesAndCountAndHeadLimit) {
  std::string rg = ws_ + "/a\0" + ws_ + "/b\0";
  rg = ws_ + "/a" + std::string(1, '\0') + ws_ + "/b" + std::string(1, '\0');
  v1::ToolResult r;
  EXPECT_EQ(FinishSearch(Req(kGrepTool, R"({"pattern":"x"})"), ws_, rg, "", 0, false, &r), "Found 2 files\na\nb\n");
  v1::ToolResult limited;
  EXPECT_EQ(FinishSearch(Req(kGrepTool, R"({"pattern":"x","head_limit":1})"), ws_, rg, "", 0, false, &limited),
            "Found 2 files\na\n(showing the first 1)\n");
  std::string counts = ws_ + "/a" + std::string(1, '\0') + "3\n" + ws_ + "/b" + std::string(1, '\0') + "1\n";
  v1::ToolResult c;
  EXPECT_EQ(FinishSearch(Req(kGrepTool, R"({"pattern":"x","output_mode":"count"})"), ws_, counts, "", 0, false, &c),
            "a:3\nb:1\nFound 4 matching lines in 2 files\n");
}

TEST_F(SearchToolsTest, RgErrorsBecomeToolErrors) {
  v1::ToolResult r;
  std::string text =
      FinishSearch(Req(kGrepTool, R"({"pattern":"("})"), ws_, "", "rg: regex parse error:\n    (\n", 2, false, &r);
  EXPECT_EQ(r.status(), v1::TOOL_STATUS_ERROR);
  EXPECT_EQ(text, "Error: Grep: rg: rg: regex parse error:\n");
  v1::ToolResult none;
  EXPECT_EQ(FinishSearch(Req(kGrepTool, R"({"pattern":"zz"})"), ws_, "", "", 1, false, &none), "No files found\n");
}

TEST_F(SearchToolsTest, LsBuildsATree) {
  std::string rg = ws_ + "/src/a.cc" + std::string(1, '\0') + ws_ + "/src/sub/b.cc" + std::string(1, '\0') + ws_ +
                   "/README" + std::string(1, '\0');
  v1::ToolResult r;
  std::string text = FinishSearch(Req(kLsTool, R"({"path":"."})"), ws_, rg, "", 0, false, &r);
  EXPECT_EQ(text, "- ./\n  - README\n  - src/\n    - a.cc\n    - sub/\n      - b.cc\n");
}

}  // namespace
}  // namespace odin

#include "tools/file_tools.h"

#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "tools/tool_input.h"
#include "tools/tool_result.h"

#include "base/file_util.h"
#include "base/sha256.h"
#include "odin/v1/worker.pb.h"
#include "tools/file_tool_args.h"
#include "tools/text_file.h"

namespace odin {
namespace {

class FileToolsTest : public ::testing::Test {
 protected:
  void SetUp() override { ws_ = *RealPath(*MakeTempDir("odin-filetools")); }
  void TearDown() override { RemoveTree(ws_); }

  void Put(const std::string& rel, const std::string& content) {
    ASSERT_TRUE(MakeDirs(DirName(ws_ + "/" + rel)).ok());
    ASSERT_TRUE(WriteFileAtomic(ws_ + "/" + rel, content).ok());
  }
  std::string Get(const std::string& rel) { return *ReadFileToString(ws_ + "/" + rel); }

  // Runs a tool; expectation from a full read of the current file unless given.
  v1::ToolResult Run(const std::string& tool, const std::string& args, std::string* text = nullptr,
                     const v1::FileExpectation* expect = nullptr) {
    v1::ToolRequest req;
    req.set_execution_id("ex_test");
    req.set_tool(tool);
    v1::ToolResult r;
    // The typed input, as the coordinator makes it at Submit (EditSymbol's
    // with the span it resolves).
    StatusOr<v1::ToolInput> input = ParseToolInput(tool, ParseJson(args));
    if (tool == kEditSymbolTool) {
      StatusOr<EditSymbolArgs> resolved = ParseEditSymbolArgs(args, true);
      input = resolved.ok() ? StatusOr<v1::ToolInput>(v1::ToolInput()) : StatusOr<v1::ToolInput>(resolved.status());
      if (resolved.ok()) SetInput(*resolved, &*input);
    }
    if (!input.ok()) {
      std::string t = FailResult(&r, v1::TOOL_STATUS_ERROR, input.status());
      if (text != nullptr) *text = t;
      return r;
    }
    *req.mutable_input() = std::move(*input);
    if (expect != nullptr) *req.mutable_expect() = *expect;
    std::string t = RunFileTool(req, ws_, &r);
    if (text != nullptr) *text = t;
    return r;
  }
  v1::FileExpectation ReadAll(const std::string& rel) {
    v1::FileExpectation e;
    e.set_sha256(Sha256Hex(Get(rel)));
    e.set_full_read(true);
    return e;
  }

  std::string ws_;
};

TEST_F(FileToolsTest, ReadNumbersLinesAndReportsTheWholeFile) {
  Put("a.txt", "one\ntwo\n");
  std::string text;
  v1::ToolResult r = Run(kReadTool, R"({"file_path":"a.txt"})", &text);
  EXPECT_EQ(r.status(), v1::TOOL_STATUS_OK);
  EXPECT_EQ(text, "     1\tone\n     2\ttwo\n");
  ASSERT_EQ(r.files_read_size(), 1);
  EXPECT_TRUE(r.files_read(0).full());
  EXPECT_EQ(r.files_read(0).content(), "one\ntwo\n");
  EXPECT_EQ(r.files_read(0).sha256(), Sha256Hex("one\ntwo\n"));
  EXPECT_EQ(r.files_read(0).path(), ws_ + "/a.txt");
}

TEST_F(FileToolsTest, PartialReadIsASegment) {
  std::string content;
  for (int i = 1; i <= 10; ++i) content += "l" + std::to_string(i) + "\n";
  Put("a.txt", content);
  std::string text;
  v1::ToolResult r = Run(kReadTool, R"({"file_path":"a.txt","offset":4,"limit":3})", &text);
  EXPECT_EQ(text,
            "     4\tl4\n     5\tl5\n     6\tl6\n(Showing lines 4-6 of 10. Use offset and limit to read more.)\n");
  const v1::FileSnapshot& s = r.files_read(0);
  EXPECT_FALSE(s.full());
  ASSERT_EQ(s.segments_size(), 1);
  EXPECT_EQ(s.segments(0).start_line(), 4u);
  EXPECT_EQ(s.segments(0).end_line(), 6u);
  EXPECT_EQ(s.segments(0).content(), "l4\nl5\nl6\n");
  EXPECT_EQ(s.total_lines(), 10u);
}

TEST_F(FileToolsTest, LongFilesShowTheFirst2000Lines) {
  std::string content;
  for (int i = 1; i <= 2500; ++i) content += "x\n";
  Put("long.txt", content);
  std::string text;
  v1::ToolResult r = Run(kReadTool, R"({"file_path":"long.txt"})", &text);
  EXPECT_EQ(r.files_read(0).segments(0).end_line(), 2000u);
  EXPECT_NE(text.find("(Showing lines 1-2000 of 2500."), std::string::npos);
}

TEST_F(FileToolsTest, ReadRefusesWhatItCannotShow) {
  Put("bin.dat", std::string("\x7f"
                             "ELF\0\0\0",
                             7));
  Put("empty.txt", "");
  ASSERT_TRUE(MakeDirs(ws_ + "/dir").ok());
  std::string text;
  v1::ToolResult missing = Run(kReadTool, R"({"file_path":"nope.txt"})", &text);
  EXPECT_EQ(missing.error().message(), "Read: nope.txt does not exist");
  EXPECT_EQ(Run(kReadTool, R"({"file_path":"dir"})").error().code(), v1::CODE_INVALID_ARGUMENT);
  v1::ToolResult bin = Run(kReadTool, R"({"file_path":"bin.dat"})", &text);
  EXPECT_EQ(bin.status(), v1::TOOL_STATUS_ERROR);
  EXPECT_NE(text.find("binary file (7 bytes)"), std::string::npos);
  EXPECT_EQ(bin.files_read_size(), 0);
  EXPECT_FALSE(Run(kReadTool, R"({"file_path":"/etc/passwd"})").error().message().empty());
  v1::ToolResult empty = Run(kReadTool, R"({"file_path":"empty.txt"})", &text);
  EXPECT_EQ(empty.status(), v1::TOOL_STATUS_OK);
  EXPECT_EQ(text, "(empty.txt is empty)\n");
  EXPECT_EQ(Run(kReadTool, R"({"file_path":"empty.txt","offset":"x"})").status(), v1::TOOL_STATUS_ERROR);
}

TEST_F(FileToolsTest, FilesOverTheSizeCapAreRefused) {
  Put("huge.txt", std::string(kMaxFileBytes + 1, 'a'));
  v1::ToolResult r = Run(kReadTool, R"({"file_path":"huge.txt"})");
  EXPECT_EQ(r.error().code(), v1::CODE_RESOURCE_EXHAUSTED);
  EXPECT_NE(r.error().message().find("over the limit"), std::string::npos);
}

TEST_F(FileToolsTest, WriteCreatesWithParentsAndRecordsTheChange) {
  v1::FileExpectation none;
  none.set_must_not_exist(true);
  std::string text;
  v1::ToolResult r = Run(kWriteFileTool, R"({"file_path":"new/dir/f.txt","content":"hi\n"})", &text, &none);
  ASSERT_EQ(r.status(), v1::TOOL_STATUS_OK) << text;
  EXPECT_EQ(Get("new/dir/f.txt"), "hi\n");
  EXPECT_TRUE(r.sha256_before().empty());
  EXPECT_EQ(r.file_written().sha256(), Sha256Hex("hi\n"));
  EXPECT_EQ(r.diff(), "--- a/new/dir/f.txt\n+++ b/new/dir/f.txt\n@@ -0,0 +1,1 @@\n+hi\n");
  // It exists now: a second "create" is refused and changes nothing.
  v1::ToolResult again = Run(kWriteFileTool, R"({"file_path":"new/dir/f.txt","content":"other\n"})", &text, &none);
  EXPECT_EQ(again.status(), v1::TOOL_STATUS_REJECTED);
  EXPECT_EQ(Get("new/dir/f.txt"), "hi\n");
}

TEST_F(FileToolsTest, EditKeepsModeAndRefusesAStaleHash) {
  Put("s.sh", "echo one\n");
  ASSERT_EQ(chmod((ws_ + "/s.sh").c_str(), 0751), 0);
  v1::FileExpectation read = ReadAll("s.sh");
  Put("s.sh", "echo changed behind our back\n");
  ASSERT_EQ(chmod((ws_ + "/s.sh").c_str(), 0751), 0);
  std::string text;
  v1::ToolResult stale =
      Run(kEditTool, R"({"file_path":"s.sh","old_string":"echo","new_string":"printf"})", &text, &read);
  EXPECT_EQ(stale.status(), v1::TOOL_STATUS_REJECTED);
  EXPECT_NE(text.find("changed since you read it"), std::string::npos);
  EXPECT_EQ(Get("s.sh"), "echo changed behind our back\n");

  v1::FileExpectation fresh = ReadAll("s.sh");
  v1::ToolResult ok =
      Run(kEditTool, R"({"file_path":"s.sh","old_string":"echo","new_string":"printf"})", &text, &fresh);
  ASSERT_EQ(ok.status(), v1::TOOL_STATUS_OK) << text;
  EXPECT_EQ(Get("s.sh"), "printf changed behind our back\n");
  struct stat st;
  ASSERT_EQ(stat((ws_ + "/s.sh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0751u);
  EXPECT_EQ(ok.sha256_before(), fresh.sha256());
}

TEST_F(FileToolsTest, EditThroughASymlinkChangesTheTargetAndKeepsTheLink) {
  Put("real.txt", "value = 1\n");
  ASSERT_EQ(symlink("real.txt", (ws_ + "/link.txt").c_str()), 0);
  v1::FileExpectation read = ReadAll("real.txt");
  v1::ToolResult r = Run(kEditTool, R"({"file_path":"link.txt","old_string":"1","new_string":"2"})", nullptr, &read);
  ASSERT_EQ(r.status(), v1::TOOL_STATUS_OK) << r.error().message();
  EXPECT_EQ(Get("real.txt"), "value = 2\n");
  struct stat st;
  ASSERT_EQ(lstat((ws_ + "/link.txt").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

TEST_F(FileToolsTest, CrlfAndNonUtf8FilesAreEditedByteExactly) {
  Put("w.txt", "first\r\nsecond \xe9\r\nthird\r\n");
  v1::FileExpectation read = ReadAll("w.txt");
  v1::ToolResult r =
      Run(kEditTool, R"({"file_path":"w.txt","old_string":"first\nsecond","new_string":"1st\n2nd"})", nullptr, &read);
  ASSERT_EQ(r.status(), v1::TOOL_STATUS_OK) << r.error().message();
  EXPECT_EQ(Get("w.txt"), "1st\r\n2nd \xe9\r\nthird\r\n");
}

TEST_F(FileToolsTest, EditOfAMissingFileOrBinaryFileIsAnError) {
  v1::ToolResult missing = Run(kEditTool, R"({"file_path":"none.txt","old_string":"a","new_string":"b"})");
  EXPECT_EQ(missing.error().message(), "EditTool: none.txt does not exist; use WriteFile to create it");
  Put("b.bin", std::string("a\0b", 3));
  EXPECT_EQ(Run(kEditTool, R"({"file_path":"b.bin","old_string":"a","new_string":"c"})").status(),
            v1::TOOL_STATUS_ERROR);
  EXPECT_EQ(Get("b.bin"), std::string("a\0b", 3));
}

TEST_F(FileToolsTest, PartialReadLimitsWhereEditsMayLand) {
  Put("p.txt", "a\nb\nc\nd\n");
  v1::FileExpectation e = ReadAll("p.txt");
  e.set_full_read(false);
  v1::LineRange* range = e.add_read_ranges();
  range->set_start(1);
  range->set_end(2);
  std::string text;
  v1::ToolResult out = Run(kEditTool, R"({"file_path":"p.txt","old_string":"d","new_string":"D"})", &text, &e);
  EXPECT_EQ(out.status(), v1::TOOL_STATUS_REJECTED);
  EXPECT_NE(text.find("line 4 of p.txt, which you have not read (you read lines 1-2)"), std::string::npos) << text;
  EXPECT_EQ(Get("p.txt"), "a\nb\nc\nd\n");
  EXPECT_EQ(Run(kEditTool, R"({"file_path":"p.txt","old_string":"b","new_string":"B"})", &text, &e).status(),
            v1::TOOL_STATUS_OK);
}

TEST_F(FileToolsTest, ConcurrentEditsFromOneReadLandOnce) {
  Put("c.txt", "counter = 0\n");
  v1::FileExpectation read = ReadAll("c.txt");
  v1::ToolResult a, b;
  std::thread t1(
      [&] { a = Run(kEditTool, R"({"file_path":"c.txt","old_string":"0","new_string":"1"})", nullptr, &read); });
  std::thread t2(
      [&] { b = Run(kEditTool, R"({"file_path":"c.txt","old_string":"0","new_string":"2"})", nullptr, &read); });
  t1.join();
  t2.join();
  // Both read the same version: exactly one may land; the other sees the change.
  int landed = (a.status() == v1::TOOL_STATUS_OK) + (b.status() == v1::TOOL_STATUS_OK);
  int refused = (a.status() == v1::TOOL_STATUS_REJECTED) + (b.status() == v1::TOOL_STATUS_REJECTED);
  EXPECT_EQ(landed, 1);
  EXPECT_EQ(refused, 1);
  std::string now = Get("c.txt");
  EXPECT_TRUE(now == "counter = 1\n" || now == "counter = 2\n") << now;
}

}  // namespace
}  // namespace odin

#include "gates/read_before_edit_gate.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/json_input.h"
#include "base/sha256.h"
#include "gates/mode_gate.h"
#include "odin/v1/worker.pb.h"
#include "tools/tool_input.h"

namespace odin {
namespace {

class ReadBeforeEditGateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ws_ = *RealPath(*MakeTempDir("odin-gate"));
    ASSERT_TRUE(WriteFileAtomic(ws_ + "/a.txt", "1\n2\n3\n").ok());
    FileCacheOptions o;
    o.root = ws_;  // the cache looks at the workspace's files through the layer
    cache_ = FileCache(o, &clock_);
  }
  void TearDown() override { RemoveTree(ws_); }

  Status Check(const std::string& tool, const std::string& args) {
    expect_.Clear();
    std::string given;
    StatusOr<v1::ToolInput> input = ParseToolInput(tool, ParseJson(args));
    if (!input.ok()) return input.status();
    StatusOr<std::string> path = ResolveWriteTarget(*input, ws_, &given);
    if (!path.ok()) return path.status();
    path_ = *path;
    return CheckReadBeforeEdit(tool, path_, ws_, &cache_, &expect_);
  }
  void ReadWhole() {
    std::string content = *ReadFileToString(ws_ + "/a.txt");
    v1::FileSnapshot s;
    s.set_path(ws_ + "/a.txt");
    s.set_sha256(Sha256Hex(content));
    s.set_size_bytes(content.size());
    s.set_total_lines(3);
    s.set_full(true);
    s.set_content(content);
    cache_.RecordRead(s);
  }

  FakeClock clock_;
  FileCache cache_{FileCacheOptions(), &clock_};
  std::string ws_, path_;
  v1::FileExpectation expect_;
};

TEST_F(ReadBeforeEditGateTest, EditWithoutAReadIsRefusedNamingTheFile) {
  Status s = Check("EditTool", R"({"file_path":"a.txt","old_string":"1","new_string":"x"})");
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("you have not read a.txt. Read it first"), std::string::npos) << s.message();
}

TEST_F(ReadBeforeEditGateTest, EditAfterAReadCarriesTheHashToTheWorker) {
  ReadWhole();
  ASSERT_TRUE(Check("EditTool", R"({"file_path":"a.txt","old_string":"1","new_string":"x"})").ok());
  EXPECT_EQ(expect_.sha256(), Sha256Hex("1\n2\n3\n"));
  EXPECT_TRUE(expect_.full_read());
  EXPECT_EQ(path_, ws_ + "/a.txt");
}

TEST_F(ReadBeforeEditGateTest, PartialReadSendsItsRanges) {
  v1::FileSnapshot s;
  s.set_path(ws_ + "/a.txt");
  s.set_sha256(Sha256Hex("1\n2\n3\n"));
  s.set_size_bytes(6);
  s.set_total_lines(3);
  v1::Segment* seg = s.add_segments();
  seg->set_start_line(2);
  seg->set_end_line(2);
  seg->set_content("2\n");
  cache_.RecordRead(s);
  ASSERT_TRUE(Check("EditTool", R"({"file_path":"a.txt","old_string":"2","new_string":"x"})").ok());
  EXPECT_FALSE(expect_.full_read());
  ASSERT_EQ(expect_.read_ranges_size(), 1);
  EXPECT_EQ(expect_.read_ranges(0).start(), 2u);
  // WriteFile replaces it all: a partial read is not enough.
  Status w = Check("WriteFile", R"({"file_path":"a.txt","content":"x"})");
  EXPECT_EQ(w.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(w.message().find("you have read only lines 2"), std::string::npos) << w.message();
}

TEST_F(ReadBeforeEditGateTest, FileChangedOnDiskSinceTheReadIsRefused) {
  ReadWhole();
  ASSERT_TRUE(WriteFileAtomic(ws_ + "/a.txt", "changed\n").ok());
  Status s = Check("EditTool", R"({"file_path":"a.txt","old_string":"changed","new_string":"x"})");
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("a.txt changed since you read it"), std::string::npos);
  EXPECT_EQ(cache_.Find(ws_ + "/a.txt"), nullptr);  // the stale entry is dropped
}

TEST_F(ReadBeforeEditGateTest, CreatingANewFileNeedsNoRead) {
  ASSERT_TRUE(Check("WriteFile", R"({"file_path":"new.txt","content":"x"})").ok());
  EXPECT_TRUE(expect_.must_not_exist());
  // Overwriting an existing file does.
  EXPECT_EQ(Check("WriteFile", R"({"file_path":"a.txt","content":"x"})").code(), StatusCode::kFailedPrecondition);
}

TEST_F(ReadBeforeEditGateTest, BadInputIsAnErrorNotARefusal) {
  EXPECT_EQ(Check("EditTool", R"({"file_path":"missing.txt","old_string":"a","new_string":"b"})").code(),
            StatusCode::kNotFound);
  EXPECT_EQ(Check("EditTool", R"({"file_path":"a.txt"})").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Check("EditTool", R"({"file_path":"../x","old_string":"a","new_string":"b"})").code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(MakeDirs(ws_ + "/d").ok());
  EXPECT_EQ(Check("WriteFile", R"({"file_path":"d","content":"x"})").code(), StatusCode::kInvalidArgument);
}

TEST(ModeGateTest, WritingToolsOnlyInEditMode) {
  EXPECT_TRUE(CheckMode("EditTool", Mode::kEdit).ok());
  EXPECT_EQ(CheckMode("EditTool", Mode::kAsk).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(CheckMode("WriteFile", Mode::kPlan).code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(CheckMode("Read", Mode::kAsk).ok());
  EXPECT_TRUE(CheckMode("ExecuteCommand", Mode::kPlan).ok());
  EXPECT_EQ(CheckMode("Frobnicate", Mode::kEdit).code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace odin

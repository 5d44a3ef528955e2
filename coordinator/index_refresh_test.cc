#include "coordinator/index_refresh.h"

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "index/extract.h"
#include "index/index_db.h"
#include "odin/v1/worker.pb.h"
#include "workers/index_parse.h"

namespace odin {
namespace {

// The refresh with its parses run by the workers' own IndexParse code, in
// this process, on real files (the coordinator sends them to read-only
// workers instead).
class IndexRefreshTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ws_ = *RealPath(*MakeTempDir("odin-index-refresh"));
    ASSERT_TRUE(MakeDirs(ws_ + "/.odin").ok());
    Put("a.py", "def alpha():\n    return 1\n");
    IndexRefresh::Port port;
    port.parse = [this](const std::vector<std::string>& paths, std::function<void(const v1::ToolResult&)> done) {
      ++parses_;
      if (on_parse) on_parse();
      v1::ToolRequest req;
      for (const std::string& p : paths) req.mutable_input()->mutable_index_parse()->add_paths(p);
      v1::ToolResult r;
      r.set_status(v1::TOOL_STATUS_OK);
      if (fail_parses) {
        r.set_status(v1::TOOL_STATUS_CRASHED);
      } else {
        RunIndexParse(
            req, ws_, &extractor_, [] {}, &r);
      }
      done(r);
    };
    port.changes_watched = [this] { return watched; };
    port.note = [](const std::string&) {};
    port.resume = [this](const std::vector<std::string>& ids, const Status& s) {
      for (const std::string& id : ids) resumed_.push_back(id + (s.ok() ? ":ok" : ":" + s.ToString()));
    };
    refresh_ = std::make_unique<IndexRefresh>(ws_, ws_ + "/.odin/index.db", 2, std::move(port));
  }
  void TearDown() override {
    refresh_.reset();
    RemoveTree(ws_);
  }
  void Put(const std::string& rel, const std::string& content) {
    ASSERT_TRUE(WriteFileAtomic(ws_ + "/" + rel, content).ok());
  }
  size_t Found(const std::string& name) {
    StatusOr<std::vector<index::SymbolRow>> rows = refresh_->db()->FindSymbols(name, false, std::nullopt, "", 10);
    return rows.ok() ? rows->size() : 0;
  }
  std::pair<Status, size_t> RefreshNow(bool rebuild = false) {
    std::pair<Status, size_t> out{Status::Internal("refresh", "never ended"), 0};
    refresh_->Refresh(rebuild, [&out](const Status& s, size_t n) { out = {s, n}; });
    return out;
  }

  std::string ws_;
  index::Extractor extractor_;
  std::unique_ptr<IndexRefresh> refresh_;
  int parses_ = 0;
  bool watched = false;
  bool fail_parses = false;
  std::function<void()> on_parse;
  std::vector<std::string> resumed_;
};

TEST_F(IndexRefreshTest, AFirstRefreshWalksTheTreeAndTheNextParsesOnlyWhatChanged) {
  EXPECT_EQ(refresh_->db(), nullptr);  // opened by the first refresh
  auto [first, parsed] = RefreshNow();
  ASSERT_TRUE(first.ok()) << first.ToString();
  EXPECT_EQ(parsed, 1u);
  EXPECT_EQ(Found("alpha"), 1u);

  watched = true;  // the tracker's word from now on
  auto [nothing, none] = RefreshNow();
  EXPECT_TRUE(nothing.ok());
  EXPECT_EQ(none, 0u);

  Put("a.py", "def beta():\n    return 2\n");
  refresh_->MarkDirty(ws_ + "/a.py");  // absolute, as a file tool's write names it
  auto [again, reparsed] = RefreshNow();
  ASSERT_TRUE(again.ok()) << again.ToString();
  EXPECT_EQ(reparsed, 1u);
  EXPECT_EQ(Found("alpha"), 0u);
  EXPECT_EQ(Found("beta"), 1u);
  refresh_->MarkDirty("/elsewhere/a.py");  // outside the workspace: ignored
  EXPECT_EQ(RefreshNow().second, 0u);
}

TEST_F(IndexRefreshTest, QueryCallsWaitForTheRefreshAndHearHowItWent) {
  refresh_->Wait("ex_q1");
  ASSERT_EQ(resumed_, std::vector<std::string>{"ex_q1:ok"});

  Put("b.py", "def gamma():\n    pass\n");
  refresh_->MarkDirty("b.py");
  fail_parses = true;
  refresh_->Wait("ex_q2");
  ASSERT_EQ(resumed_.size(), 2u);
  EXPECT_NE(resumed_[1].find("a parse of files failed"), std::string::npos) << resumed_[1];
}

TEST_F(IndexRefreshTest, AFileChangedWhileARefreshRunsIsParsedInAnotherRound) {
  ASSERT_TRUE(RefreshNow().first.ok());
  watched = true;
  Put("a.py", "def delta():\n    pass\n");
  refresh_->MarkDirty("a.py");
  on_parse = [this] {
    on_parse = nullptr;  // once: a write that ended while the first batch was parsed
    Put("c.py", "def epsilon():\n    pass\n");
    refresh_->MarkDirty("c.py");
  };
  auto [status, parsed] = RefreshNow();
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(parsed, 2u);  // both rounds counted
  EXPECT_EQ(Found("delta"), 1u);
  EXPECT_EQ(Found("epsilon"), 1u);
}

TEST_F(IndexRefreshTest, TheRepositoryMapIsMadeOnceTheIndexIsUpToDate) {
  // alpha is used by two other files: on the map.
  Put("b.py", "from a import alpha\n\n\ndef main():\n    return alpha()\n");
  Put("c.py", "from a import alpha\n\n\ndef other():\n    return alpha()\n");
  EXPECT_EQ(refresh_->RepoMap(200), "");  // starts a refresh; this request goes with the last map
  std::string map = refresh_->RepoMap(200);
  EXPECT_NE(map.find("alpha"), std::string::npos) << map;
  int parses = parses_;
  EXPECT_EQ(refresh_->RepoMap(200), map);  // nothing changed: no refresh, the same map
  EXPECT_EQ(parses_, parses);
}

}  // namespace
}  // namespace odin

#include "coordinator/writers_lane.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace odin {
namespace {

using Kind = WritersLane::Kind;

class WritersLaneTest : public ::testing::Test {
 protected:
  void Arrive(const std::string& id, Kind kind, const std::string& agent) {
    callers_[id] = {kind, agent};
    lane_.Wait(id);
  }
  // What goes now, each entered as the coordinator does.
  std::vector<std::string> Pump() {
    std::vector<std::string> went;
    auto lookup = [this](const std::string& id) -> std::optional<WritersLane::Caller> {
      auto it = callers_.find(id);
      if (it == callers_.end()) return std::nullopt;
      return it->second;
    };
    while (std::optional<std::string> id = lane_.Next(lookup)) {
      lane_.Enter(*id, callers_.at(*id));
      went.push_back(*id);
    }
    return went;
  }

  WritersLane lane_;
  std::map<std::string, WritersLane::Caller> callers_;
};

TEST_F(WritersLaneTest, WritesRunTogetherAndACommandWaitsForThemAndRunsAlone) {
  Arrive("w1", Kind::kWrite, "main");
  Arrive("w2", Kind::kWrite, "main");
  Arrive("c1", Kind::kCommand, "main");
  Arrive("w3", Kind::kWrite, "main");  // behind the command: never overtakes it
  EXPECT_EQ(Pump(), (std::vector<std::string>{"w1", "w2"}));
  EXPECT_TRUE(lane_.WriterRunning());
  EXPECT_TRUE(lane_.Leave("w1"));
  EXPECT_TRUE(Pump().empty());
  EXPECT_TRUE(lane_.Leave("w2"));
  EXPECT_EQ(Pump(), std::vector<std::string>{"c1"});
  EXPECT_TRUE(lane_.CommandAloneRunning());
  EXPECT_TRUE(lane_.Leave("c1"));
  EXPECT_FALSE(lane_.Leave("c1"));  // once
  EXPECT_EQ(Pump(), std::vector<std::string>{"w3"});
}

TEST_F(WritersLaneTest, CommandsOverOverlaysRunSideBySideOnePerAgentInTheOrderItAsked) {
  Arrive("a1", Kind::kSharedCommand, "a");
  Arrive("a2", Kind::kSharedCommand, "a");  // a's second waits for its first
  Arrive("b1", Kind::kSharedCommand, "b");  // goes past a's second
  EXPECT_EQ(Pump(), (std::vector<std::string>{"a1", "b1"}));
  EXPECT_TRUE(lane_.Shared("a1"));
  EXPECT_FALSE(lane_.WriterRunning());  // the tracker's watches may go on
  Arrive("w", Kind::kWrite, "b");       // a write waits for every command
  Arrive("b2", Kind::kSharedCommand, "b");
  EXPECT_TRUE(Pump().empty());
  EXPECT_TRUE(lane_.Leave("b1"));
  // b2 came after the write, which waits: nothing overtakes it.
  EXPECT_TRUE(Pump().empty());
  EXPECT_TRUE(lane_.Leave("a1"));
  EXPECT_EQ(Pump(), std::vector<std::string>{"a2"});
  EXPECT_TRUE(lane_.Leave("a2"));
  EXPECT_EQ(Pump(), std::vector<std::string>{"w"});
  EXPECT_TRUE(lane_.Leave("w"));
  EXPECT_EQ(Pump(), std::vector<std::string>{"b2"});
}

TEST_F(WritersLaneTest, ACallGoneOrCancelledWhileWaitingHoldsNobodyUp) {
  Arrive("c1", Kind::kCommand, "main");
  EXPECT_EQ(Pump(), std::vector<std::string>{"c1"});
  Arrive("gone", Kind::kCommand, "main");
  Arrive("cancelled", Kind::kCommand, "main");
  Arrive("w", Kind::kWrite, "main");
  callers_.erase("gone");
  EXPECT_TRUE(lane_.Forget("cancelled"));
  EXPECT_FALSE(lane_.Forget("cancelled"));
  EXPECT_TRUE(lane_.Leave("c1"));
  EXPECT_EQ(Pump(), std::vector<std::string>{"w"});
}

TEST(FileWriteQueuesTest, OneWritePerFileInOrderAndARollbackGoesNext) {
  FileWriteQueues q;
  EXPECT_TRUE(q.Push("/w/a", "e1"));            // its turn now
  EXPECT_FALSE(q.Push("/w/a", "e2"));           // waits
  EXPECT_TRUE(q.Push("/w/b", "e3"));            // another file: at once
  EXPECT_FALSE(q.ForgetWaiting("/w/a", "e1"));  // in flight: stays
  q.PushNext("/w/a", "revert_e1");
  EXPECT_FALSE(q.PopFront("/w/a", "e2"));  // not its turn
  EXPECT_TRUE(q.PopFront("/w/a", "e1"));
  EXPECT_EQ(q.Front("/w/a"), "revert_e1");
  EXPECT_TRUE(q.PopFront("/w/a", "revert_e1"));
  EXPECT_FALSE(q.ForgetWaiting("/w/a", "e3"));  // queued on another file
  EXPECT_EQ(q.Front("/w/a"), "e2");
  EXPECT_TRUE(q.PopFront("/w/a", "e2"));
  EXPECT_EQ(q.Front("/w/a"), std::nullopt);
}

}  // namespace
}  // namespace odin

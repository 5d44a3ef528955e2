#include "planner/stall_detector.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

class StallDetectorTest : public ::testing::Test {
 protected:
  // A step of call `call` answering `result`, in workspace state `ws`.
  std::optional<StallDetection> Step(const std::string& call, const std::string& result, const std::string& ws = "w0",
                                     bool failed = false, const std::string& error = "") {
    StallStep s;
    s.execution_id = "ex" + std::to_string(++n_);
    s.call = call;
    s.label = call;
    s.result = result;
    s.failed = failed;
    s.error = error;
    s.workspace = ws;
    s.at = clock_.Now();
    clock_.Advance(seconds(1));
    return detector_.AddStep(s);
  }
  std::optional<StallDetection> Fail(const std::string& call, const std::string& result, const std::string& error,
                                     const std::string& ws = "w0") {
    return Step(call, result, ws, true, error);
  }
  // A turn of one step, ended with the workspace at ws_after.
  std::vector<StallDetection> Turn(const std::string& call, const std::string& result, const std::string& ws_after) {
    std::vector<StallDetection> out;
    if (auto d = Step(call, result, ws_)) out.push_back(*d);
    ws_ = ws_after;
    if (auto d = detector_.EndTurn(ws_after, clock_.Now())) out.push_back(*d);
    return out;
  }

  FakeClock clock_;
  StallOptions options_;
  StallDetector detector_{options_};
  int n_ = 0;
  std::string ws_ = "w0";
};

TEST_F(StallDetectorTest, TwoIdenticalCallsAreNothingTheThirdFires) {
  EXPECT_FALSE(Step("Read a", "r1"));
  EXPECT_FALSE(Step("Read a", "r1"));
  std::optional<StallDetection> d = Step("Read a", "r1");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->rule, "repeated_call");
  EXPECT_FALSE(d->stop);
  EXPECT_EQ(d->count, 3);
  EXPECT_EQ(d->execution_ids, (std::vector<std::string>{"ex1", "ex2", "ex3"}));
  EXPECT_EQ(d->span, seconds(2));
  EXPECT_NE(d->description.find("Read a"), std::string::npos);
}

TEST_F(StallDetectorTest, TheSameLoopAgainStops) {
  Step("Read a", "r1");
  Step("Read a", "r1");
  ASSERT_FALSE(Step("Read a", "r1")->stop);
  detector_.EndTurn("w0", clock_.Now());
  std::optional<StallDetection> d = Step("Read a", "r1");
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->stop);
  EXPECT_EQ(d->count, 4);
}

TEST_F(StallDetectorTest, TheSameLoopComingBackLaterStops) {
  Step("Read a", "r1");
  Step("Read a", "r1");
  ASSERT_FALSE(Step("Read a", "r1")->stop);
  detector_.EndTurn("w0", clock_.Now());
  EXPECT_FALSE(Step("Grep x", "g1"));
  EXPECT_FALSE(Step("Read a", "r1"));
  EXPECT_FALSE(Step("Read a", "r1"));
  std::optional<StallDetection> d = Step("Read a", "r1");
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->stop);
}

TEST_F(StallDetectorTest, ARepeatAfterTheWorkspaceChangedIsNotAStall) {
  EXPECT_FALSE(Step("make test", "fail", "w0"));
  EXPECT_FALSE(Step("make test", "fail", "w1"));
  EXPECT_FALSE(Step("make test", "fail", "w2"));
  EXPECT_FALSE(Step("make test", "fail", "w3"));
}

TEST_F(StallDetectorTest, ARepeatWhoseResultChangesIsNotAStall) {
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(Step("cat progress", "at " + std::to_string(i)));
}

TEST_F(StallDetectorTest, TheSameFailureThreeTimesFiresEvenWhenTheOutputDiffers) {
  EXPECT_FALSE(Fail("make", "out1", "no rule to make target"));
  EXPECT_FALSE(Fail("make", "out2", "no rule to make target"));
  std::optional<StallDetection> d = Fail("make", "out3", "no rule to make target");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->rule, "repeated_failure");
  EXPECT_EQ(d->count, 3);
}

TEST_F(StallDetectorTest, TheSameFailureAfterTheWorkspaceChangedIsNotAStall) {
  EXPECT_FALSE(Fail("make test", "out1", "1 test failed", "w0"));
  EXPECT_FALSE(Fail("make test", "out2", "1 test failed", "w1"));
  EXPECT_FALSE(Fail("make test", "out3", "1 test failed", "w2"));
  EXPECT_FALSE(Fail("make test", "out4", "1 test failed", "w3"));
}

TEST_F(StallDetectorTest, DifferentErrorsAreNotTheSameFailure) {
  EXPECT_FALSE(Fail("make", "o1", "e1", "w0"));
  EXPECT_FALSE(Fail("make", "o2", "e2", "w1"));
  EXPECT_FALSE(Fail("make", "o3", "e3", "w2"));
}

TEST_F(StallDetectorTest, AlternationFiresAtTheSixthStep) {
  EXPECT_FALSE(Step("Read a", "ra"));
  EXPECT_FALSE(Step("Read b", "rb"));
  EXPECT_FALSE(Step("Read a", "ra"));
  EXPECT_FALSE(Step("Read b", "rb"));
  EXPECT_FALSE(Step("Read a", "ra"));
  std::optional<StallDetection> d = Step("Read b", "rb");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->rule, "alternation");
  EXPECT_EQ(d->count, 6);
  EXPECT_EQ(d->execution_ids.front(), "ex1");
  // Going on, in a later turn, is the same loop: it stops.
  detector_.EndTurn("w0", clock_.Now());
  std::optional<StallDetection> again = Step("Read a", "ra");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->rule, "alternation");
  EXPECT_TRUE(again->stop);
}

TEST_F(StallDetectorTest, AlternationWithChangingResultsIsNotAStall) {
  for (int i = 0; i < 4; ++i) {
    EXPECT_FALSE(Step("Edit a", "e" + std::to_string(i), "w" + std::to_string(i)));
    EXPECT_FALSE(Step("make test", "t" + std::to_string(i), "w" + std::to_string(i)));
  }
}

TEST_F(StallDetectorTest, TheSameMessageThreeTimesFires) {
  EXPECT_FALSE(detector_.AddMessage("Done.", clock_.Now()));
  EXPECT_FALSE(detector_.AddMessage("Done.", clock_.Now()));
  std::optional<StallDetection> d = detector_.AddMessage("Done.", clock_.Now());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->rule, "repeated_message");
  EXPECT_FALSE(d->stop);
  std::optional<StallDetection> again = detector_.AddMessage("Done.", clock_.Now());
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->stop);
}

TEST_F(StallDetectorTest, AToolResultBetweenMessagesResetsTheCount) {
  EXPECT_FALSE(detector_.AddMessage("Done.", clock_.Now()));
  EXPECT_FALSE(detector_.AddMessage("Done.", clock_.Now()));
  Step("make test", "ok");
  EXPECT_FALSE(detector_.AddMessage("Done.", clock_.Now()));
  EXPECT_FALSE(detector_.AddMessage("Done.", clock_.Now()));
}

TEST_F(StallDetectorTest, NoProgressFiresAfterTheConfiguredTurns) {
  options_.no_progress_turns = 3;
  detector_ = StallDetector(options_);
  // Turn 1 finds everything new.
  EXPECT_TRUE(Turn("Read a", "ra", "w0").empty());
  EXPECT_TRUE(Turn("Read b", "rb", "w0").empty());
  // Results seen before, nothing changed: idle turns (calls differ, so no
  // other rule fires).
  EXPECT_TRUE(Turn("Read a", "ra", "w0").empty());
  EXPECT_TRUE(Turn("Read b", "rb", "w0").empty());
  std::vector<StallDetection> d = Turn("Read a", "ra", "w0");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].rule, "no_progress");
  EXPECT_EQ(d[0].count, 3);
  EXPECT_EQ(d[0].execution_ids.size(), 3u);
}

// Without a turn limit this is what ends a session of distinct calls that
// change nothing and all return the same: each call is new, its result not.
TEST_F(StallDetectorTest, DistinctCallsReturningTheSameAreNoProgress) {
  options_.no_progress_turns = 3;
  detector_ = StallDetector(options_);
  EXPECT_TRUE(Turn("true a", "empty", "w0").empty());  // the first: new
  EXPECT_TRUE(Turn("true b", "empty", "w0").empty());
  EXPECT_TRUE(Turn("true c", "empty", "w0").empty());
  std::vector<StallDetection> d = Turn("true d", "empty", "w0");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].rule, "no_progress");
}

TEST_F(StallDetectorTest, AChangedWorkspaceOrANewResultIsProgress) {
  options_.no_progress_turns = 2;
  detector_ = StallDetector(options_);
  EXPECT_TRUE(Turn("Read a", "ra", "w0").empty());
  EXPECT_TRUE(Turn("Read b", "rb", "w0").empty());
  EXPECT_TRUE(Turn("Read a", "ra", "w0").empty());  // idle 1
  EXPECT_TRUE(Turn("Edit a", "ea", "w1").empty());  // changed the workspace
  EXPECT_TRUE(Turn("Read b", "rb", "w1").empty());  // idle 1
  EXPECT_TRUE(Turn("Grep z", "gz", "w1").empty());  // a new result
  EXPECT_TRUE(Turn("Read b", "rb", "w1").empty());  // idle 1
}

TEST_F(StallDetectorTest, DisabledDetectsNothing) {
  options_.enabled = false;
  detector_ = StallDetector(options_);
  for (int i = 0; i < 6; ++i) EXPECT_FALSE(Step("Read a", "r1"));
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(detector_.AddMessage("Done.", clock_.Now()));
}

TEST_F(StallDetectorTest, ThresholdsAreConfigurable) {
  options_.repeat = 5;
  detector_ = StallDetector(options_);
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(Step("Read a", "r1"));
  EXPECT_TRUE(Step("Read a", "r1"));
}

// A long session of ordinary work: reads, searches, edits, test runs that
// fail then pass, polling a build. Nothing in it is a loop.
TEST_F(StallDetectorTest, SixtyStepsOfVariedWorkAreNotAStall) {
  int ws = 0;
  auto w = [&ws] { return "w" + std::to_string(ws); };
  int fired = 0;
  auto count = [&fired](const std::optional<StallDetection>& d) { fired += d ? 1 : 0; };
  for (int round = 0; round < 6; ++round) {
    std::string f = "file" + std::to_string(round);
    count(Step("Grep " + f, "g" + f, w()));
    count(Step("Read " + f, "r" + f, w()));
    count(Step("Read " + f + ".h", "h" + f, w()));
    count(Fail("make test", "fail " + f, "test " + f + " failed", w()));
    count(Step("Edit " + f, "e" + f, w()));
    ++ws;
    count(Fail("make test", "fail2 " + f, "test " + f + " still failed", w()));
    count(Step("Edit " + f + " again", "e2" + f, w()));
    ++ws;
    count(Step("make test", "ok " + f, w()));
    count(Step("cat build.log", "log " + std::to_string(round * 2), w()));
    count(Step("cat build.log", "log " + std::to_string(round * 2 + 1), w()));
    if (auto d = detector_.EndTurn(w(), clock_.Now())) ++fired;
  }
  EXPECT_EQ(n_, 60);
  EXPECT_EQ(fired, 0);
}

TEST_F(StallDetectorTest, ALoopIsDetectedOnceATurnSoTheNudgeComesBeforeTheStop) {
  // One response with five identical calls: a nudge, not a stop.
  std::vector<StallDetection> found;
  for (int i = 0; i < 5; ++i) {
    if (auto d = Step("Read a", "r1")) found.push_back(*d);
  }
  ASSERT_EQ(found.size(), 1u);
  EXPECT_FALSE(found[0].stop);
  detector_.EndTurn("w0", clock_.Now());
  // The next turn goes on: now it stops.
  std::optional<StallDetection> d = Step("Read a", "r1");
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->stop);
}

}  // namespace
}  // namespace odin

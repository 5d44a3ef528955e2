#include "gates/approval_gate.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

using Decision = ApprovalGate::Decision;

TEST(ApprovalGateTest, HeadlessThePolicyAnswers) {
  EXPECT_EQ(ApprovalGate(ApprovalPolicy::kDeny).Decide({"rule:rm"}, "", false), Decision::kDeniedByPolicy);
  EXPECT_EQ(ApprovalGate(ApprovalPolicy::kAllow).Decide({"rule:rm"}, "", false), Decision::kAllowedByPolicy);
  // Prompt with nobody to ask: the safe answer.
  EXPECT_EQ(ApprovalGate(ApprovalPolicy::kPrompt).Decide({"rule:rm"}, "", false), Decision::kDeniedByPolicy);
}

TEST(ApprovalGateTest, InteractiveTheUserIsAsked) {
  EXPECT_EQ(ApprovalGate(ApprovalPolicy::kPrompt).Decide({"rule:rm"}, "", true), Decision::kAskUser);
}

TEST(ApprovalGateTest, ASessionApprovalCoversEveryKeyItNamesAndNoOther) {
  ApprovalGate gate(ApprovalPolicy::kPrompt);
  gate.ApproveForSession({"rule:rm"});
  EXPECT_EQ(gate.Decide({"rule:rm"}, "", true), Decision::kApprovedForSession);
  // Every reason to ask must have been approved.
  EXPECT_EQ(gate.Decide({"rule:rm", "path:/etc"}, "", true), Decision::kAskUser);
  EXPECT_EQ(gate.Decide({"rule:curl"}, "", true), Decision::kAskUser);
  // No keys: nothing was approved.
  EXPECT_EQ(gate.Decide({}, "", true), Decision::kAskUser);
}

// A saved approval answers for exactly its call, headless too, and only
// after the session's own answers.
TEST(ApprovalGateTest, ASavedApprovalAnswersForExactlyItsCall) {
  ApprovalGate gate(ApprovalPolicy::kDeny);
  gate.AddSaved({"command:npm test"});
  EXPECT_EQ(gate.Decide({"rule:Bash(npm:*)"}, "command:npm test", false), Decision::kApprovedSaved);
  EXPECT_EQ(gate.Decide({"rule:Bash(npm:*)"}, "command:npm test -- --watch", false), Decision::kDeniedByPolicy);
  EXPECT_EQ(gate.Decide({"command:npm test"}, "", false), Decision::kDeniedByPolicy);
}

TEST(ApprovalGateTest, ReadingADirectoryApprovesWhatLiesBelowItOnly) {
  ApprovalGate gate(ApprovalPolicy::kDeny);
  gate.ApproveForSession({"read:/srv/data"});
  EXPECT_TRUE(gate.ApprovedForSession("read:/srv/data"));
  EXPECT_TRUE(gate.ApprovedForSession("read:/srv/data/a/b"));
  EXPECT_FALSE(gate.ApprovedForSession("read:/srv"));
  EXPECT_FALSE(gate.ApprovedForSession("read:/srv/database"));
  // Only reads widen to subdirectories.
  gate.ApproveForSession({"path:/srv/x"});
  EXPECT_FALSE(gate.ApprovedForSession("path:/srv/x/y"));
}

TEST(ApprovalGateTest, PolicyNames) {
  EXPECT_EQ(ParseApprovalPolicy("allow"), ApprovalPolicy::kAllow);
  EXPECT_EQ(ParseApprovalPolicy("prompt"), ApprovalPolicy::kPrompt);
  EXPECT_EQ(ParseApprovalPolicy("deny"), ApprovalPolicy::kDeny);
  EXPECT_EQ(ParseApprovalPolicy("yes please"), ApprovalPolicy::kDeny);
}

}  // namespace
}  // namespace odin

#include "planner/reviewers.h"

#include <gtest/gtest.h>

#include "planner/workflows.h"

namespace odin {
namespace {

TEST(ReviewersTest, ProfilesTurnReviewersOnAsTheTableSays) {
  ReviewConfig c;
  for (ReviewRole r : kReviewRoles) {
    EXPECT_FALSE(ReviewerOn(c, Profile::kAuto, r)) << ReviewRoleName(r);
    EXPECT_FALSE(ReviewerOn(c, Profile::kFast, r)) << ReviewRoleName(r);
  }
  EXPECT_TRUE(ReviewerOn(c, Profile::kSafe, ReviewRole::kHydrator));
  EXPECT_TRUE(ReviewerOn(c, Profile::kSafe, ReviewRole::kCritic));
  EXPECT_TRUE(ReviewerOn(c, Profile::kSafe, ReviewRole::kQa));
  EXPECT_FALSE(ReviewerOn(c, Profile::kSafe, ReviewRole::kDrift));
  EXPECT_FALSE(ReviewerOn(c, Profile::kSafe, ReviewRole::kReflection));
  for (ReviewRole r :
       {ReviewRole::kHydrator, ReviewRole::kCritic, ReviewRole::kDrift, ReviewRole::kQa, ReviewRole::kReflection}) {
    EXPECT_TRUE(ReviewerOn(c, Profile::kStrict, r)) << ReviewRoleName(r);
  }
  EXPECT_FALSE(ReviewerOn(c, Profile::kStrict, ReviewRole::kSpec));
  c.of(ReviewRole::kQa).enabled = false;
  EXPECT_FALSE(ReviewerOn(c, Profile::kStrict, ReviewRole::kQa));
  c.of(ReviewRole::kDrift).enabled = true;
  EXPECT_TRUE(ReviewerOn(c, Profile::kAuto, ReviewRole::kDrift));
}

TEST(ReviewersTest, CriticAnswersAreCheckedAgainstTheSchema) {
  StatusOr<ReviewAnswer> ok =
      ParseReviewAnswer(ReviewRole::kCritic, R"({"verdict":"REVISE","reasons":["no test"]})", {});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->verdict, "REVISE");
  EXPECT_EQ(ok->text, "- no test\n");
  // Fenced, as models often answer.
  EXPECT_TRUE(
      ParseReviewAnswer(ReviewRole::kCritic, "```json\n{\"verdict\":\"PROCEED\",\"reasons\":[]}\n```", {}).ok());
  struct Bad {
    const char* text;
    const char* names;
  } bad[] = {
      {"not json", "not JSON"},
      {R"({"verdict":"MAYBE","reasons":[]})", "verdict"},
      {R"({"verdict":"REVISE"})", "reasons"},
      {R"({"verdict":"REVISE","reasons":[]})", "needs reasons"},
      {R"({"verdict":"PROCEED","reasons":[],"extra":1})", "extra"},
      {R"({"verdict":"PROCEED","reasons":[3]})", "reasons[0]"},
  };
  for (const Bad& b : bad) {
    StatusOr<ReviewAnswer> a = ParseReviewAnswer(ReviewRole::kCritic, b.text, {});
    ASSERT_FALSE(a.ok()) << b.text;
    EXPECT_NE(a.status().message().find(b.names), std::string::npos) << a.status().ToString();
  }
}

TEST(ReviewersTest, QaMustCiteEvidenceThatExistsAndBeConsistent) {
  std::vector<std::string> ids = {"ex_1", "mut_2"};
  const char* good =
      R"({"verdict":"VERIFIED","criteria":[{"criterion":"tests pass","met":true,"evidence":["ex_1"]}],"findings":[]})";
  StatusOr<ReviewAnswer> a = ParseReviewAnswer(ReviewRole::kQa, good, ids);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->verdict, "VERIFIED");
  // An id the evidence does not hold: a made-up citation.
  const char* made_up =
      R"({"verdict":"VERIFIED","criteria":[{"criterion":"tests pass","met":true,"evidence":["ex_9"]}],"findings":[]})";
  StatusOr<ReviewAnswer> b = ParseReviewAnswer(ReviewRole::kQa, made_up, ids);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("ex_9"), std::string::npos);
  // No evidence at all for a criterion.
  EXPECT_FALSE(ParseReviewAnswer(
                   ReviewRole::kQa,
                   R"({"verdict":"VERIFIED","criteria":[{"criterion":"x","met":true,"evidence":[]}],"findings":[]})",
                   ids)
                   .ok());
  // VERIFIED with an unmet criterion contradicts itself.
  EXPECT_FALSE(
      ParseReviewAnswer(
          ReviewRole::kQa,
          R"({"verdict":"VERIFIED","criteria":[{"criterion":"x","met":false,"evidence":["ex_1"]}],"findings":[]})", ids)
          .ok());
  StatusOr<ReviewAnswer> issues = ParseReviewAnswer(
      ReviewRole::kQa,
      R"({"verdict":"ISSUES","criteria":[{"criterion":"x","met":false,"evidence":["mut_2"],"note":"no test"}],"findings":["add a test"]})",
      ids);
  ASSERT_TRUE(issues.ok()) << issues.status().ToString();
  EXPECT_NE(issues->text.find("not met: x (no test)"), std::string::npos);
  EXPECT_NE(issues->text.find("- add a test"), std::string::npos);
}

TEST(ReviewersTest, RequestCarriesPromptSchemaEvidenceAndTheProblem) {
  ChatRequest r = ReviewRequest(ReviewRole::kQa, "small", "", "{\"calls\":[]}", "");
  EXPECT_EQ(r.model, "small");
  EXPECT_TRUE(r.utility);
  EXPECT_EQ(r.system.rfind("You are Odin's QA verifier", 0), 0u);
  EXPECT_NE(r.system.find("\"VERIFIED\""), std::string::npos);
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_NE(r.messages[0].text.find("{\"calls\":[]}"), std::string::npos);
  ChatRequest again = ReviewRequest(ReviewRole::kQa, "small", "Custom prompt.", "{}", "the answer lacks \"verdict\"");
  EXPECT_EQ(again.system.rfind("Custom prompt.", 0), 0u);
  EXPECT_NE(again.system.find("JSON Schema"), std::string::npos);
  EXPECT_NE(again.messages[0].text.find("lacks \"verdict\""), std::string::npos);
}

TEST(ReviewersTest, DriftAuditPointsAreReproducibleFromTheSeed) {
  std::vector<int> a, b, c;
  for (int n = 1; n <= 200; ++n) {
    if (DriftAuditDue(42, n, 10, 0.15)) a.push_back(n);
    if (DriftAuditDue(42, n, 10, 0.15)) b.push_back(n);
    if (DriftAuditDue(43, n, 10, 0.15)) c.push_back(n);
  }
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (int n = 10; n <= 200; n += 10) EXPECT_TRUE(DriftAuditDue(7, n, 10, 0.0)) << n;
  EXPECT_FALSE(DriftAuditDue(7, 3, 10, 0.0));
  // About 15% of the others, at random.
  int random = 0;
  for (int n : a) random += n % 10 != 0;
  EXPECT_GT(random, 10);
  EXPECT_LT(random, 50);
}

TEST(WorkflowsTest, PlansParseAndUpdatesKeepWhatTheyLeaveOut) {
  StatusOr<Plan> p = ParsePlan(
      R"({"intent":"add x","acceptance_criteria":["x works"],"steps":[{"text":"edit a.c","files":["a.c"],"check":"make t"}],"workflow":"batch"})",
      nullptr);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->workflow, Workflow::kBatch);
  ASSERT_EQ(p->steps.size(), 1u);
  EXPECT_EQ(p->steps[0].check, "make t");
  StatusOr<Plan> q = ParsePlan(R"({"acceptance_criteria":["x works","y too"],"reason":"critic"})", &*p);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->intent, "add x");
  EXPECT_EQ(q->criteria.size(), 2u);
  EXPECT_NE(RenderPlan(*q).find("2. y too"), std::string::npos);
  EXPECT_FALSE(ParsePlan(R"({"intent":"x"})", nullptr).ok());
  EXPECT_FALSE(ParsePlan(R"({"intent":"x","acceptance_criteria":[],"steps":["a"]})", nullptr).ok());
  EXPECT_FALSE(ParsePlan(R"({"surprise":1})", &*p).ok());
  EXPECT_FALSE(ParsePlan(R"({"workflow":"yolo"})", &*p).ok());
}

TEST(WorkflowsTest, TestFilesByTheCommonLayouts) {
  std::vector<std::string> d = DefaultTestPatterns();
  for (const char* t : {"test_calc.py", "pkg/calc_test.go", "src/calc_test.cc", "tests/a/b.py", "web/x.test.ts",
                        "lib/__tests__/x.js", "src/test/java/FooTest.java"}) {
    EXPECT_TRUE(IsTestPath(t, d)) << t;
  }
  for (const char* code : {"calc.py", "src/calc.cc", "testing.py", "src/contest.c"})
    EXPECT_FALSE(IsTestPath(code, d)) << code;
  EXPECT_TRUE(IsTestPath("checks/x.sh", {"checks/*"}));
}

}  // namespace
}  // namespace odin

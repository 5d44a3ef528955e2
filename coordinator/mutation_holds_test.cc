#include "coordinator/mutation_holds.h"

#include <gtest/gtest.h>

#include <map>

namespace odin {
namespace {

MutationHold Hold(const std::string& rule, std::vector<std::string> allowed = {}, size_t max_files = 0) {
  MutationHold h;
  h.rule = rule;
  h.reason = "because " + rule;
  h.allowed = std::move(allowed);
  h.max_files = max_files;
  return h;
}

TEST(MutationHoldsTest, AHoldAllowsWhatItsPatternsNameAndSubagentsWorkUnderTheirStartersHold) {
  std::map<std::string, std::string> parents = {{"sub_1", "main"}, {"sub_2", "sub_1"}};
  MutationHolds holds([&parents](const std::string& id) { return parents.count(id) ? parents[id] : ""; });
  EXPECT_TRUE(holds.Of("main").rule.empty());
  EXPECT_TRUE(holds.Allows("main", "src/a.c"));  // no hold

  EXPECT_TRUE(holds.Set("main", Hold("tdd", {"tests/**"})));
  EXPECT_FALSE(holds.Set("main", Hold("tdd", {"tests/**"})));  // the same: nothing to record
  EXPECT_TRUE(holds.Allows("main", "tests/a_test.py"));
  EXPECT_FALSE(holds.Allows("main", "src/a.c"));
  // A subagent's subagent works under main's hold.
  EXPECT_EQ(holds.Of("sub_2").rule, "tdd");
  EXPECT_FALSE(holds.Allows("sub_2", "src/a.c"));
  // Its own hold comes first.
  holds.Set("sub_1", Hold("critic"));
  EXPECT_EQ(holds.Of("sub_2").rule, "critic");
  EXPECT_FALSE(holds.Allows("sub_2", "tests/a_test.py"));  // critic allows nothing

  EXPECT_TRUE(holds.Set("main", MutationHold()));  // lifted
  EXPECT_TRUE(holds.Allows("main", "src/a.c"));
}

TEST(MutationHoldsTest, AFileBudgetCountsDistinctFilesUntilTheHoldIsLifted) {
  MutationHolds holds(nullptr);
  holds.Set("main", Hold("minor-edit", {}, 2));
  EXPECT_TRUE(holds.Allows("main", "a.c"));
  EXPECT_TRUE(holds.Allows("main", "a.c"));  // the same file again
  EXPECT_TRUE(holds.Allows("main", "b.c"));
  EXPECT_FALSE(holds.Allows("main", "c.c"));  // a third
  // Another hold meanwhile keeps the count; lifting it starts again.
  holds.Set("main", Hold("minor-edit-2", {}, 2));
  EXPECT_FALSE(holds.Allows("main", "c.c"));
  holds.Set("main", MutationHold());
  holds.Set("main", Hold("minor-edit", {}, 2));
  EXPECT_TRUE(holds.Allows("main", "c.c"));
}

}  // namespace
}  // namespace odin

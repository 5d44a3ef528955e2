#include "session/attempts.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

UndoStep WriteStep(const std::string& path, const std::string& before, const std::string& after) {
  UndoStep s;
  s.path = path;
  s.action = UndoStep::Action::kWriteFile;
  s.current = before;
  s.current_exists = !before.empty();
  s.content = after;
  return s;
}

TEST(TestWeakening, DeletingSkippingOrDroppingAssertionsIsNamed) {
  UndoPlan plan;
  EXPECT_EQ(TestWeakening(plan, "/w", {}), "");
  UndoStep removed;
  removed.path = "/w/tests/test_a.py";
  removed.action = UndoStep::Action::kRemove;
  removed.current_exists = true;
  plan.steps = {removed};
  EXPECT_EQ(TestWeakening(plan, "/w", {}), "deletes the test file tests/test_a.py");
  plan.steps = {WriteStep("/w/tests/test_a.py", "def test_a():\n    assert a()\n",
                          "import pytest\n@pytest.mark.skip\ndef test_a():\n    assert a()\n")};
  EXPECT_EQ(TestWeakening(plan, "/w", {}), "skips tests in tests/test_a.py");
  plan.steps = {WriteStep("/w/src/a_test.go", "func TestA(t *testing.T) {\n\tassert(t, a())\n}\n",
                          "func TestA(t *testing.T) {\n}\n")};
  EXPECT_EQ(TestWeakening(plan, "/w", {}), "removes 1 assertion line from src/a_test.go");
  // An assertion changed, or one added, or code that is not a test: none.
  plan.steps = {WriteStep("/w/tests/test_a.py", "def test_a():\n    assert a() == 1\n",
                          "def test_a():\n    assert a() == 2\n    assert b()\n"),
                WriteStep("/w/src/a.py", "def a():\n    assert x\n", "def a():\n    return 1\n")};
  EXPECT_EQ(TestWeakening(plan, "/w", {}), "");
  // The project's own patterns.
  plan.steps = {WriteStep("/w/checks/one.sh", "assert_ok 1\n", "\n")};
  EXPECT_EQ(TestWeakening(plan, "/w", {}), "");
  EXPECT_EQ(TestWeakening(plan, "/w", {"checks/*"}), "removes 1 assertion line from checks/one.sh");
}

TEST(PickAttempt, TheSmallestPassingChangeThenFewerFilesThenTheFirst) {
  auto outcome = [](int number, bool passes, int64_t lines, int64_t files) {
    AttemptOutcome o;
    o.number = number;
    o.passes = passes;
    o.lines = lines;
    o.files = files;
    o.empty = lines == 0 && files == 0;
    return o;
  };
  EXPECT_EQ(PickAttempt({}), -1);
  EXPECT_EQ(PickAttempt({outcome(1, false, 1, 1), outcome(2, false, 1, 1)}), -1);
  EXPECT_EQ(PickAttempt({outcome(1, false, 1, 1), outcome(2, true, 9, 3), outcome(3, true, 2, 1)}), 2);
  EXPECT_EQ(PickAttempt({outcome(1, true, 4, 2), outcome(2, true, 4, 1)}), 1);
  EXPECT_EQ(PickAttempt({outcome(1, true, 4, 1), outcome(2, true, 4, 1)}), 0);
  // Nothing that lands (only what git ignores) wins only alone.
  AttemptOutcome nothing = outcome(1, true, 0, 0);
  nothing.empty = true;
  EXPECT_EQ(PickAttempt({nothing, outcome(2, true, 9, 3)}), 1);
  EXPECT_EQ(PickAttempt({nothing, outcome(2, false, 1, 1)}), 0);
}

}  // namespace
}  // namespace odin

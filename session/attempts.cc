#include "session/attempts.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "planner/workflows.h"
#include "tools/unified_diff.h"
#include "tools/workspace_path.h"

namespace odin {

namespace {

// A line that asserts something, in the test frameworks people use.
bool Asserts(std::string_view line) {
  for (const char* word : {"assert", "expect", "should", "EXPECT_", "ASSERT_", "CHECK(", "t.Error", "t.Fatal"}) {
    if (line.find(word) != std::string_view::npos) return true;
  }
  return false;
}

// A line that skips or narrows a test run.
bool Skips(std::string_view line) {
  for (const char* word : {"skip", "Skip", "SKIP", "xit(", "xdescribe(", "xtest(", ".only(", "#[ignore]", "@Disabled",
                           "@Ignore", "DISABLED_", "@unittest.expectedFailure", "pytest.mark.xfail"}) {
    if (line.find(word) != std::string_view::npos) return true;
  }
  return false;
}

// The lines of a unified diff's body added (+) and removed (-) that satisfy
// pred.
std::pair<int, int> CountLines(const std::string& diff, bool (*pred)(std::string_view)) {
  int added = 0, removed = 0;
  size_t start = 0;
  while (start < diff.size()) {
    size_t end = diff.find('\n', start);
    if (end == std::string::npos) end = diff.size();
    std::string_view line(diff.data() + start, end - start);
    bool header = line.rfind("+++", 0) == 0 || line.rfind("---", 0) == 0;
    if (!header && !line.empty() && pred(line.substr(1))) {
      if (line[0] == '+') ++added;
      if (line[0] == '-') ++removed;
    }
    start = end + 1;
  }
  return {added, removed};
}

int64_t LineCount(const std::string& text) {
  if (text.empty()) return 0;
  return std::count(text.begin(), text.end(), '\n') + (text.back() == '\n' ? 0 : 1);
}

}  // namespace

std::string TestWeakening(const UndoPlan& plan, const std::string& workspace,
                          const std::vector<std::string>& test_patterns) {
  std::vector<std::string> patterns = test_patterns.empty() ? DefaultTestPatterns() : test_patterns;
  for (const UndoStep& s : plan.steps) {
    std::string rel = DisplayPath(s.path, workspace);
    if (!IsTestPath(rel, patterns)) continue;
    std::string before = s.landed ? s.base_content.value_or("") : s.current;
    bool existed = s.landed ? s.base_exists : s.current_exists;
    if (s.action == UndoStep::Action::kRemove && existed) return "deletes the test file " + rel;
    if (s.action != UndoStep::Action::kWriteFile) continue;
    DiffResult diff = UnifiedDiff(existed ? before : "", s.content, rel);
    auto [skips_added, skips_removed] = CountLines(diff.text, Skips);
    if (skips_added > skips_removed) return "skips tests in " + rel;
    auto [asserts_added, asserts_removed] = CountLines(diff.text, Asserts);
    if (asserts_removed > asserts_added) {
      return "removes " + std::to_string(asserts_removed - asserts_added) + " assertion line" +
             (asserts_removed - asserts_added == 1 ? "" : "s") + " from " + rel;
    }
  }
  return "";
}

void JudgeAttempt(Ledger* ledger, const UndoPlan& plan, const std::string& workspace,
                  const std::vector<std::string>& test_patterns, AttemptOutcome* o) {
  o->lines = 0;
  o->files = 0;
  o->empty = plan.steps.empty();
  for (const UndoStep& s : plan.steps) {
    std::string before = s.landed ? s.base_content.value_or("") : s.current;
    bool existed = s.landed ? s.base_exists : s.current_exists;
    switch (s.action) {
      case UndoStep::Action::kWriteFile: {
        DiffResult diff = UnifiedDiff(existed ? before : "", s.content, "x");
        o->lines += diff.added + diff.removed;
        ++o->files;
        break;
      }
      case UndoStep::Action::kRemove:
        o->lines += LineCount(before);
        ++o->files;
        break;
      case UndoStep::Action::kSymlink:
        o->lines += 1;
        ++o->files;
        break;
      case UndoStep::Action::kMakeDirectory:
      case UndoStep::Action::kRemoveDirectory: break;
    }
  }
  o->passes = false;
  if (o->status != "done") {
    o->why = "its message ended " + o->status + " (exit " + std::to_string(o->exit_code) + ")";
    return;
  }
  // The newest validation of each file it changed.
  StatusOr<std::vector<ValidationRecord>> validations = ledger->ListValidations(o->session_id);
  if (!validations.ok()) {
    o->why = "its validations cannot be read: " + validations.status().message();
    return;
  }
  std::map<std::string, const ValidationRecord*> newest;
  for (const ValidationRecord& v : *validations) {
    const ValidationRecord*& slot = newest[v.path];
    if (slot == nullptr || v.created_at_ms >= slot->created_at_ms) slot = &v;
  }
  for (const auto& [path, v] : newest) {
    if (v->new_errors > 0) {
      o->why = "leaves " + std::to_string(v->new_errors) + " new error" + (v->new_errors == 1 ? "" : "s") + " in " +
               v->path.substr(v->path.rfind('/') + 1) + " (" + v->validator + ")";
      return;
    }
  }
  if (!plan.conflicts.empty() || !plan.not_undoable.empty()) {
    o->why = "would not apply: " + (!plan.conflicts.empty() ? plan.conflicts.front() : plan.not_undoable.front());
    return;
  }
  if (std::string weakens = TestWeakening(plan, workspace, test_patterns); !weakens.empty()) {
    o->why = "cannot win: it " + weakens;
    return;
  }
  o->passes = true;
  o->why = "passes: its checks passed with no new errors; " + std::to_string(o->lines) +
           (o->lines == 1 ? " line in " : " lines in ") + std::to_string(o->files) +
           (o->files == 1 ? " file" : " files");
}

int PickAttempt(const std::vector<AttemptOutcome>& outcomes) {
  int best = -1;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const AttemptOutcome& o = outcomes[i];
    if (!o.passes) continue;
    const AttemptOutcome& b = best < 0 ? o : outcomes[static_cast<size_t>(best)];
    if (best < 0 || std::tie(o.empty, o.lines, o.files, o.number) < std::tie(b.empty, b.lines, b.files, b.number)) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

}  // namespace odin

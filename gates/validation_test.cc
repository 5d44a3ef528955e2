#include "gates/validation.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tools/unified_diff.h"

namespace odin {
namespace {

constexpr char kWs[] = "/ws";
constexpr char kFile[] = "/ws/src/a.cc";

Diag Error(const std::string& path, uint32_t line, const std::string& code, const std::string& message,
           uint32_t column = 1) {
  Diag d;
  d.path = path;
  d.line = line;
  d.column = column;
  d.severity = 1;
  d.code = code;
  d.message = message;
  d.source = "clang";
  return d;
}

Diag WithSeverity(Diag d, uint32_t severity) {
  d.severity = severity;
  return d;
}

std::vector<bool> Flags(std::initializer_list<bool> flags) { return std::vector<bool>(flags); }

// MarkNew

TEST(MarkNewTest, EverythingIsNewWithoutABaseline) {
  std::vector<Diag> after = {Error(kFile, 1, "c", "m"), Error(kFile, 2, "c", "m")};
  EXPECT_EQ(MarkNew({}, after, kFile, MapLines("x\ny\n", "x\ny\n")), Flags({true, true}));
}

TEST(MarkNewTest, NothingAfterMeansNothingNew) {
  EXPECT_TRUE(MarkNew({Error(kFile, 1, "c", "m")}, {}, kFile, MapLines("x\n", "x\n")).empty());
}

TEST(MarkNewTest, ABaselineDiagnosticOnAnUnchangedLineIsNotNew) {
  std::string text = "a\nb\nc\n";
  std::vector<Diag> baseline = {Error(kFile, 2, "unused", "unused variable 'b'")};
  std::vector<Diag> after = {Error(kFile, 2, "unused", "unused variable 'b'")};
  EXPECT_EQ(MarkNew(baseline, after, kFile, MapLines(text, text)), Flags({false}));
}

TEST(MarkNewTest, ABaselineDiagnosticFollowsItsLineWhenLinesAreInsertedAbove) {
  std::vector<Diag> baseline = {Error(kFile, 2, "unused", "unused variable 'b'")};
  std::vector<Diag> after = {Error(kFile, 4, "unused", "unused variable 'b'")};
  EXPECT_EQ(MarkNew(baseline, after, kFile, MapLines("a\nb\nc\n", "n1\nn2\na\nb\nc\n")), Flags({false}));
}

TEST(MarkNewTest, TheSameDiagnosticOnAnotherKeptLineIsNew) {
  // Line 2 is kept at line 2; the error now at line 3 is a different one.
  std::vector<Diag> baseline = {Error(kFile, 2, "unused", "unused variable")};
  std::vector<Diag> after = {Error(kFile, 3, "unused", "unused variable")};
  EXPECT_EQ(MarkNew(baseline, after, kFile, MapLines("a\nb\nc\n", "a\nb\nc\n")), Flags({true}));
}

TEST(MarkNewTest, ADiagnosticWithADifferentMessageCodeOrSeverityIsNew) {
  std::string text = "a\nb\n";
  std::vector<Diag> baseline = {Error(kFile, 1, "c", "m")};
  std::vector<Diag> after = {Error(kFile, 1, "c", "other"), Error(kFile, 1, "other", "m"),
                             WithSeverity(Error(kFile, 1, "c", "m"), 2)};
  EXPECT_EQ(MarkNew(baseline, after, kFile, MapLines(text, text)), Flags({true, true, true}));
}

TEST(MarkNewTest, TheSourceAndColumnDoNotTakePartInTheMatch) {
  std::string text = "a\n";
  std::vector<Diag> baseline = {Error(kFile, 1, "c", "m", 3)};
  Diag after = Error(kFile, 1, "c", "m", 9);
  after.source = "other";
  EXPECT_EQ(MarkNew(baseline, {after}, kFile, MapLines(text, text)), Flags({false}));
}

TEST(MarkNewTest, ADiagnosticOnARewrittenLineMatchesWithinItsReplacement) {
  // Line 2 (b) became lines 2..3 (X, Y); the error moved to line 3.
  std::vector<Diag> baseline = {Error(kFile, 2, "c", "m")};
  std::vector<Diag> after = {Error(kFile, 3, "c", "m")};
  EXPECT_EQ(MarkNew(baseline, after, kFile, MapLines("a\nb\nc\n", "a\nX\nY\nc\n")), Flags({false}));
}

TEST(MarkNewTest, ADiagnosticOutsideTheReplacementOfItsRewrittenLineIsNew) {
  std::vector<Diag> baseline = {Error(kFile, 2, "c", "m")};
  std::vector<Diag> after = {Error(kFile, 4, "c", "m")};  // line 4 is the kept "c"
  EXPECT_EQ(MarkNew(baseline, after, kFile, MapLines("a\nb\nc\n", "a\nX\nY\nc\n")), Flags({true}));
}

TEST(MarkNewTest, ADiagnosticOnADeletedLineMatchesNothing) {
  std::vector<Diag> baseline = {Error(kFile, 2, "c", "m")};
  std::vector<Diag> after = {Error(kFile, 1, "c", "m"), Error(kFile, 2, "c", "m")};
  EXPECT_EQ(MarkNew(baseline, after, kFile, MapLines("a\nb\nc\n", "a\nc\n")), Flags({true, true}));
}

TEST(MarkNewTest, MatchingIsOneToOne) {
  std::string text = "a\nb\n";
  std::vector<Diag> baseline = {Error(kFile, 1, "c", "m")};
  std::vector<Diag> after = {Error(kFile, 1, "c", "m"), Error(kFile, 1, "c", "m")};
  EXPECT_EQ(MarkNew(baseline, after, kFile, MapLines(text, text)), Flags({false, true}));
}

TEST(MarkNewTest, TwoBaselineCopiesCoverTwoCopiesAfter) {
  std::string text = "a\nb\n";
  std::vector<Diag> baseline = {Error(kFile, 1, "c", "m"), Error(kFile, 1, "c", "m")};
  std::vector<Diag> after = {Error(kFile, 1, "c", "m"), Error(kFile, 1, "c", "m")};
  EXPECT_EQ(MarkNew(baseline, after, kFile, MapLines(text, text)), Flags({false, false}));
}

TEST(MarkNewTest, DiagnosticsInOtherFilesAreMatchedInPlace) {
  // The map describes kFile only: the header's line 2 stays line 2 even
  // though kFile's line 2 moved to line 4.
  const std::string header = "/ws/src/a.h";
  std::vector<Diag> baseline = {Error(header, 2, "c", "m"), Error(header, 5, "c", "m")};
  std::vector<Diag> after = {Error(header, 2, "c", "m"), Error(header, 6, "c", "m")};
  EXPECT_EQ(MarkNew(baseline, after, kFile, MapLines("a\nb\n", "n\nn\na\nb\n")), Flags({false, true}));
}

TEST(MarkNewTest, ADiagnosticInAnotherFileDoesNotMatchOneInTheValidatedFile) {
  std::string text = "a\nb\n";
  std::vector<Diag> baseline = {Error("/ws/src/other.cc", 1, "c", "m")};
  std::vector<Diag> after = {Error(kFile, 1, "c", "m")};
  EXPECT_EQ(MarkNew(baseline, after, kFile, MapLines(text, text)), Flags({true}));
}

TEST(MarkNewTest, ADiagnosticPastTheEndOfTheBaselineFollowsTheEndOfTheFile) {
  // "expected '}'" at the line after the last one, before and after growth.
  std::vector<Diag> baseline = {Error(kFile, 3, "expected_rbrace", "expected '}'")};
  std::vector<Diag> after = {Error(kFile, 5, "expected_rbrace", "expected '}'")};
  EXPECT_EQ(MarkNew(baseline, after, kFile, MapLines("a\nb\n", "a\nb\nc\nd\n")), Flags({false}));
}

TEST(MarkNewTest, KeptLinesAreMatchedBeforeRewrittenOnes) {
  // The baseline has the same error past the end (matches any line) and on
  // kept line 2. The error now on line 2 must take the kept one, so the one
  // on line 4 can still take the end-of-file one: neither is new. Matching
  // in a single pass would give the line-2 error the end-of-file baseline and
  // report the line-4 error as new.
  std::string text = "a\nb\nc\nd\n";
  std::vector<Diag> baseline = {Error(kFile, 9, "c", "m"), Error(kFile, 2, "c", "m")};
  std::vector<Diag> after = {Error(kFile, 2, "c", "m"), Error(kFile, 4, "c", "m")};
  EXPECT_EQ(MarkNew(baseline, after, kFile, MapLines(text, text)), Flags({false, false}));
}

TEST(MarkNewTest, OnlyTheNewOnesAreFlaggedInAMixedList) {
  // before: 1 int x = y;  2 foo();  3 return;
  // after:  1 #include <z>  2 int x = y;  3 bar();  4 return;
  std::string before = "int x = y;\nfoo();\nreturn;\n";
  std::string after_text = "#include <z>\nint x = y;\nbar();\nreturn;\n";
  std::vector<Diag> baseline = {Error(kFile, 1, "undeclared", "use of undeclared identifier 'y'"),
                                Error(kFile, 2, "undeclared", "use of undeclared identifier 'foo'")};
  std::vector<Diag> after = {Error(kFile, 1, "pp_file_not_found", "'z' file not found"),
                             Error(kFile, 2, "undeclared", "use of undeclared identifier 'y'"),
                             Error(kFile, 3, "undeclared", "use of undeclared identifier 'bar'")};
  EXPECT_EQ(MarkNew(baseline, after, kFile, MapLines(before, after_text)), Flags({true, false, true}));
}

// SummarizeDiagnostics

TEST(SummarizeDiagnosticsTest, EmptyWhenNothingQualifies) {
  EXPECT_EQ(SummarizeDiagnostics({}, kWs), "");
  EXPECT_EQ(SummarizeDiagnostics({WithSeverity(Error(kFile, 1, "c", "m"), 2)}, kWs), "");
}

TEST(SummarizeDiagnosticsTest, FormatsFileLineColumnCodeAndMessageRelativeToTheWorkspace) {
  EXPECT_EQ(SummarizeDiagnostics({Error(kFile, 12, "undeclared_var_use", "use of undeclared identifier 'x'", 5)}, kWs),
            "src/a.cc:12:5 [undeclared_var_use] use of undeclared identifier 'x'\n");
}

TEST(SummarizeDiagnosticsTest, OmitsTheBracketsWhenThereIsNoCode) {
  EXPECT_EQ(SummarizeDiagnostics({Error(kFile, 3, "", "expected ';'", 7)}, kWs), "src/a.cc:3:7 expected ';'\n");
}

TEST(SummarizeDiagnosticsTest, APathOutsideTheWorkspaceStaysAbsolute) {
  EXPECT_EQ(SummarizeDiagnostics({Error("/usr/include/x.h", 1, "c", "m", 2)}, kWs), "/usr/include/x.h:1:2 [c] m\n");
}

TEST(SummarizeDiagnosticsTest, ErrorsOnlyByDefault) {
  std::vector<Diag> d = {WithSeverity(Error(kFile, 1, "w", "warning"), 2), Error(kFile, 2, "e", "error"),
                         WithSeverity(Error(kFile, 3, "i", "info"), 3), WithSeverity(Error(kFile, 4, "h", "hint"), 4)};
  EXPECT_EQ(SummarizeDiagnostics(d, kWs), "src/a.cc:2:1 [e] error\n");
}

TEST(SummarizeDiagnosticsTest, WithAllSeveritiesEachLineNamesItsSeverity) {
  std::vector<Diag> d = {WithSeverity(Error(kFile, 1, "w", "warning"), 2), Error(kFile, 2, "e", "error"),
                         WithSeverity(Error(kFile, 3, "i", "info"), 3)};
  SummaryLimits all;
  all.errors_only = false;
  EXPECT_EQ(SummarizeDiagnostics(d, kWs, all),
            "src/a.cc:1:1 warning [w] warning\n"
            "src/a.cc:2:1 error [e] error\n"
            "src/a.cc:3:1 note [i] info\n");
}

TEST(SummarizeDiagnosticsTest, SortsByFileLineColumnCodeAndMessage) {
  std::vector<Diag> d = {Error("/ws/b.cc", 1, "c", "m", 1), Error(kFile, 10, "c", "m", 1),
                         Error(kFile, 2, "c", "m", 9),      Error(kFile, 2, "c", "m", 3),
                         Error(kFile, 2, "b", "z", 3),      Error(kFile, 2, "b", "a", 3)};
  EXPECT_EQ(SummarizeDiagnostics(d, kWs),
            "b.cc:1:1 [c] m\n"
            "src/a.cc:2:3 [b] a\n"
            "src/a.cc:2:3 [b] z\n"
            "src/a.cc:2:3 [c] m\n"
            "src/a.cc:2:9 [c] m\n"
            "src/a.cc:10:1 [c] m\n");
}

TEST(SummarizeDiagnosticsTest, TheResultDoesNotDependOnInputOrder) {
  std::vector<Diag> d = {Error(kFile, 3, "a", "x"), Error("/ws/z.cc", 1, "b", "y"), Error(kFile, 1, "c", "z")};
  std::vector<Diag> reversed(d.rbegin(), d.rend());
  EXPECT_EQ(SummarizeDiagnostics(d, kWs), SummarizeDiagnostics(reversed, kWs));
}

TEST(SummarizeDiagnosticsTest, DropsDuplicates) {
  Diag d = Error(kFile, 4, "c", "m", 2);
  Diag same_but_source = d;
  same_but_source.source = "other";
  EXPECT_EQ(SummarizeDiagnostics({d, d, same_but_source}, kWs), "src/a.cc:4:2 [c] m\n");
}

TEST(SummarizeDiagnosticsTest, ShowsOnlyTheFirstLineOfAMessage) {
  EXPECT_EQ(SummarizeDiagnostics({Error(kFile, 1, "c", "first line\nnote: second line")}, kWs),
            "src/a.cc:1:1 [c] first line\n");
}

TEST(SummarizeDiagnosticsTest, CutsVeryLongMessagesAt300Bytes) {
  std::string message(400, 'x');
  EXPECT_EQ(SummarizeDiagnostics({Error(kFile, 1, "c", message)}, kWs),
            "src/a.cc:1:1 [c] " + std::string(300, 'x') + "...\n");
  EXPECT_EQ(SummarizeDiagnostics({Error(kFile, 1, "c", std::string(300, 'y'))}, kWs),
            "src/a.cc:1:1 [c] " + std::string(300, 'y') + "\n");
}

TEST(SummarizeDiagnosticsTest, AtMostTwentyPerFileThenACount) {
  std::vector<Diag> d;
  for (uint32_t i = 1; i <= 25; ++i) d.push_back(Error(kFile, i, "c", "m"));
  std::string out = SummarizeDiagnostics(d, kWs);
  std::string expected;
  for (uint32_t i = 1; i <= 20; ++i) expected += "src/a.cc:" + std::to_string(i) + ":1 [c] m\n";
  expected += "... and 5 more\n";
  EXPECT_EQ(out, expected);
}

TEST(SummarizeDiagnosticsTest, TheCapOfOneFileLeavesRoomForTheNext) {
  std::vector<Diag> d;
  for (uint32_t i = 1; i <= 22; ++i) d.push_back(Error("/ws/a.cc", i, "c", "m"));
  for (uint32_t i = 1; i <= 3; ++i) d.push_back(Error("/ws/b.cc", i, "c", "m"));
  std::string out = SummarizeDiagnostics(d, kWs);
  EXPECT_NE(out.find("a.cc:20:1 [c] m\n"), std::string::npos);
  EXPECT_EQ(out.find("a.cc:21:1"), std::string::npos);
  EXPECT_NE(out.find("b.cc:3:1 [c] m\n"), std::string::npos);
  EXPECT_TRUE(out.size() >= 15 && out.substr(out.size() - 15) == "... and 2 more\n") << out;
}

TEST(SummarizeDiagnosticsTest, AtMostThirtyInAllThenACount) {
  std::vector<Diag> d;
  for (const char* file : {"/ws/a.cc", "/ws/b.cc", "/ws/c.cc"}) {
    for (uint32_t i = 1; i <= 15; ++i) d.push_back(Error(file, i, "c", "m"));
  }
  std::string out = SummarizeDiagnostics(d, kWs);
  size_t lines = 0;
  for (char ch : out) lines += ch == '\n' ? 1 : 0;
  EXPECT_EQ(lines, 31u) << out;  // 30 diagnostics and the count
  EXPECT_NE(out.find("a.cc:15:1"), std::string::npos);
  EXPECT_NE(out.find("b.cc:15:1"), std::string::npos);
  EXPECT_EQ(out.find("c.cc:"), std::string::npos);  // sorted last, nothing left for it
  EXPECT_TRUE(out.size() >= 16 && out.substr(out.size() - 16) == "... and 15 more\n") << out;
}

TEST(SummarizeDiagnosticsTest, DuplicatesAndFilteredSeveritiesAreNotCountedAsMore) {
  std::vector<Diag> d;
  for (uint32_t i = 1; i <= 20; ++i) d.push_back(Error(kFile, i, "c", "m"));
  d.push_back(Error(kFile, 1, "c", "m"));                    // duplicate
  d.push_back(WithSeverity(Error(kFile, 30, "w", "m"), 2));  // warning
  std::string out = SummarizeDiagnostics(d, kWs);
  EXPECT_EQ(out.find("more"), std::string::npos) << out;
}

TEST(SummarizeDiagnosticsTest, LimitsCanBeChanged) {
  std::vector<Diag> d = {Error("/ws/a.cc", 1, "c", "m"), Error("/ws/a.cc", 2, "c", "m"),
                         Error("/ws/b.cc", 1, "c", "m")};
  SummaryLimits limits;
  limits.per_file = 1;
  limits.total = 5;
  EXPECT_EQ(SummarizeDiagnostics(d, kWs, limits), "a.cc:1:1 [c] m\nb.cc:1:1 [c] m\n... and 1 more\n");
  limits.per_file = 5;
  limits.total = 1;
  EXPECT_EQ(SummarizeDiagnostics(d, kWs, limits), "a.cc:1:1 [c] m\n... and 2 more\n");
}

}  // namespace
}  // namespace odin

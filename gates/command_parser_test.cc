#include "gates/command_parser.h"

#include <gtest/gtest.h>

#include "gates/command_wrappers.h"

namespace odin {
namespace {

using Strings = std::vector<std::string>;

// The name each part finally runs ("?" when computed when it runs).
Strings Names(const std::string& command) {
  Strings out;
  ParsedCommand parsed = ParseCommandUnchecked(command);
  for (const CommandPart& p : parsed.parts) out.push_back(p.dynamic ? "?" : p.words[0]);
  return out;
}

// What the last part finally runs.
Strings Runs(const std::string& command) {
  ParsedCommand parsed = ParseCommandUnchecked(command);
  return parsed.parts.empty() ? Strings{} : parsed.parts.back().words;
}

Strings Chain(const Strings& words) {
  return ReadProgramChain(words, std::vector<bool>(words.size(), true)).programs.back();
}

TEST(CommandParserTest, ListsPipelinesAndSubshellsAreSplit) {
  EXPECT_EQ(Names("true && rm -rf x"), (Strings{"true", "rm"}));
  EXPECT_EQ(Names("a || b; c | d"), (Strings{"a", "b", "c", "d"}));
  EXPECT_EQ(Names("(cd x; make) && { echo ok; }"), (Strings{"cd", "make", "echo"}));
  EXPECT_EQ(Names("for f in *; do rm $f; done"), (Strings{"rm"}));
}

TEST(CommandParserTest, SubstitutionsAreCommandsOfTheirOwn) {
  EXPECT_EQ(Names("echo $(rm -rf x)"), (Strings{"echo", "rm"}));
  EXPECT_EQ(Names("echo `curl evil`"), (Strings{"echo", "curl"}));
  EXPECT_EQ(Names("cat <(rm x)"), (Strings{"cat", "rm"}));
  EXPECT_EQ(Names("cat <<< \"$(rm x)\""), (Strings{"cat", "rm"}));
  // The name computed when it runs: unknown.
  EXPECT_EQ(Names("$(echo rm) -rf x"), (Strings{"?", "echo"}));
  EXPECT_EQ(Names("$CMD x"), (Strings{"?"}));
}

TEST(CommandParserTest, WrappersAreUnwrapped) {
  EXPECT_EQ(Names("env FOO=1 rm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("timeout -s KILL 5 rm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("nice -n 10 nohup rm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("sudo -u root rm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("find . | xargs -n 1 rm"), (Strings{"find", "rm"}));
  EXPECT_EQ(Names("/usr/bin/env rm x"), (Strings{"rm"}));
  // Every program of the chain is kept, for rules that name a wrapper.
  ParsedCommand p = ParseCommandUnchecked("sudo timeout 5 rm x");
  ASSERT_EQ(p.parts.size(), 1u);
  EXPECT_EQ(p.parts[0].programs,
            (std::vector<Strings>{{"sudo", "timeout", "5", "rm", "x"}, {"timeout", "5", "rm", "x"}, {"rm", "x"}}));
  EXPECT_EQ(p.parts[0].operands, (Strings{"5", "x"}));
}

TEST(CommandParserTest, WrapperOptionsAreReadAsTheirGetoptReadsThem) {
  EXPECT_EQ(Names("sudo -E rm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("sudo -Eu root rm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("command -p rm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("exec -a name rm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("xargs -0 rm"), (Strings{"rm"}));
  EXPECT_EQ(Names("xargs -0n 1 rm"), (Strings{"rm"}));
  EXPECT_EQ(Names("xargs -I{} rm {}"), (Strings{"rm"}));
  EXPECT_EQ(Names("xargs -i rm {}"), (Strings{"rm"}));
  EXPECT_EQ(Names("busybox rm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("nice -n5 rm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("nice -5 rm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("stdbuf -o0 -eL rm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("ionice -c2 -n7 rm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("chrt -f 10 rm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("taskset -c 0 rm -rf x"), (Strings{"rm"}));
  EXPECT_EQ(Names("setpriv --reuid 1000 --clear-groups rm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("flock /tmp/l rm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("time -p rm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("builtin command exec rm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("doas -u root rm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("env -i -u HOME -C . rm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("env --chdir=. --unset HOME -- rm x"), (Strings{"rm"}));
  // A unique prefix of a long option is that option (getopt_long).
  EXPECT_EQ(Names("env --chd . rm x"), (Strings{"rm"}));
}

TEST(CommandParserTest, WrappersTheReviewFoundAreUnwrapped) {
  EXPECT_EQ(Names("unshare -r rm v"), (Strings{"rm"}));
  EXPECT_EQ(Names("unshare --mount=/x -U rm v"), (Strings{"rm"}));
  EXPECT_EQ(Names("prlimit --nofile=1024 rm v"), (Strings{"rm"}));
  EXPECT_EQ(Names("runuser -u root -- rm v"), (Strings{"rm"}));
  EXPECT_EQ(Names("nsenter -t 1 -m rm v"), (Strings{"rm"}));
  EXPECT_EQ(Names("fakeroot rm v"), (Strings{"rm"}));
  EXPECT_EQ(Names("fakeroot -- rm v"), (Strings{"rm"}));
  EXPECT_EQ(Names("valgrind --tool=memcheck -q rm v"), (Strings{"rm"}));
  EXPECT_EQ(Names("strace -f -o /dev/null rm v"), (Strings{"rm"}));
  EXPECT_EQ(Names("coproc rm v"), (Strings{"rm"}));
  // Wrappers that hand on a command line: parsed again.
  EXPECT_EQ(Names("su -c 'rm v'"), (Strings{"su", "rm"}));
  EXPECT_EQ(Names("su root -c 'rm v'"), (Strings{"su", "rm"}));
  EXPECT_EQ(Names("runuser root -c 'rm v'"), (Strings{"runuser", "rm"}));
  EXPECT_EQ(Names("script -qc 'rm v' /dev/null"), (Strings{"script", "rm"}));
  EXPECT_EQ(Names("watch -g rm v"), (Strings{"watch", "rm"}));
  EXPECT_EQ(Names("watch -n 1 'rm v'"), (Strings{"watch", "rm"}));
  EXPECT_EQ(Names("watch -x rm v"), (Strings{"rm"}));
  EXPECT_EQ(Names("flock /tmp/l -c 'rm -rf x'"), (Strings{"flock", "rm"}));
  // Those that read commands from their input cannot be judged.
  EXPECT_EQ(Names("su"), (Strings{"?"}));
  EXPECT_EQ(Names("script -q"), (Strings{"?"}));
}

TEST(CommandParserTest, CoprocessBodiesAreRead) {
  EXPECT_EQ(Names("coproc X { rm v; }"), (Strings{"rm", "}"}));
  EXPECT_EQ(Names("coproc { rm v; }"), (Strings{"rm", "}"}));
  EXPECT_EQ(Names("coproc X (rm v)"), (Strings{"?", "rm"}));
}

TEST(CommandParserTest, QuotingAndEscapesAreRemovedAsTheShellDoes) {
  EXPECT_EQ(Names("\\rm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("r''m x"), (Strings{"rm"}));
  EXPECT_EQ(Names("'r'm x"), (Strings{"rm"}));
  EXPECT_EQ(Names("\"r\"m x"), (Strings{"rm"}));
  EXPECT_EQ(Names("$'rm' x"), (Strings{"rm"}));
  EXPECT_EQ(Names("$'r\\x6d' x"), (Strings{"rm"}));
  EXPECT_EQ(Names("$'\\162\\155' x"), (Strings{"rm"}));
  EXPECT_EQ(Names("$'r\\u006d' x"), (Strings{"rm"}));
  EXPECT_EQ(Names("$\"rm\" x"), (Strings{"rm"}));
  EXPECT_EQ(Runs("git commit -m 'a message' \"x y\""), (Strings{"git", "commit", "-m", "a message", "x y"}));
  EXPECT_EQ(Runs("echo \"a\\$b\" \"c\\d\""), (Strings{"echo", "a$b", "c\\d"}));
}

TEST(CommandParserTest, LineContinuationsDoNotSplitWords) {
  EXPECT_EQ(Runs("r\\\nm v"), (Strings{"rm", "v"}));
  EXPECT_EQ(Runs("\"r\\\nm\" v"), (Strings{"rm", "v"}));
  EXPECT_EQ(Runs("git \\\n  pu\\\nsh"), (Strings{"git", "push"}));
  EXPECT_EQ(Names("a=b\\\nc rm"), (Strings{"rm"}));
  // An escaped backslash before a newline: two commands.
  EXPECT_EQ(Names("echo \\\\\nrm v"), (Strings{"echo", "rm"}));
  // In single quotes, comments and here-documents it stays.
  EXPECT_EQ(Runs("echo 'a\\\nb'"), (Strings{"echo", "a\\\nb"}));
  EXPECT_EQ(Names("# note \\\nrm v"), (Strings{"rm"}));
  EXPECT_EQ(Names("cat <<'EOF'\nx\\\nEOF\nrm v"), (Strings{"cat", "rm"}));
}

TEST(CommandParserTest, BraceExpansionMakesWords) {
  EXPECT_EQ(Runs("r{m,x} v"), (Strings{"rm", "rx", "v"}));
  EXPECT_EQ(Runs("/bin/{rm,x} v"), (Strings{"/bin/rm", "/bin/x", "v"}));
  EXPECT_EQ(Runs("echo a{1..3}"), (Strings{"echo", "a1", "a2", "a3"}));
  EXPECT_EQ(Runs("echo '{a,b}' {} {x}"), (Strings{"echo", "{a,b}", "{}", "{x}"}));
  // Past the limit it is unknown.
  EXPECT_EQ(Names("{1..100000} x"), (Strings{"?"}));
  // {rm,x} alone does not parse: it needs approval (see the rules' tests).
  EXPECT_FALSE(ParseCommandUnchecked("{rm,x} v").complete);
}

TEST(CommandParserTest, GlobsInANameAreUnknown) {
  EXPECT_EQ(Names("/usr/bin/r[m] -rf x"), (Strings{"?"}));
  EXPECT_EQ(Names("/usr/bin/r? -rf x"), (Strings{"?"}));
  EXPECT_EQ(Names("'/usr/bin/r?' x"), (Strings{"/usr/bin/r?"}));
}

TEST(CommandParserTest, ShellStringsAndEvalAreParsedAgain) {
  EXPECT_EQ(Names("bash -c 'rm -rf x'"), (Strings{"bash", "rm"}));
  EXPECT_EQ(Names("sh -c \"true && rm x\""), (Strings{"sh", "true", "rm"}));
  EXPECT_EQ(Names("bash -lc 'git push'"), (Strings{"bash", "git"}));
  EXPECT_EQ(Names("bash -x -c 'rm x'"), (Strings{"bash", "rm"}));
  EXPECT_EQ(Names("sh -ec 'rm x'"), (Strings{"sh", "rm"}));
  EXPECT_EQ(Names("sh -c -- 'rm v'"), (Strings{"sh", "rm"}));
  EXPECT_EQ(Names("bash -c -- 'rm v'"), (Strings{"bash", "rm"}));
  EXPECT_EQ(Names("bash -o pipefail -c 'rm v'"), (Strings{"bash", "rm"}));
  EXPECT_EQ(Names("fish --command='rm v'"), (Strings{"fish", "rm"}));
  EXPECT_EQ(Names("eval rm -rf x"), (Strings{"eval", "rm"}));
  EXPECT_EQ(Names("eval -- rm v"), (Strings{"eval", "rm"}));
  EXPECT_EQ(Names("eval 'r''m' v"), (Strings{"eval", "rm"}));
  EXPECT_EQ(Names("bash -c \"bash -c 'rm x'\""), (Strings{"bash", "bash", "rm"}));
  EXPECT_EQ(Names("env -S 'rm -rf x'"), (Strings{"env", "rm"}));
  EXPECT_EQ(Names("env -S'rm v'"), (Strings{"env", "rm"}));
  EXPECT_EQ(Names("env --split-string='rm v'"), (Strings{"env", "rm"}));
  EXPECT_EQ(Names("find . -name '*.o' -exec rm {} \\;"), (Strings{"find", "rm"}));
  EXPECT_EQ(Names("find . -exec sh -c 'rm x' \\;"), (Strings{"find", "sh", "rm"}));
  EXPECT_EQ(Names("find . -execdir env rm {} +"), (Strings{"find", "rm"}));
  EXPECT_EQ(Names("find / -ok rm {} \\;"), (Strings{"find", "rm"}));
}

TEST(CommandParserTest, CommandsThatRunWhatTheyReadAreDynamic) {
  EXPECT_EQ(Names("bash <<< 'rm x'"), (Strings{"?"}));
  EXPECT_EQ(Names("echo rm v | sh"), (Strings{"echo", "?"}));
  EXPECT_EQ(Names("echo rm v | bash -s"), (Strings{"echo", "?"}));
  EXPECT_EQ(Names("echo rm v | bash /dev/stdin"), (Strings{"echo", "?"}));
  EXPECT_EQ(Names("bash <(echo rm v)"), (Strings{"?", "echo"}));
  EXPECT_EQ(Names("source ./env.sh"), (Strings{"?"}));
  EXPECT_EQ(Names(". ./env.sh"), (Strings{"?"}));
  EXPECT_EQ(Names("bash script.sh"), (Strings{"bash"}));
  EXPECT_EQ(Names("trap 'rm x' EXIT"), (Strings{"?"}));
  EXPECT_EQ(Names("alias ls='rm v'"), (Strings{"?"}));
  EXPECT_EQ(Names("BASH_ENV=f bash -c :"), (Strings{"?"}));
  EXPECT_EQ(Names("c=rm; exec $c -rf x"), (Strings{"?"}));
  EXPECT_EQ(Names("env \"$c\" x"), (Strings{"?"}));
  EXPECT_EQ(Names("sh -c \"$X\""), (Strings{"?"}));
  EXPECT_EQ(Names("eval \"$X\""), (Strings{"?"}));
  EXPECT_EQ(Names("env -$X rm"), (Strings{"?"}));
  // find and xargs running what they are given.
  EXPECT_EQ(Names("find / -name rm -exec {} v \\;"), (Strings{"?"}));
  EXPECT_EQ(Names("xargs -I{} {} v"), (Strings{"?"}));
}

TEST(CommandParserTest, NestedCommandLinesStopAtALimit) {
  std::string nested = "rm -rf x";
  for (int i = 0; i < 12; ++i) nested = "eval " + nested;
  Strings names = Names(nested);
  ASSERT_EQ(names.size(), static_cast<size_t>(kMaxNestedShells) + 1);
  EXPECT_EQ(names.back(), "?");
}

std::string Repeated(const std::string& unit, int times, const std::string& middle = "",
                     const std::string& close = "") {
  std::string s;
  for (int i = 0; i < times; ++i) s += unit;
  s += middle;
  for (int i = 0; i < times; ++i) s += close;
  return s;
}

TEST(CommandParserTest, DeepNestingIsRefusedWithoutRecursion) {
  // 5,000 nested $( ): 15 KB, some 15,000 syntax levels.
  ParsedCommand p = ParseCommandUnchecked(Repeated("$(", 5000, "x", ")"));
  EXPECT_EQ(p.unreadable, Unreadable::kTooDeep);
  EXPECT_TRUE(p.parts.empty());
  // Unbalanced, it does not parse (a flat error): no recursion either.
  ParsedCommand open = ParseCommandUnchecked(Repeated("$(", 5000, "x"));
  EXPECT_FALSE(open.complete);
  for (const char* unit : {"(", "{ ", "<(", "\"$(", "${x:-"}) {
    EXPECT_NO_FATAL_FAILURE(ParseCommandUnchecked(Repeated(unit, 2000))) << unit;
  }
  // Long flat lists nest in the syntax tree, not in the shell: fine.
  ParsedCommand flat = ParseCommandUnchecked("true" + Repeated(" && true", 1500));
  EXPECT_EQ(flat.unreadable, Unreadable::kNo);
  EXPECT_EQ(flat.parts.size(), 1501u);
  // Just below the limit it is read.
  std::string ok = "echo x";
  for (int i = 0; i < kMaxShellNesting; ++i) ok = "echo $(" + ok + ")";
  EXPECT_EQ(ParseCommandUnchecked(ok).unreadable, Unreadable::kNo);
  EXPECT_EQ(ParseCommandUnchecked("echo $(" + ok + ")").unreadable, Unreadable::kTooDeep);
}

// libtree-sitter 0.20.7 corrupts its heap on some long inputs: nothing
// longer than kMaxReadableCommandBytes reaches it (the 15,000 nested $( of
// the review are 45 KB).
TEST(CommandParserTest, NothingLongerThanTheLimitIsParsed) {
  EXPECT_EQ(ParseCommandUnchecked(Repeated("$(", 15000, "x", ")")).unreadable, Unreadable::kTooLong);
  EXPECT_EQ(ParseCommandUnchecked(Repeated("[[ ( ", 40000)).unreadable, Unreadable::kTooLong);
  EXPECT_EQ(ParseCommandUnchecked(std::string(kMaxReadableCommandBytes, 'a')).unreadable, Unreadable::kNo);
  ParsedCommand p = ParseCommandUnchecked(std::string(kMaxReadableCommandBytes + 1, 'a'));
  EXPECT_EQ(p.unreadable, Unreadable::kTooLong);
  EXPECT_TRUE(p.parts.empty());
}

// tree-sitter's error recovery is superlinear on some inputs: parsing stops
// at its time budget, and nothing of the command is read.
TEST(CommandParserTest, ParsingStopsAtItsTimeBudget) {
  ParsedCommand p = ParseCommandUnchecked(Repeated("[[ ( ", 3200), std::chrono::milliseconds(20));
  EXPECT_EQ(p.unreadable, Unreadable::kTooSlow);
  EXPECT_TRUE(p.parts.empty());
  // The parser starts afresh for the next command.
  EXPECT_EQ(ParseCommandUnchecked("rm v", std::chrono::milliseconds(50)).unreadable, Unreadable::kNo);
}

TEST(CommandParserTest, LongInputStaysLinear) {
  // 32 wrappers at most in one chain.
  ParsedCommand n = ParseCommandUnchecked(Repeated("nice ", 3000, "rm v"));
  ASSERT_EQ(n.parts.size(), 1u);
  EXPECT_TRUE(n.parts[0].dynamic);
  EXPECT_EQ(n.parts[0].programs.size(), kMaxWrappers + 1);
  // Braces in a long word are not expanded (finding each match is linear).
  ParsedCommand braces = ParseCommandUnchecked("echo " + Repeated("{", 7000, "", "}"));
  EXPECT_FALSE(braces.parts.at(0).known.at(1));
}

TEST(CommandParserTest, GitsGlobalOptionsAreSkipped) {
  EXPECT_EQ(Runs("git -C . push"), (Strings{"git", "push"}));
  EXPECT_EQ(Runs("git -c a=b push origin"), (Strings{"git", "push", "origin"}));
  EXPECT_EQ(Runs("git -P push"), (Strings{"git", "push"}));
  EXPECT_EQ(Runs("git --git-dir=.git --work-tree . push"), (Strings{"git", "push"}));
  EXPECT_EQ(Runs("git --no-pager -p --paginate --namespace=x --bare --exec-path push"), (Strings{"git", "push"}));
  EXPECT_EQ(Runs("git --literal-pathspecs --no-optional-locks push"), (Strings{"git", "push"}));
  EXPECT_EQ(Runs("/usr/lib/git-core/git-push origin"), (Strings{"git", "push", "origin"}));
  ParsedCommand p = ParseCommandUnchecked("git -c alias.x='!rm v' -c core.pager=less --config-env=core.editor=E x");
  ASSERT_EQ(p.parts.size(), 1u);
  ASSERT_EQ(p.parts[0].git_config.size(), 3u);
  EXPECT_EQ(p.parts[0].git_config[0].key, "alias.x");
  EXPECT_EQ(p.parts[0].git_config[0].value, "!rm v");
  EXPECT_EQ(p.parts[0].git_config[1].value, "less");
  EXPECT_TRUE(p.parts[0].git_config[2].from_env);
}

TEST(CommandParserTest, InterpretersCodeIsKept) {
  auto code = [](const std::string& command) { return ParseCommandUnchecked(command).parts.at(0).inline_code; };
  EXPECT_EQ(code("python3 -c 'import os'"), (Strings{"import os"}));
  EXPECT_EQ(code("python3.11 -Bc 'x'"), (Strings{"x"}));
  EXPECT_EQ(code("perl -lne 'print' f"), (Strings{"print"}));
  EXPECT_EQ(code("node --eval=1"), (Strings{"1"}));
  EXPECT_EQ(code("awk -F: '{print $1}' f"), (Strings{"{print $1}"}));
  EXPECT_EQ(code("awk -f prog.awk f"), (Strings{}));
  EXPECT_EQ(code("sed -e 's/a/b/' -e 1d f"), (Strings{"s/a/b/", "1d"}));
  EXPECT_EQ(code("sed 's/a/b/' f"), (Strings{"s/a/b/"}));
  EXPECT_EQ(code("gdb -batch -ex 'shell rm v'"), (Strings{"shell rm v"}));
  EXPECT_EQ(code("vim +'!rm v' -c q"), (Strings{"!rm v", "q"}));
}

TEST(CommandParserTest, AssignmentsAreCollected) {
  ParsedCommand p = ParseCommandUnchecked("A=1 B='x y' cmd; export C=\"$(pwd)\"; env D=2 e; sudo E=3 f");
  std::vector<std::pair<std::string, std::string>> seen;
  for (const Assignment& a : p.assignments) seen.push_back({a.name, a.known ? a.value : "?"});
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, std::string>>{
                      {"A", "1"}, {"B", "x y"}, {"C", "?"}, {"D", "2"}, {"E", "3"}}));
  // A quoted text that runs a command when evaluated later.
  ParsedCommand later = ParseCommandUnchecked("x='a[$(rm v)]'; echo $((x))");
  EXPECT_EQ(later.literals, (Strings{"a[$(rm v)]"}));
}

Strings DirectoriesOf(const std::string& command, const std::string& name) {
  for (const CommandPart& p : ParseCommandUnchecked(command).parts) {
    if (p.words[0] == name) return p.directories;
  }
  return {"(none)"};
}

TEST(CommandParserTest, CdIsFollowed) {
  // && runs what follows only after the cd succeeded.
  EXPECT_EQ(DirectoriesOf("cd build && cmake ..", "cmake"), (Strings{"build"}));
  EXPECT_EQ(DirectoriesOf("cd a && cd b && ls", "ls"), (Strings{"a/b"}));
  EXPECT_EQ(DirectoriesOf("cd /etc && head shadow", "head"), (Strings{"/etc"}));
  // ; runs it even after a failed cd.
  EXPECT_EQ(DirectoriesOf("cd a; ls", "ls"), (Strings{"", "a"}));
  EXPECT_EQ(DirectoriesOf("cd a && make; ls", "ls"), (Strings{"", "a"}));
  // Subshells, pipelines, || and nested shells: both.
  EXPECT_EQ(DirectoriesOf("(cd a; make); ls", "ls"), (Strings{"", "a"}));
  EXPECT_EQ(DirectoriesOf("cd a || ls", "ls"), (Strings{"", "a"}));
  EXPECT_EQ(DirectoriesOf("bash -c 'cd a'; ls", "ls"), (Strings{"", "a"}));
  EXPECT_EQ(DirectoriesOf("eval cd a; ls", "ls"), (Strings{"", "a"}));
  // pushd and popd.
  EXPECT_EQ(DirectoriesOf("pushd a && popd && ls", "ls"), (Strings{"a", ""}));
  // A function's body runs wherever it is called.
  EXPECT_EQ(DirectoriesOf("f() { cat x; }; cd a && f", "cat"), (Strings{"", "a"}));
  ParsedCommand p = ParseCommandUnchecked("cd; cd ../etc; head shadow");
  ASSERT_EQ(p.directory_changes.size(), 2u);
  EXPECT_FALSE(p.directory_changes[0].known);  // $HOME
  EXPECT_TRUE(p.directory_changes[1].known);
  for (const char* unknown :
       {"cd -", "cd ~", "cd ~/x", "cd \"$D\"", "cd $(mktemp -d)", "for i in 1 2; do cd ..; done", "f() { cd x; }"}) {
    ParsedCommand q = ParseCommandUnchecked(unknown);
    ASSERT_FALSE(q.directory_changes.empty()) << unknown;
    EXPECT_FALSE(q.directory_changes[0].known) << unknown;
  }
  // Many cd's that may each fail: too many places to follow.
  std::string many;
  for (int i = 0; i < 10; ++i) many += "cd d" + std::to_string(i) + "; ";
  ParsedCommand m = ParseCommandUnchecked(many + "ls");
  bool followed = true;
  for (const DirectoryChange& d : m.directory_changes) followed = followed && d.known;
  EXPECT_FALSE(followed);
}

TEST(CommandParserTest, RedirectionsKeepTheirDirectory) {
  // tree-sitter reads this as (cd sub && echo x) > ../y; the redirection is
  // echo's (bash), after the cd.
  ParsedCommand p = ParseCommandUnchecked("cd sub && echo x > ../y; cat < /etc/z");
  ASSERT_EQ(p.redirects.size(), 2u);
  EXPECT_EQ(p.redirects[0].target, "../y");
  EXPECT_EQ(p.redirects[0].directories, (Strings{"sub"}));
  EXPECT_EQ(p.redirects[1].target, "/etc/z");
}

TEST(CommandParserTest, TooLongIsAnError) {
  EXPECT_FALSE(ParseCommand(std::string(kMaxParsedCommandBytes + 1, 'a')).ok());
}

TEST(ProgramChainTest, ReadsEachProgramOfTheChain) {
  EXPECT_EQ(Chain({"timeout", "5", "nice", "-n", "3", "git", "-C", "x", "push"}), (Strings{"git", "push"}));
  EXPECT_EQ(Chain({"env", "A=1", "B=2"}), (Strings{"env", "A=1", "B=2"}));
  ProgramChain c = ReadProgramChain({"env", "A=1", "x"}, {true, true, true});
  EXPECT_EQ(c.environment, (Strings{"A=1"}));
  ProgramChain unknown = ReadProgramChain({"sudo", "$X", "y"}, {true, false, true});
  EXPECT_FALSE(unknown.dynamic.empty());
}

}  // namespace
}  // namespace odin

#include "gates/read_only_commands.h"

#include <gtest/gtest.h>

#include <string>

namespace odin {
namespace {

bool OnlyReads(const std::string& command) { return CommandOnlyReads(ParseCommandUnchecked(command)); }

TEST(ReadOnlyCommandsTest, ReadersOfTheListOnlyRead) {
  for (const char* c : {"true",
                        "cat a.txt",
                        "ls -la src",
                        "rg -n 'fn main' src",
                        "grep -rn TODO .",
                        "head -n 20 README.md",
                        "wc -l *.cc",
                        "git status",
                        "git status --short",
                        "git diff HEAD~1",
                        "git -C sub log --oneline -5",
                        "git show HEAD:README.md",
                        "git branch",
                        "git branch -a -v",
                        "git ls-files -o",
                        "find . -name '*.h' -type f",
                        "sort -u names.txt",
                        "uniq -c",
                        "sed -n '1,200p' main.cc",
                        "sed -n 10p a",
                        "sed '$d' a",
                        "sed -n -e 5,10p -e '$p' a",
                        "pwd",
                        "echo done",
                        "date",
                        "stat -c %s f",
                        "jq .name package.json",
                        "tree -L 2",
                        "diff -u a b",
                        "file a.out",
                        "fd -e rs"}) {
    EXPECT_TRUE(OnlyReads(c)) << c;
  }
}

TEST(ReadOnlyCommandsTest, ListsPipesSubstitutionsAndLoopsOfReadersOnlyRead) {
  for (const char* c :
       {"cd src && ls", "cat a | grep x | head -3", "echo $(git rev-parse HEAD)", "for f in *.c; do wc -l \"$f\"; done",
        "if [ -f a ]; then cat a; fi", "ls 2>&1 | head", "cat a 2>/dev/null || true", "grep x a >/dev/null",
        "cat <<EOF\nhi\nEOF", "cat < input.txt", "git log >&2", "cat \"$FILE\""}) {
    EXPECT_TRUE(OnlyReads(c)) << c;
  }
}

TEST(ReadOnlyCommandsTest, AnyRedirectionThatMayWriteAFileIsNotReadOnly) {
  for (const char* c : {"echo x > f", "cat a >> b", "ls &> out", "ls >| out", "echo x >& out", "ls > \"$OUT\"",
                        "cat a > >(tee f)", "git diff 2> err.txt"}) {
    EXPECT_FALSE(OnlyReads(c)) << c;
  }
}

TEST(ReadOnlyCommandsTest, ProgramsOffTheListAndWritingOptionsAreNotReadOnly) {
  for (const char* c :
       {"make", "npm test", "python3 -c 'print(1)'", "rm -rf x", "touch a", "tee f", "awk '{print}' a",
        "sed -i s/a/b/ f", "sed -i.bak 1d f", "sed --in-place=.b 1d f", "sed 's/a/b/' f", "sed -n '1w out' f",
        "sed -f script.sed f", "sed -n '1,5p;r other' f", "sort -o out in", "sort -uo out in", "sort --output=out in",
        "sort -T . big", "uniq in out", "find . -delete", "find . -name x -exec rm {} ;", "find . -fprint out",
        "fd -x rm", "rg --pre ./p x", "tree -o out", "file -C -m magic", "git commit -m x", "git checkout b",
        "git branch new", "git branch -D old", "git diff --output=d.patch", "git -c alias.x=y status", "git grep -O x",
        "git stash", "git", "./cat a", "/tmp/ls", "xargs cat", "timeout 5 cat a", "env X=1 cat a", "bash -c 'cat a'",
        // getopt_long and git take any prefix of a long option
        "sort --out=o.txt a", "sort --o o.txt a", "sed --i 1p a", "sed --in 1p a", "file --comp",
        "git grep --open=cat x", "git diff --outp=d", "rg --hostname-bin=x y", "rg --pre-g '*' x", "fd --exec-b rm",
        "uniq - out.txt", "tree -R -H . ."}) {
    EXPECT_FALSE(OnlyReads(c)) << c;
  }
}

TEST(ReadOnlyCommandsTest, WhatIsKnownOnlyWhenItRunsIsNotReadOnly) {
  for (const char* c :
       {"$CMD a", "$(echo cat) a", "sort $OPTS in", "git $SUB", "sed -n \"$R\" f", "PATH=./bin:$PATH cat a",
        "export PATH=.; ls", "x='a[$(rm f)]'; echo $((x))", "cat a &&", "f() { rm -rf x; }; f", "ls; rm x"}) {
    EXPECT_FALSE(OnlyReads(c)) << c;
  }
}

}  // namespace
}  // namespace odin

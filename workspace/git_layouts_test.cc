#include "workspace/git_layouts.h"

#include <sys/stat.h>
#include <unistd.h>

#include <random>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "base/subprocess.h"
#include "workspace/workspace_files.h"

namespace odin {
namespace {

TEST(GitConfigRunsProgramsTest, ReadsKeysInEveryFormGitAccepts) {
  EXPECT_EQ(GitConfigRunsPrograms("[core]\n\tfsmonitor = ./evil\n"), "core.fsmonitor");
  EXPECT_EQ(GitConfigRunsPrograms("[CORE]\nFsMonitor=./evil"), "core.fsmonitor");
  EXPECT_EQ(GitConfigRunsPrograms("[core] fsmonitor = x\n"), "core.fsmonitor");  // same line
  EXPECT_EQ(GitConfigRunsPrograms("\xEF\xBB\xBF[core]\nhooksPath=/x\n"), "core.hookspath");
  EXPECT_EQ(GitConfigRunsPrograms("[filter \"lfs\"]\n  smudge = x %f\n"), "filter.lfs.smudge");
  EXPECT_EQ(GitConfigRunsPrograms("[diff \"pdf\"]\ntextconv = x\n"), "diff.pdf.textconv");
  EXPECT_EQ(GitConfigRunsPrograms("[diff.pdf]\ntextconv = x\n"), "diff.pdf.textconv");
  EXPECT_EQ(GitConfigRunsPrograms("[include]\npath = ../x\n"), "include.path");
  EXPECT_EQ(GitConfigRunsPrograms("[includeIf \"gitdir:/\"]\npath = x\n"), "includeif.gitdir:/.path");
  EXPECT_EQ(GitConfigRunsPrograms("[credential]\nhelper = !x\n"), "credential.helper");
  EXPECT_EQ(GitConfigRunsPrograms("[alias]\nst = !sh -c x\n"), "alias.st");
  EXPECT_EQ(GitConfigRunsPrograms("[alias]\nst = status\n"), "");
  // A value continued on the next line, a key without a value, comments.
  EXPECT_EQ(GitConfigRunsPrograms("[user]\nname = a \\\n b ; c\n[core]\nbare\n# x\n; y\npager = \"less\"\n"),
            "core.pager");
  EXPECT_EQ(GitConfigRunsPrograms("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
                                  "[remote \"origin\"]\n\turl = https://x/y\n\tfetch = +refs/heads/*:refs/remotes/o/*\n"
                                  "[branch \"main\"]\n\tremote = origin\n"),
            "");
  // Keys the first list missed (the attack pass): any section that is not
  // known to be harmless counts.
  EXPECT_EQ(GitConfigRunsPrograms("[gpg \"ssh\"]\ndefaultKeyCommand = touch x\n"), "gpg.ssh.defaultkeycommand");
  EXPECT_EQ(GitConfigRunsPrograms("[tar \"tgz\"]\ncommand = x\n"), "tar.tgz.command");
  EXPECT_EQ(GitConfigRunsPrograms("[imap]\ntunnel = x\n"), "imap.tunnel");
  EXPECT_EQ(GitConfigRunsPrograms("[trailer \"s\"]\ncmd = x\n"), "trailer.s.cmd");
  EXPECT_EQ(GitConfigRunsPrograms("[sendemail]\ntoCmd = x\n"), "sendemail.tocmd");
  EXPECT_EQ(GitConfigRunsPrograms("[commit]\ngpgSign = true\n"), "commit.gpgsign");
  EXPECT_EQ(GitConfigRunsPrograms("[core]\nalternateRefsCommand = x\n"), "core.alternaterefscommand");
  // What this reader cannot follow counts as running one.
  EXPECT_EQ(GitConfigRunsPrograms("[core\nfsmonitor=x"), "(unparsable config)");
  EXPECT_EQ(GitConfigRunsPrograms("fsmonitor = x\n"), "(unparsable config)");
  EXPECT_EQ(GitConfigRunsPrograms("[core]\nx = \"open\n"), "(unparsable config)");
  EXPECT_EQ(GitConfigRunsPrograms("[core]\n\x01"), "(unparsable config)");
}

TEST(GitHeadParsesTest, TakesRefsAndObjectIdsOnly) {
  EXPECT_TRUE(GitHeadParses("ref: refs/heads/main\n"));
  EXPECT_TRUE(GitHeadParses("ref: refs/heads/feature/x-1"));
  EXPECT_TRUE(GitHeadParses(std::string(40, 'a') + "\n"));
  EXPECT_TRUE(GitHeadParses(std::string(64, '0')));
  EXPECT_FALSE(GitHeadParses("garbage\n"));
  EXPECT_FALSE(GitHeadParses(""));
  EXPECT_FALSE(GitHeadParses("ref: HEAD\n"));
  EXPECT_FALSE(GitHeadParses("ref: refs/heads/../../x\n"));
  EXPECT_FALSE(GitHeadParses("ref: refs/heads/a b\n"));
  EXPECT_FALSE(GitHeadParses(std::string(39, 'a')));
}

// Against git itself: whatever git reads from a config it accepts, if the
// table says a key runs a program, the reader must say so too (or call the
// file unparsable).
TEST(GitConfigRunsProgramsTest, NeverMissesAKeyGitItselfReads) {
  if (access("/usr/bin/git", X_OK) != 0) GTEST_SKIP() << "git is not installed";
  StatusOr<std::string> dir = MakeTempDir("odin-gitcfg");
  ASSERT_TRUE(dir.ok());
  const std::vector<std::string> headers = {"[core]",       "[CoRe]",           "[filter \"x\"]", "[diff \"p\"]",
                                            "[diff.P]",     "[alias]",          "[user]",         "[include]",
                                            "[credential]", "[core \"sub\"]",   "[remote \"o\"]", "[sequence]",
                                            "[hook \"h\"]", "[includeIf \"x\"]"};
  const std::vector<std::string> keys = {"fsmonitor", "FsMonitor", "hooksPath",  "pager", "editor",     "smudge",
                                         "textconv",  "helper",    "path",       "name",  "email",      "st",
                                         "command",   "external",  "uploadpack", "clean", "sshCommand", "bare"};
  const std::vector<std::string> values = {"= x", "=!x", "= \"a b\"", "", "= a \\\n b", "= x ; c", " = \"!x\"", "=x #"};
  const std::vector<std::string> seps = {"\n", "\n\t", " ", "\n# c\n", "\r\n"};
  std::mt19937 rng(46);
  int compared = 0;
  for (int round = 0; round < 300; ++round) {
    std::string text;
    int lines = 1 + static_cast<int>(rng() % 5);
    for (int l = 0; l < lines; ++l) {
      if (rng() % 3 == 0 || l == 0) text += headers[rng() % headers.size()] + seps[rng() % seps.size()];
      text += keys[rng() % keys.size()] + " " + values[rng() % values.size()] + seps[rng() % seps.size()];
    }
    std::string file = *dir + "/config";
    ASSERT_TRUE(WriteFileAtomic(file, text).ok());
    StatusOr<CommandOutput> listed = RunCommand({.argv = {"git", "config", "--file", file, "--list", "--name-only"},
                                                 .env = {"PATH=/usr/bin:/bin", "HOME=" + *dir}});
    ASSERT_TRUE(listed.ok());
    if (listed->exit_code != 0) continue;  // git refuses it too: nothing runs
    ++compared;
    std::string ours = GitConfigRunsPrograms(text);
    // Each key git read, judged alone by the table.
    std::string out = listed->output;
    for (size_t start = 0; start < out.size();) {
      size_t end = out.find('\n', start);
      std::string key = out.substr(start, end - start);
      start = end == std::string::npos ? out.size() : end + 1;
      size_t last = key.rfind('.');
      std::string one = "[" + key.substr(0, key.find('.')) + "]\n";
      std::string section = key.substr(0, last);
      size_t dot = section.find('.');
      if (dot != std::string::npos) {
        one = "[" + section.substr(0, dot) + " \"" + section.substr(dot + 1) + "\"]\n";
      }
      // alias.* runs a program only with '!': ask with one.
      bool risky = !GitConfigRunsPrograms(one + key.substr(last + 1) + " = !x\n").empty();
      if (risky && key.rfind("alias.", 0) != 0 && key.rfind("submodule.", 0) != 0) {
        EXPECT_FALSE(ours.empty()) << "git reads " << key << " from:\n" << text;
      }
    }
  }
  EXPECT_GT(compared, 100);
  RemoveTree(*dir);
}

class GitDirRunsProgramsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::string> dir = MakeTempDir("odin-gitdir");
    ASSERT_TRUE(dir.ok());
    dir_ = *dir;
  }
  void TearDown() override { RemoveTree(dir_); }
  int Git(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"git", "-C", dir_};
    argv.insert(argv.end(), args.begin(), args.end());
    StatusOr<CommandOutput> r = RunCommand({.argv = argv, .env = {"PATH=/usr/bin:/bin", "HOME=" + dir_}});
    return r.ok() ? r->exit_code : -1;
  }
  std::string Judge(const std::string& rel) {
    StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(dir_);
    return files.ok() ? GitDirRunsPrograms(*files, rel) : "open failed";
  }
  std::string dir_;
};

TEST_F(GitDirRunsProgramsTest, AFreshRepositoryRunsNothingAndEachWayToRunOneIsNamed) {
  if (access("/usr/bin/git", X_OK) != 0) GTEST_SKIP() << "git is not installed";
  ASSERT_EQ(Git({"init", "-q", "repo"}), 0);
  EXPECT_EQ(Judge("repo/.git"), "");
  ASSERT_EQ(Git({"-C", "repo", "config", "core.fsmonitor", "./run-me"}), 0);
  EXPECT_EQ(Judge("repo/.git"), "repo/.git/config: core.fsmonitor");
  ASSERT_EQ(Git({"-C", "repo", "config", "--unset", "core.fsmonitor"}), 0);
  EXPECT_EQ(Judge("repo/.git"), "");
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/repo/.git/hooks/post-checkout", "#!/bin/sh\n").ok());
  EXPECT_EQ(Judge("repo/.git"), "repo/.git/hooks/post-checkout");
  ASSERT_EQ(unlink((dir_ + "/repo/.git/hooks/post-checkout").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/repo/.git/commondir", "/elsewhere\n").ok());
  EXPECT_EQ(Judge("repo/.git"), "repo/.git/commondir");
  ASSERT_EQ(unlink((dir_ + "/repo/.git/commondir").c_str()), 0);
  // A submodule's git directory, below modules/.
  ASSERT_EQ(Git({"init", "-q", "--bare", "repo/.git/modules/lib/x"}), 0);
  EXPECT_EQ(Judge("repo/.git"), "");
  ASSERT_EQ(Git({"-C", "repo/.git/modules/lib/x", "config", "filter.a.clean", "x"}), 0);
  EXPECT_EQ(Judge("repo/.git"), "repo/.git/modules/lib/x/config: filter.a.clean");
  // A config that is a symlink is not read through.
  ASSERT_EQ(symlink("/etc/passwd", (dir_ + "/cfg").c_str()), 0);
  ASSERT_EQ(mkdir((dir_ + "/bare").c_str(), 0755), 0);
  ASSERT_EQ(symlink("../cfg", (dir_ + "/bare/config").c_str()), 0);
  EXPECT_EQ(Judge("bare"), "bare/config: not a regular file");
}

}  // namespace
}  // namespace odin

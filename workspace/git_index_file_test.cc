#include "workspace/git_index_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "base/unique_fd.h"
#include "tests/test_util.h"

namespace odin {
namespace {

// Indexes git itself wrote, in each version, read entry by entry against
// what git says of them.
class GitIndexFileTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    Sh("git init -q && git config user.name t && git config user.email t@t");
    ASSERT_TRUE(WriteFileAtomic(ws_.Join("a.txt"), "alpha\n").ok());
    ASSERT_TRUE(WriteFileAtomic(ws_.Join("run.sh"), "echo hi\n").ok());
    ASSERT_EQ(chmod(ws_.Join("run.sh").c_str(), 0755), 0);
    Sh("git add a.txt run.sh");
    // Many more entries (no files needed): the index passes the reader's
    // 1 MiB window, with paths sharing long prefixes (v4 compresses them).
    std::string info;
    for (int i = 0; i < 20000; ++i) {
      char oid[41];
      snprintf(oid, sizeof oid, "%040x", i + 1);
      info += "100644 " + std::string(oid) + "\tsrc/module" + std::to_string(i % 7) + "/deeply/nested/file" +
              std::to_string(i) + ".cc\n";
    }
    ASSERT_TRUE(WriteFileAtomic(ws_.Join(".git/info-lines"), info).ok());
    Sh("git update-index --add --index-info < .git/info-lines");
    Sh("git update-index --index-version " + std::to_string(GetParam()));
    if (GetParam() >= 3) Sh("git update-index --skip-worktree a.txt");
  }
  void Sh(const std::string& script) {
    StatusOr<CommandOutput> out =
        RunCommand({.argv = {"sh", "-c", "cd '" + ws_.path() + "' && " + script}, .env = CurrentEnvironment()});
    ASSERT_TRUE(out.ok() && out->exit_code == 0) << script << ": " << (out.ok() ? out->output : out.status().message());
  }
  // git's word on path: "MODE OID" from ls-files --stage.
  std::string GitSays(const std::string& path) {
    StatusOr<CommandOutput> out =
        RunCommand({.argv = {"git", "-C", ws_.path(), "ls-files", "--stage", "--", path}, .env = CurrentEnvironment()});
    EXPECT_TRUE(out.ok());
    return out.ok() ? out->output.substr(0, out->output.find(' ', 7)) : "";
  }
  static std::string Described(const GitIndexEntry& e) {
    char mode[16];
    snprintf(mode, sizeof mode, "%o", e.mode);
    std::string hex;
    for (unsigned char c : e.oid) {
      char two[3];
      snprintf(two, sizeof two, "%02x", c);
      hex += two;
    }
    return std::string(mode) + " " + hex;
  }
  testing::TempWorkspace ws_;
};

TEST_P(GitIndexFileTest, FindsWhatGitSaysOfEachEntry) {
  UniqueFd fd(open(ws_.Join(".git/index").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  for (std::string path : {"a.txt", "run.sh", "src/module0/deeply/nested/file0.cc",
                           "src/module4/deeply/nested/file10000.cc", "src/module5/deeply/nested/file19997.cc"}) {
    std::optional<GitIndexEntry> e = FindGitIndexEntry(fd.get(), path);
    ASSERT_TRUE(e.has_value()) << path;
    EXPECT_EQ(Described(*e), GitSays(path)) << path;
  }
  std::optional<GitIndexEntry> a = FindGitIndexEntry(fd.get(), "a.txt");
  EXPECT_EQ(a->size, 6u);
  EXPECT_EQ(a->skip_worktree, GetParam() >= 3);
  EXPECT_EQ(FindGitIndexEntry(fd.get(), "run.sh")->mode, 0100755u);
  EXPECT_FALSE(FindGitIndexEntry(fd.get(), "missing.txt").has_value());
  EXPECT_FALSE(FindGitIndexEntry(fd.get(), "src/module0").has_value()) << "a directory is no entry";
  EXPECT_FALSE(FindGitIndexEntry(fd.get(), "zzz").has_value());
}

// Many paths in one pass (a look that found thousands of changed files must
// not read the index once for each): the same answers as one at a time.
TEST_P(GitIndexFileTest, ManyPathsInOnePassFindWhatOneAtATimeFinds) {
  UniqueFd fd(open(ws_.Join(".git/index").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  std::vector<std::string> paths = {"a.txt",
                                    "missing.txt",
                                    "run.sh",
                                    "src/module0/deeply/nested/file0.cc",
                                    "src/module0/deeply/nested/file0.cc.x",
                                    "src/module4/deeply/nested/file10000.cc",
                                    "src/module5/deeply/nested/file19997.cc",
                                    "zzz"};
  std::vector<std::optional<GitIndexEntry>> all = FindGitIndexEntries(fd.get(), paths);
  ASSERT_EQ(all.size(), paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    std::optional<GitIndexEntry> one = FindGitIndexEntry(fd.get(), paths[i]);
    ASSERT_EQ(all[i].has_value(), one.has_value()) << paths[i];
    if (one) {
      EXPECT_EQ(Described(*all[i]), Described(*one)) << paths[i];
    }
  }
  EXPECT_EQ(all[0].has_value() + all[2].has_value() + all[3].has_value() + all[5].has_value() + all[6].has_value(), 5);
  EXPECT_FALSE(all[1] || all[4] || all[7]);
}

TEST_P(GitIndexFileTest, AFileThatIsNoIndexOrIsCutShortFindsNothing) {
  StatusOr<std::string> read = ReadFileToString(ws_.Join(".git/index"));
  ASSERT_TRUE(read.ok());
  const std::string& index = *read;
  for (size_t keep : {size_t{0}, size_t{11}, index.size() / 2}) {
    ASSERT_TRUE(WriteFileAtomic(ws_.Join("cut"), index.substr(0, keep)).ok());
    UniqueFd fd(open(ws_.Join("cut").c_str(), O_RDONLY | O_CLOEXEC));
    EXPECT_FALSE(FindGitIndexEntry(fd.get(), "src/module5/deeply/nested/file19997.cc").has_value()) << keep;
  }
  ASSERT_TRUE(WriteFileAtomic(ws_.Join("cut"), "PACK" + index.substr(4)).ok());
  UniqueFd fd(open(ws_.Join("cut").c_str(), O_RDONLY | O_CLOEXEC));
  EXPECT_FALSE(FindGitIndexEntry(fd.get(), "a.txt").has_value());
}

INSTANTIATE_TEST_SUITE_P(Versions, GitIndexFileTest, ::testing::Values(2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& i) { return "V" + std::to_string(i.param); });

}  // namespace
}  // namespace odin

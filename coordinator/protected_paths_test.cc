#include "coordinator/protected_paths.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace odin {
namespace {

TEST(ProtectedPathsTest, TheListedFilesAndWhatIsBelowThem) {
  const std::string ws = "/src/repo";
  for (const char* p : {"/src/repo/.git/config", "/src/repo/.git/hooks", "/src/repo/.git/hooks/pre-commit",
                        "/src/repo/.odin/odin.db", "/src/repo/odinconfig.json", "/src/repo/ODIN.md",
                        "/src/repo/AGENTS.md", "/src/repo/.bashrc", "/src/repo/.envrc", "/src/repo/docs/ODIN.md",
                        "/src/repo/a/b/AGENTS.md"}) {
    EXPECT_TRUE(IsProtectedPath(p, ws)) << p;
  }
}

TEST(ProtectedPathsTest, NeighboursAndOtherDirectoriesAreNot) {
  const std::string ws = "/src/repo";
  for (const char* p : {"/src/repo/.git/HEAD", "/src/repo/.gitignore", "/src/repo/docs/ODIN.md.txt",
                        "/src/repo/odinconfig.json.bak", "/src/repo/.odinrc", "/src/repo2/ODIN.md", "/src/repo",
                        "/etc/passwd"}) {
    EXPECT_FALSE(IsProtectedPath(p, ws)) << p;
  }
}

TEST(ProtectedPathsTest, ASnapshotPutsBackChangedFilesAndRemovesNewOnes) {
  std::string ws = *MakeTempDir("odin-protected");
  ASSERT_TRUE(MakeDirs(ws + "/.git/hooks").ok());
  ASSERT_TRUE(WriteFileAtomic(ws + "/.git/config", "[core]\n").ok());
  ASSERT_TRUE(WriteFileAtomic(ws + "/ODIN.md", "rules\n").ok());
  ProtectedSnapshot before = SnapshotProtected(ws);
  EXPECT_EQ(RestoreProtected(ws, before), std::vector<std::string>{});  // nothing changed
  ASSERT_TRUE(WriteFileAtomic(ws + "/.git/config", "[core]\n\tfsmonitor=evil\n").ok());
  ASSERT_TRUE(WriteFileAtomic(ws + "/AGENTS.md", "new instructions\n").ok());
  ASSERT_TRUE(WriteFileAtomic(ws + "/.git/hooks/pre-commit", "evil\n").ok());
  ASSERT_TRUE(WriteFileAtomic(ws + "/notes.txt", "not protected\n").ok());
  std::vector<std::string> restored = RestoreProtected(ws, before);
  std::sort(restored.begin(), restored.end());
  EXPECT_EQ(restored, (std::vector<std::string>{".git/config", ".git/hooks/pre-commit", "AGENTS.md"}));
  EXPECT_EQ(*ReadFileToString(ws + "/.git/config"), "[core]\n");
  EXPECT_FALSE(PathExists(ws + "/AGENTS.md"));
  EXPECT_FALSE(PathExists(ws + "/.git/hooks/pre-commit"));
  EXPECT_EQ(*ReadFileToString(ws + "/ODIN.md"), "rules\n");
  EXPECT_TRUE(PathExists(ws + "/notes.txt"));
  RemoveTree(ws);
}

}  // namespace
}  // namespace odin

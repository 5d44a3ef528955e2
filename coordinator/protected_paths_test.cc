#include "coordinator/protected_paths.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace odin

#include "workers/cargo_mirror.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace odin {
namespace {

class CargoMirrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::string> dir = MakeTempDir("cargo-mirror-test");
    ASSERT_TRUE(dir.ok());
    dir_ = *dir;
    ws_ = JoinPath(dir_, "ws");
    copy_ = JoinPath(dir_, "copy");
  }
  void TearDown() override { RemoveTree(dir_); }

  void Write(const std::string& rel, const std::string& text) {
    ASSERT_TRUE(MakeDirs(DirName(JoinPath(ws_, rel))).ok());
    ASSERT_TRUE(WriteFileAtomic(JoinPath(ws_, rel), text).ok());
  }
  std::string Copied(const std::string& rel) {
    StatusOr<std::string> text = ReadFileToString(JoinPath(copy_, rel));
    return text.ok() ? *text : "<missing>";
  }
  int64_t MtimeNs(const std::string& path) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return -1;
    return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  }

  std::string dir_, ws_, copy_;
};

TEST_F(CargoMirrorTest, TheRootIsTheNearestManifestOrTheWorkspaceThatHoldsIt) {
  Write("lone/Cargo.toml", "[package]\nname = \"lone\"\n");
  Write("lone/src/lib.rs", "");
  EXPECT_EQ(CargoRoot(ws_, JoinPath(ws_, "lone/src/lib.rs")), JoinPath(ws_, "lone"));

  Write("Cargo.toml", "# members below\n  [workspace]\nmembers = [\"crates/a\"]\n");
  Write("crates/a/Cargo.toml", "[package]\nname = \"a\"\n");
  Write("crates/a/src/lib.rs", "");
  EXPECT_EQ(CargoRoot(ws_, JoinPath(ws_, "crates/a/src/lib.rs")), ws_);

  // cargo-fuzz's fuzz/ is a workspace of its own inside the outer one.
  Write("fuzz/Cargo.toml", "[package]\nname = \"fuzz\"\n\n[workspace]\nmembers = [\".\"]\n");
  Write("fuzz/fuzz_targets/a.rs", "");
  EXPECT_EQ(CargoRoot(ws_, JoinPath(ws_, "fuzz/fuzz_targets/a.rs")), JoinPath(ws_, "fuzz"));

  Write("loose/x.rs", "");
  EXPECT_EQ(CargoRoot(JoinPath(ws_, "loose"), JoinPath(ws_, "loose/x.rs")), "");
}

TEST_F(CargoMirrorTest, ACrateOutsideAnyWorkspaceManifestIsItsOwnRoot) {
  Write("Cargo.toml", "[package]\nname = \"top\"\n");  // no [workspace]
  Write("sub/Cargo.toml", "[package]\nname = \"sub\"\n");
  Write("sub/src/main.rs", "");
  EXPECT_EQ(CargoRoot(ws_, JoinPath(ws_, "sub/src/main.rs")), JoinPath(ws_, "sub"));
}

TEST_F(CargoMirrorTest, SyncCopiesTheCrateAndLeavesBuildOutputAndVersionControlOut) {
  Write("Cargo.toml", "[package]\nname = \"c\"\n");
  Write("src/lib.rs", "pub fn f() {}\n");
  Write("target/CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n");
  Write("target/debug/big", "output");
  Write(".git/HEAD", "ref: refs/heads/main\n");
  Write(".odin/odin.db", "ledger");
  ASSERT_EQ(symlink("lib.rs", JoinPath(ws_, "src/alias.rs").c_str()), 0);
  CargoMirror m(ws_, copy_);
  ASSERT_TRUE(m.Sync().ok());
  EXPECT_EQ(Copied("src/lib.rs"), "pub fn f() {}\n");
  EXPECT_EQ(Copied("Cargo.toml"), "[package]\nname = \"c\"\n");
  EXPECT_FALSE(PathExists(JoinPath(copy_, "target")));
  EXPECT_FALSE(PathExists(JoinPath(copy_, ".git")));
  EXPECT_FALSE(PathExists(JoinPath(copy_, ".odin")));
  StatusOr<std::string> link = ReadSymlink(JoinPath(copy_, "src/alias.rs"));
  ASSERT_TRUE(link.ok());
  EXPECT_EQ(*link, "lib.rs");
}

TEST_F(CargoMirrorTest, PutStandsInForTheDiskUntilTheNextSync) {
  Write("Cargo.toml", "[package]\nname = \"c\"\n");
  Write("src/lib.rs", "on disk\n");
  Write("src/other.rs", "other\n");
  CargoMirror m(ws_, copy_);
  ASSERT_TRUE(m.Sync().ok());
  int64_t other_before = MtimeNs(JoinPath(copy_, "src/other.rs"));
  ASSERT_TRUE(m.Put(JoinPath(ws_, "src/lib.rs"), "asked about\n").ok());
  EXPECT_EQ(Copied("src/lib.rs"), "asked about\n");
  EXPECT_EQ(Copied("src/lib.rs"), "asked about\n");
  ASSERT_TRUE(m.Sync().ok());
  EXPECT_EQ(Copied("src/lib.rs"), "on disk\n");
  // What did not change is not written again: cargo's mtime fingerprints
  // then rebuild only what they must.
  EXPECT_EQ(MtimeNs(JoinPath(copy_, "src/other.rs")), other_before);
  EXPECT_FALSE(m.Put(JoinPath(dir_, "elsewhere.rs"), "x").ok());
}

TEST_F(CargoMirrorTest, SyncFollowsChangesAndRemovalsOnDisk) {
  Write("Cargo.toml", "[package]\nname = \"c\"\n");
  Write("src/lib.rs", "one\n");
  Write("src/gone.rs", "gone\n");
  CargoMirror m(ws_, copy_);
  ASSERT_TRUE(m.Sync().ok());
  Write("src/lib.rs", "two, longer\n");
  ASSERT_EQ(unlink(JoinPath(ws_, "src/gone.rs").c_str()), 0);
  Write("src/new.rs", "new\n");
  ASSERT_TRUE(m.Sync().ok());
  EXPECT_EQ(Copied("src/lib.rs"), "two, longer\n");
  EXPECT_EQ(Copied("src/gone.rs"), "<missing>");
  EXPECT_EQ(Copied("src/new.rs"), "new\n");
}

TEST_F(CargoMirrorTest, NothingIsWrittenThroughALinkTheCrateMadeAndLinksOutOfItStillLeadOut) {
  Write("Cargo.toml", "[package]\nname = \"c\"\n");
  Write("src/lib.rs", "lib\n");
  ASSERT_TRUE(MakeDirs(JoinPath(dir_, "outside")).ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir_, "outside/shared.rs"), "shared\n").ok());
  ASSERT_EQ(symlink("../../outside/shared.rs", JoinPath(ws_, "src/shared.rs").c_str()), 0);
  ASSERT_EQ(symlink("../outside", JoinPath(ws_, "gen").c_str()), 0);
  CargoMirror m(ws_, copy_);
  ASSERT_TRUE(m.Sync().ok());
  // Out of the crate: the link leads where it leads on disk.
  EXPECT_EQ(*ReadSymlink(JoinPath(copy_, "src/shared.rs")), JoinPath(dir_, "outside/shared.rs"));
  EXPECT_EQ(Copied("src/shared.rs"), "shared\n");
  // A file asked about below the linked directory is written in the copy,
  // never through the link.
  ASSERT_TRUE(m.Put(JoinPath(ws_, "gen/shared.rs"), "asked\n").ok());
  EXPECT_EQ(*ReadFileToString(JoinPath(dir_, "outside/shared.rs")), "shared\n");
  EXPECT_EQ(Copied("gen/shared.rs"), "asked\n");

  // The disk's symlink becomes a directory, a file becomes a directory.
  ASSERT_EQ(unlink(JoinPath(ws_, "gen").c_str()), 0);
  Write("gen/made.rs", "made\n");
  ASSERT_EQ(unlink(JoinPath(ws_, "src/lib.rs").c_str()), 0);
  Write("src/lib.rs/inner.rs", "inner\n");
  ASSERT_TRUE(m.Sync().ok());
  EXPECT_EQ(Copied("gen/made.rs"), "made\n");
  EXPECT_EQ(Copied("src/lib.rs/inner.rs"), "inner\n");
  EXPECT_EQ(*ReadFileToString(JoinPath(dir_, "outside/shared.rs")), "shared\n");
  EXPECT_FALSE(PathExists(JoinPath(dir_, "outside/made.rs")));
}

TEST_F(CargoMirrorTest, DepInfoSaysWhetherAFileWasBuiltAndIsForgottenBeforeACheck) {
  Write("Cargo.toml", "[package]\nname = \"c\"\n");
  Write("src/lib.rs", "");
  CargoMirror m(ws_, copy_);
  std::string deps = JoinPath(m.target_dir(), "debug/deps");
  ASSERT_TRUE(MakeDirs(deps).ok());
  // As rustc writes it: the workspace's own files relative, others absolute.
  ASSERT_TRUE(WriteFileAtomic(JoinPath(deps, "c-1.d"), deps + "/libc-1.rmeta: src/lib.rs src/a\\ b.rs " + copy_ +
                                                           "/gen.rs\n\nsrc/lib.rs:\nsrc/a\\ b.rs:\n" + copy_ +
                                                           "/gen.rs:\n")
                  .ok());
  EXPECT_TRUE(m.Compiled(JoinPath(ws_, "src/lib.rs")));
  EXPECT_TRUE(m.Compiled(JoinPath(ws_, "src/a b.rs")));
  EXPECT_TRUE(m.Compiled(JoinPath(ws_, "gen.rs")));
  EXPECT_FALSE(m.Compiled(JoinPath(ws_, "tests/t.rs")));
  EXPECT_FALSE(m.Compiled(JoinPath(dir_, "elsewhere.rs")));
  m.ForgetDepInfo();
  EXPECT_FALSE(m.Compiled(JoinPath(ws_, "src/lib.rs")));
}

TEST_F(CargoMirrorTest, ATreePastTheLimitsIsRefusedWithWhy) {
  Write("Cargo.toml", "[package]\nname = \"c\"\n");
  for (int i = 0; i < 5; ++i) Write("src/m" + std::to_string(i) + ".rs", "x");
  CargoMirror few(ws_, copy_, {.max_files = 3});
  Status s = few.Sync();
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("more than 3 files and directories"), std::string::npos) << s.message();
  CargoMirror small(ws_, JoinPath(dir_, "copy2"), {.max_bytes = 4});
  s = small.Sync();
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace odin

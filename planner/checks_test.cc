#include "planner/checks.h"

#include <sys/stat.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace odin {
namespace {

// Profiles

TEST(ProfileTest, ParsesEveryProfileNameAndNamesItBack) {
  for (Profile p : {Profile::kFast, Profile::kAuto, Profile::kSafe, Profile::kStrict}) {
    Profile parsed = p == Profile::kFast ? Profile::kStrict : Profile::kFast;
    ASSERT_TRUE(ParseProfile(ProfileName(p), &parsed)) << ProfileName(p);
    EXPECT_EQ(parsed, p);
  }
  EXPECT_STREQ(ProfileName(Profile::kFast), "fast");
  EXPECT_STREQ(ProfileName(Profile::kAuto), "auto");
  EXPECT_STREQ(ProfileName(Profile::kSafe), "safe");
  EXPECT_STREQ(ProfileName(Profile::kStrict), "strict");
}

TEST(ProfileTest, RejectsUnknownNamesAndLeavesTheProfileAlone) {
  for (const char* bad : {"", "Fast", "AUTO", "safe ", "paranoid"}) {
    Profile p = Profile::kSafe;
    EXPECT_FALSE(ParseProfile(bad, &p)) << "'" << bad << "'";
    EXPECT_EQ(p, Profile::kSafe);
  }
}

// ChecksForProfile and project detection

class ChecksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::string> dir = MakeTempDir("odin-checks-test");
    ASSERT_TRUE(dir.ok()) << dir.status().ToString();
    ws_ = *dir;
    // No pytest on PATH unless a test puts one there; cargo's clippy is.
    const char* path = getenv("PATH");
    saved_path_ = path != nullptr ? path : "";
    StatusOr<std::string> tools = MakeTempDir("odin-checks-tools");
    ASSERT_TRUE(tools.ok());
    tools_ = *tools;
    ASSERT_TRUE(WriteFileAtomic(JoinPath(tools_, "cargo-clippy"), "#!/bin/sh\n").ok());
    ASSERT_EQ(chmod(JoinPath(tools_, "cargo-clippy").c_str(), 0755), 0);
    setenv("PATH", ("/nonexistent:" + tools_).c_str(), 1);
  }
  void TearDown() override {
    setenv("PATH", saved_path_.c_str(), 1);
    RemoveTree(ws_);
    RemoveTree(tools_);
  }
  std::string saved_path_;
  std::string tools_;

  void Write(const std::string& name, const std::string& content = "") {
    std::string path = JoinPath(ws_, name);
    ASSERT_TRUE(MakeDirs(DirName(path)).ok());
    ASSERT_TRUE(WriteFileAtomic(path, content).ok()) << path;
  }

  // The checks of profile, by name: "command | origin".
  std::vector<std::string> Checks(Profile profile, const ChecksConfig& config = {}) {
    std::vector<std::string> out;
    for (const CheckSpec& c : ChecksForProfile(profile, config, ws_)) {
      out.push_back(c.name + ": " + c.command + " | " + c.origin);
    }
    return out;
  }

  std::string ws_;
};

using Lines = std::vector<std::string>;

TEST_F(ChecksTest, FastRunsNoChecks) {
  Write("Cargo.toml");
  EXPECT_TRUE(ChecksForProfile(Profile::kFast, {}, ws_).empty());
  ChecksConfig configured;
  configured.build = "make";
  EXPECT_TRUE(ChecksForProfile(Profile::kFast, configured, ws_).empty());
}

TEST_F(ChecksTest, AutoRunsLintAndTests) {
  Write("Cargo.toml");
  EXPECT_EQ(Checks(Profile::kAuto), (Lines{"lint: cargo clippy | Cargo.toml", "tests: cargo test | Cargo.toml"}));
}

TEST_F(ChecksTest, SafeAndStrictRunBuildFirstThenLintAndTests) {
  Write("Cargo.toml");
  Lines expected = {"build: cargo build | Cargo.toml", "lint: cargo clippy | Cargo.toml",
                    "tests: cargo test | Cargo.toml"};
  EXPECT_EQ(Checks(Profile::kSafe), expected);
  EXPECT_EQ(Checks(Profile::kStrict), expected);
}

TEST_F(ChecksTest, AnEmptyProjectHasOnlyNotApplicableChecks) {
  EXPECT_EQ(Checks(Profile::kSafe), (Lines{"build:  | ", "lint:  | ", "tests:  | "}));
}

TEST_F(ChecksTest, ConfiguredCommandsWinOverDetectedOnes) {
  Write("Cargo.toml");
  ChecksConfig config;
  config.build = "make all";
  config.tests = "./run_tests.sh";
  EXPECT_EQ(Checks(Profile::kSafe, config),
            (Lines{"build: make all | odinconfig.json", "lint: cargo clippy | Cargo.toml",
                   "tests: ./run_tests.sh | odinconfig.json"}));
}

TEST_F(ChecksTest, AnEmptyConfiguredCommandTurnsTheCheckOff) {
  Write("Cargo.toml");
  ChecksConfig config;
  config.lint = "";
  EXPECT_EQ(Checks(Profile::kAuto, config), (Lines{"lint:  | odinconfig.json", "tests: cargo test | Cargo.toml"}));
}

TEST_F(ChecksTest, CMakeProjectIsConfiguredFirstWhenThereIsNoBuildDirectory) {
  Write("CMakeLists.txt", "project(x)\n");
  EXPECT_EQ(Checks(Profile::kSafe),
            (Lines{"build: cmake -S . -B build && cmake --build build | CMakeLists.txt", "lint:  | ",
                   "tests: cmake -S . -B build && cmake --build build && ctest --test-dir build --output-on-failure "
                   "| CMakeLists.txt"}));
}

TEST_F(ChecksTest, CMakeProjectWithAConfiguredBuildDirectoryJustBuilds) {
  Write("CMakeLists.txt", "project(x)\n");
  Write("build/CMakeCache.txt");
  EXPECT_EQ(Checks(Profile::kSafe),
            (Lines{"build: cmake --build build | CMakeLists.txt", "lint:  | ",
                   "tests: cmake --build build && ctest --test-dir build --output-on-failure | CMakeLists.txt"}));
}

TEST_F(ChecksTest, GoModule) {
  Write("go.mod", "module example.com/x\n");
  EXPECT_EQ(Checks(Profile::kSafe),
            (Lines{"build: go build ./... | go.mod", "lint: go vet ./... | go.mod", "tests: go test ./... | go.mod"}));
}

TEST_F(ChecksTest, PackageJsonUsesTheScriptsThatExist) {
  Write("package.json", R"({"name":"x","scripts":{"build":"tsc","test":"jest"}})");
  EXPECT_EQ(Checks(Profile::kSafe),
            (Lines{"build: npm run build | package.json", "lint:  | ", "tests: npm test | package.json"}));
}

TEST_F(ChecksTest, PackageJsonLintScript) {
  Write("package.json", R"({"scripts":{"lint":"eslint ."}})");
  EXPECT_EQ(Checks(Profile::kAuto), (Lines{"lint: npm run lint | package.json", "tests:  | "}));
}

TEST_F(ChecksTest, NpmInitsPlaceholderTestScriptIsNoTestSuite) {
  Write("package.json", R"({"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}})");
  EXPECT_EQ(Checks(Profile::kAuto), (Lines{"lint:  | ", "tests:  | "}));
}

TEST_F(ChecksTest, MalformedPackageJsonGivesNoCommands) {
  Write("package.json", "{\"scripts\": {\"test\": ");
  EXPECT_EQ(Checks(Profile::kSafe), (Lines{"build:  | ", "lint:  | ", "tests:  | "}));
  Write("package.json", R"({"scripts":{"test":["not","a","string"]}})");
  EXPECT_EQ(Checks(Profile::kAuto), (Lines{"lint:  | ", "tests:  | "}));
}

TEST_F(ChecksTest, MakefileTargetsThatExist) {
  Write("Makefile", "all: prog\n\nprog: main.o\n\tcc -o prog main.o\n\nlint:\n\tcppcheck .\n\ntest: prog\n\t./prog\n");
  EXPECT_EQ(Checks(Profile::kSafe),
            (Lines{"build: make | Makefile", "lint: make lint | Makefile", "tests: make test | Makefile"}));
}

TEST_F(ChecksTest, MakefileWithoutATestTargetFallsBackToCheck) {
  Write("Makefile", "all:\n\ttrue\ncheck: all\n\t./check.sh\n");
  EXPECT_EQ(Checks(Profile::kAuto), (Lines{"lint:  | ", "tests: make check | Makefile"}));
}

TEST_F(ChecksTest, MakefileTestIsPreferredOverCheck) {
  Write("Makefile", "check:\n\ttrue\ntest:\n\ttrue\n");
  EXPECT_EQ(Checks(Profile::kAuto), (Lines{"lint:  | ", "tests: make test | Makefile"}));
}

TEST_F(ChecksTest, MakefileVariableAssignmentsAreNotTargets) {
  Write("Makefile", "lint := cppcheck\ntest ::= x\ncheck:=y\nall:\n\ttrue\n");
  EXPECT_EQ(Checks(Profile::kAuto), (Lines{"lint:  | ", "tests:  | "}));
}

TEST_F(ChecksTest, MakefileDoubleColonRulesAreTargets) {
  Write("Makefile", "lint::\n\ttrue\ntest:: all\n\ttrue\n");
  EXPECT_EQ(Checks(Profile::kAuto), (Lines{"lint: make lint | Makefile", "tests: make test | Makefile"}));
}

TEST_F(ChecksTest, GNUmakefileIsFoundAndNamedAsTheOrigin) {
  Write("GNUmakefile", "test:\n\ttrue\n");
  EXPECT_EQ(Checks(Profile::kSafe),
            (Lines{"build: make | GNUmakefile", "lint:  | ", "tests: make test | GNUmakefile"}));
}

TEST_F(ChecksTest, PythonProjectWithRuffAndPytest) {
  Write("pyproject.toml", "[project]\nname = \"x\"\n\n[tool.ruff]\nline-length = 100\n");
  Write("tests/test_basic.py", "def test_x():\n    assert True\n");
  EXPECT_EQ(Checks(Profile::kAuto),
            (Lines{"lint: ruff check . | pyproject.toml", "tests: python3 -m pytest -q | pyproject.toml"}));
}

TEST_F(ChecksTest, PythonProjectWithoutTestsOrRuffHasNothingToRun) {
  Write("pyproject.toml", "[project]\nname = \"x\"\n");
  Write("src/x.py", "print(1)\n");
  EXPECT_EQ(Checks(Profile::kSafe), (Lines{"build:  | ", "lint:  | ", "tests:  | "}));
}

// toolz keeps its tests inside the package (toolz/tests/), where pytest
// finds them.
TEST_F(ChecksTest, TestsInsideATopLevelPackageAreFound) {
  Write("setup.py", "from setuptools import setup\nsetup(name='pkg')\n");
  Write("pkg/__init__.py", "");
  Write("pkg/tests/test_core.py", "def test_x():\n    assert True\n");
  EXPECT_EQ(Checks(Profile::kAuto), (Lines{"lint:  | ", "tests: python3 -m pytest -q | setup.py"}));
  // A directory that is not a package is not looked into.
  RemoveTree(ws_);
  Write("setup.py", "from setuptools import setup\nsetup(name='pkg')\n");
  Write("notpkg/tests/test_core.py", "def test_x():\n    assert True\n");
  EXPECT_EQ(Checks(Profile::kAuto), (Lines{"lint:  | ", "tests:  | "}));
}

// Debian's cargo has no clippy: without cargo-clippy on PATH, no lint (it
// would fail every correct change).
TEST_F(ChecksTest, CargoClippyOnlyWhereItIsInstalled) {
  Write("Cargo.toml");
  setenv("PATH", "/nonexistent", 1);
  EXPECT_EQ(Checks(Profile::kAuto), (Lines{"lint:  | ", "tests: cargo test | Cargo.toml"}));
}

TEST_F(ChecksTest, PytestIsFoundFromItsConfiguration) {
  for (auto [file, content] :
       std::vector<std::pair<std::string, std::string>>{{"pytest.ini", "[pytest]\n"},
                                                        {"conftest.py", ""},
                                                        {"pyproject.toml", "[tool.pytest.ini_options]\n"},
                                                        {"setup.cfg", "[tool:pytest]\n"}}) {
    RemoveTree(ws_);
    ASSERT_TRUE(MakeDirs(ws_).ok());
    Write(file, content);
    std::vector<CheckSpec> checks = ChecksForProfile(Profile::kAuto, {}, ws_);
    ASSERT_EQ(checks.size(), 2u);
    EXPECT_EQ(checks[1].command, "python3 -m pytest -q") << file;
  }
}

TEST_F(ChecksTest, PytestIsFoundFromTestFiles) {
  for (const char* file : {"test_a.py", "a_test.py", "tests/test_a.py", "test/a_test.py"}) {
    RemoveTree(ws_);
    ASSERT_TRUE(MakeDirs(ws_).ok());
    Write(file, "");
    std::vector<CheckSpec> checks = ChecksForProfile(Profile::kAuto, {}, ws_);
    ASSERT_EQ(checks.size(), 2u);
    EXPECT_EQ(checks[1].command, "python3 -m pytest -q") << file;
  }
}

// Issue 47, item 6: the project's own pytest (its virtualenv's, or the one
// on PATH, as pyenv and pipx install it) before python3's module, which a
// pyenv python may not have.
TEST_F(ChecksTest, PytestIsTheProjectsOwnWhereItHasOne) {
  Write("tests/test_a.py");
  EXPECT_EQ(ChecksForProfile(Profile::kAuto, {}, ws_)[1].command, "python3 -m pytest -q");
  std::string bin = JoinPath(ws_, "elsewhere/bin");
  Write("elsewhere/bin/pytest", "#!/bin/sh\n");
  ASSERT_EQ(chmod(JoinPath(bin, "pytest").c_str(), 0755), 0);
  setenv("PATH", ("/nonexistent:" + bin).c_str(), 1);
  EXPECT_EQ(ChecksForProfile(Profile::kAuto, {}, ws_)[1].command, "pytest -q");
  // pytest beside the python3 on PATH (Debian's /usr/bin): that python3's
  // module, which puts the checkout on sys.path.
  Write("elsewhere/bin/python3", "#!/bin/sh\n");
  ASSERT_EQ(chmod(JoinPath(bin, "python3").c_str(), 0755), 0);
  EXPECT_EQ(ChecksForProfile(Profile::kAuto, {}, ws_)[1].command, "python3 -m pytest -q");
  // Debian's pytest under a pyenv python3 (an earlier python3 on PATH): the
  // module of the python its first line names.
  std::string other = JoinPath(ws_, "pyenv/shims");
  ASSERT_EQ(unlink(JoinPath(bin, "python3").c_str()), 0);
  Write("pyenv/shims/python3", "#!/bin/sh\n");
  ASSERT_EQ(chmod(JoinPath(other, "python3").c_str(), 0755), 0);
  Write("elsewhere/bin/pytest", "#!/usr/bin/python3\nimport pytest\n");
  ASSERT_EQ(chmod(JoinPath(bin, "pytest").c_str(), 0755), 0);
  setenv("PATH", (other + ":" + bin).c_str(), 1);
  EXPECT_EQ(ChecksForProfile(Profile::kAuto, {}, ws_)[1].command, "/usr/bin/python3 -m pytest -q");
  // One whose first line is not a python's (a shim): itself.
  Write("elsewhere/bin/pytest", "#!/usr/bin/env bash\nexec pytest \"$@\"\n");
  ASSERT_EQ(chmod(JoinPath(bin, "pytest").c_str(), 0755), 0);
  EXPECT_EQ(ChecksForProfile(Profile::kAuto, {}, ws_)[1].command, "pytest -q");
  Write(".venv/bin/pytest", "#!/bin/sh\n");
  EXPECT_EQ(ChecksForProfile(Profile::kAuto, {}, ws_)[1].command, ".venv/bin/pytest -q");
}

TEST_F(ChecksTest, FilesThatOnlyLookLikeTestsDoNotCount) {
  Write("setup.py", "");
  Write("testing.py", "");
  Write("test_.py", "");
  Write("src/test_deep.py", "");  // only the top, tests/ and test/ are looked at
  Write("test_a.txt", "");
  std::vector<CheckSpec> checks = ChecksForProfile(Profile::kAuto, {}, ws_);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[1].command, "");
}

TEST_F(ChecksTest, RuffConfigurationFiles) {
  for (const char* file : {"ruff.toml", ".ruff.toml"}) {
    RemoveTree(ws_);
    ASSERT_TRUE(MakeDirs(ws_).ok());
    Write("setup.py", "");
    Write(file, "");
    std::vector<CheckSpec> checks = ChecksForProfile(Profile::kAuto, {}, ws_);
    ASSERT_EQ(checks.size(), 2u);
    EXPECT_EQ(checks[0].command, "ruff check .") << file;
  }
}

TEST_F(ChecksTest, EachCheckTakesTheFirstProjectFileThatGivesACommand) {
  // CMake builds and tests; it has no lint, which the Makefile gives.
  Write("CMakeLists.txt", "project(x)\n");
  Write("build/CMakeCache.txt");
  Write("Makefile", "lint:\n\ttrue\ntest:\n\ttrue\n");
  EXPECT_EQ(Checks(Profile::kSafe),
            (Lines{"build: cmake --build build | CMakeLists.txt", "lint: make lint | Makefile",
                   "tests: cmake --build build && ctest --test-dir build --output-on-failure | CMakeLists.txt"}));
}

TEST_F(ChecksTest, CargoComesBeforeGoAndNpm) {
  Write("package.json", R"({"scripts":{"build":"tsc","lint":"eslint","test":"jest"}})");
  Write("go.mod", "module x\n");
  Write("Cargo.toml", "");
  EXPECT_EQ(Checks(Profile::kSafe), (Lines{"build: cargo build | Cargo.toml", "lint: cargo clippy | Cargo.toml",
                                           "tests: cargo test | Cargo.toml"}));
}

// OutputTail

TEST(OutputTailTest, ShortOutputIsReturnedWhole) {
  EXPECT_EQ(OutputTail("", 10), "");
  EXPECT_EQ(OutputTail("0123456789", 10), "0123456789");
}

TEST(OutputTailTest, LongOutputKeepsTheEndFromALineStart) {
  // The last 12 bytes start mid-line ("e two\n..."): the cut moves to "three".
  std::string output = "line one\nline two\nthree\n";
  EXPECT_EQ(OutputTail(output, 12), "[... 18 bytes before ...]\nthree\n");
}

TEST(OutputTailTest, CutsMidLineWhenTheNextLineStartIsFarAway) {
  std::string output = std::string(1000, 'a') + std::string(500, 'b') + "\nend\n";
  std::string tail = OutputTail(output, 300);
  // The newline is 295 bytes into the last 300: too far, so the cut stays.
  EXPECT_EQ(tail, "[... 1205 bytes before ...]\n" + output.substr(1205));
}

TEST(OutputTailTest, ACutAtALineStartIsKept) {
  // The last 5 bytes are exactly the last line: none of it is dropped.
  std::string output = "aaaa\nbbbb\n";
  EXPECT_EQ(OutputTail(output, 5), "[... 5 bytes before ...]\nbbbb\n");
}

TEST(OutputTailTest, NeverCutsAwayTheLastLine) {
  // The only newline ends the output: moving the cut past it would leave nothing.
  std::string output = std::string(1000, 'a') + "\n";
  EXPECT_EQ(OutputTail(output, 100), "[... 901 bytes before ...]\n" + std::string(99, 'a') + "\n");
}

}  // namespace
}  // namespace odin

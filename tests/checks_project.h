#pragma once
// A small project for tests of isolated sessions and attempts: its tests
// (the completion checks) fail while a file under src/ says BROKEN; and
// every file's hash, to show a workspace untouched.

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/sha256.h"
#include "base/subprocess.h"
#include "tests/llm_requests.h"
#include "tests/test_util.h"

namespace odin::testing {

// A project whose tests fail while a file under src/ says BROKEN, in git.
inline void MakeProject(const TempWorkspace& ws, const TempWorkspace& user, int attempts = 1) {
  nlohmann::json config = {
      {"checks", {{"build", ""}, {"lint", ""}, {"tests", "! grep -rq BROKEN src"}, {"retry_cap", 1}}},
      {"attempts", {{"count", attempts}}}};
  ASSERT_TRUE(MakeDirs(user.Join("config/odin")).ok());
  ASSERT_TRUE(WriteFileAtomic(user.Join("config/odin/odinconfig.json"), config.dump()).ok());
  ASSERT_TRUE(MakeDirs(ws.Join("src")).ok());
  ASSERT_TRUE(WriteFileAtomic(ws.Join("src/main.c"), "int main(void) { return 0; }\n").ok());
  SpawnOptions o;
  o.cwd = ws.path();
  o.env = {"PATH=/usr/bin:/bin",   "HOME=" + ws.path(),    "GIT_AUTHOR_NAME=t",
           "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"};
  RemoveTree(ws.Join(".git"));
  for (std::vector<std::string> argv :
       {std::vector<std::string>{"git", "init", "-q"}, std::vector<std::string>{"git", "add", "-A"},
        std::vector<std::string>{"git", "commit", "-qm", "start"}}) {
    o.argv = argv;
    StatusOr<CommandOutput> ran = RunCommand(o);
    ASSERT_TRUE(ran.ok() && ran->exit_code == 0) << argv[1] << ": " << (ran.ok() ? ran->output : "");
  }
}

// The fake model's script for three attempts at "add x" on that project:
// attempt 1 breaks the tests, attempt 2 passes with three files, attempt 3
// with one, ending with the answer `last`. The session's own requests
// take `responses`.
inline nlohmann::json ThreeAttemptsScript(nlohmann::json responses, nlohmann::json last = Text("Done.")) {
  auto write = [](const std::string& path, const std::string& content) {
    return Call("WriteFile", {{"file_path", path}, {"content", content}});
  };
  return {{"responses", std::move(responses)},
          {"agents",
           {{"attempt 1 of 3", {Turn({write("src/x.c", "BROKEN\n")}), Text("Done."), Text("Done.")}},
            {"attempt 2 of 3",
             {Turn({write("src/x.c", "int x;\n"), write("src/y.c", "int y;\n"), write("src/z.c", "int z;\n")}),
              Text("Done.")}},
            {"attempt 3 of 3", {Turn({write("src/x.c", "int x;\n")}), std::move(last)}}}}};
}

// Every file under root but Odin's state (.odin), with its content's hash.
inline std::map<std::string, std::string> TreeHashes(const std::string& root) {
  std::map<std::string, std::string> out;
  namespace fs = std::filesystem;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    std::string rel = fs::relative(it->path(), root).string();
    if (rel == ".odin") {
      it.disable_recursion_pending();
      continue;
    }
    StatusOr<std::string> content = it->is_regular_file() ? ReadFileToString(it->path().string())
                                                          : StatusOr<std::string>(Status::NotFound(rel, "not a file"));
    if (content.ok()) out[rel] = Sha256Hex(*content);
  }
  return out;
}

}  // namespace odin::testing

// Security review 3 (issue 46), each finding as the attack it was, through
// the real binaries: a hostile cloned repository or a prompt-injected model
// against odin exec, odin tool, an agent session, odin undo and odin mcp
// serve. Each test is named for its finding. (Finding 10, the ledger's
// schema, is in odin_ledger_test.cc; the safe file layer's own property
// test is workspace/workspace_files_test.cc.) The tests need nothing of
// this file's neighbours but test_util.h, so that they also run against an
// older build: run so, they fail, each on its hole.

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/subprocess.h"
#include "tests/ledger_rows.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

bool HaveBwrap() { return !SearchPath("bwrap", getenv("PATH") ? getenv("PATH") : "").empty(); }

#define REQUIRE_BWRAP()                                                          \
  if (!HaveBwrap()) {                                                            \
    GTEST_SKIP() << "bubblewrap is not installed: these attacks need a sandbox"; \
  }

class Review3Test : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  std::map<std::string, std::string> Env(std::map<std::string, std::string> more = {}) {
    more["ODIN_TEST_MARK"] = marker_;
    more["XDG_CONFIG_HOME"] = user_.Join("config");
    more["XDG_STATE_HOME"] = user_.Join("state");
    return more;
  }
  std::map<std::string, std::string> ModelEnv(const FakeLlm& llm, std::map<std::string, std::string> more = {}) {
    more["OPENAI_BASE_URL"] = llm.OpenAiUrl();
    more["OPENAI_API_KEY"] = "test-key";
    more["ANTHROPIC_BASE_URL"] = "";
    more["ANTHROPIC_API_KEY"] = "";
    return Env(std::move(more));
  }
  Ran Odin(const std::vector<std::string>& args, std::map<std::string, std::string> more = {}) {
    return RunOdin(ws_.path(), args, Env(std::move(more)));
  }
  // A command through the model's own entry point (the gates, the command
  // rules, an edit-mode worker).
  Ran Command(const std::string& command) {
    return Odin({"tool", "ExecuteCommand", json({{"command", command}}).dump(), "--mode", "edit", "--json"});
  }
  // git as the user runs it in the workspace afterwards: nothing of the
  // user's own configuration, nothing of the system's.
  CommandOutput Git(const std::vector<std::string>& args, const std::string& dir = "") {
    std::vector<std::string> argv = {"git",           "-C", dir.empty() ? ws_.path() : dir, "-c", "user.name=t", "-c",
                                     "user.email=t@t"};
    argv.insert(argv.end(), args.begin(), args.end());
    StatusOr<CommandOutput> out = RunCommand(
        {.argv = argv, .env = {"PATH=/usr/bin:/bin", "HOME=" + user_.path(), "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C"}});
    return out.ok() ? *out : CommandOutput{-1, out.status().message()};
  }
  void Put(const std::string& rel, const std::string& content) {
    ASSERT_TRUE(MakeDirs(DirName(ws_.Join(rel))).ok());
    ASSERT_TRUE(WriteFileAtomic(ws_.Join(rel), content).ok());
  }
  std::string Get(const std::string& path) {
    StatusOr<std::string> s = ReadFileToString(path);
    return s.ok() ? *s : "<absent>";
  }
  // Whether the binaries can run as another user (a clone under a private
  // directory cannot).
  std::string WhyNotAsAnotherUser() {
    if (geteuid() != 0) return "needs root (running as uid " + std::to_string(geteuid()) + ")";
    for (std::string dir = BinDir(); dir.size() > 1; dir = DirName(dir)) {
      struct stat st;
      if (stat(dir.c_str(), &st) == 0 && (st.st_mode & S_IXOTH) == 0) {
        return dir + " is not reachable for other users (a clone under a private directory)";
      }
    }
    return "";
  }
  void Chown(const std::string& owner, const std::string& path) {
    StatusOr<CommandOutput> r = RunCommand({.argv = {"chown", "-R", owner, path}, .env = {"PATH=/usr/bin:/bin"}});
    ASSERT_TRUE(r.ok() && r->exit_code == 0);
  }

  TempWorkspace ws_, user_, outside_;
  std::string marker_ = UniqueMarker();
};

// Finding 1 (critical): odin as root on a workspace another user owns runs
// commands as that user, without the overlay, and puts back what they did
// to protected files. The command swapped the directories holding them for
// symlinks to root's own places; root wrote through them: a file in a
// root-only directory, and a repository config of root's whose fsmonitor
// then ran at root's next git status.
TEST_F(Review3Test, Finding1AsRootNothingIsPutBackThroughASymlinkTheOwnersCommandMade) {
  REQUIRE_BWRAP();
  if (std::string why = WhyNotAsAnotherUser(); !why.empty()) GTEST_SKIP() << why;
  std::string root_only = outside_.Join("root-only");
  ASSERT_EQ(mkdir(root_only.c_str(), 0700), 0);
  std::string root_repo = outside_.Join("root-repo");
  ASSERT_EQ(Git({"init", "-q", root_repo}).exit_code, 0);
  std::string root_config = Get(root_repo + "/.git/config");
  Put("sub/AGENTS.md", "sub rules\n");
  ASSERT_EQ(Git({"init", "-q", ws_.Join("lib")}).exit_code, 0);
  Put("lib/.git/config", "[core]\n\tfsmonitor = \"touch " + outside_.Join("ran") + "; false\"\n");
  ASSERT_EQ(chmod(ws_.path().c_str(), 0755), 0);
  Chown("65534:65534", ws_.path());
  Ran r = Odin({"exec", "--", "sh", "-c",
                "rm -rf sub lib && ln -s " + root_only + " sub && ln -s " + root_repo + " lib && echo swapped"});
  Chown("0:0", ws_.path());
  ASSERT_NE(r.out.find("swapped"), std::string::npos) << r.out << r.err;
  EXPECT_FALSE(PathExists(root_only + "/AGENTS.md")) << "root wrote into a root-only directory";
  EXPECT_EQ(Get(root_repo + "/.git/config"), root_config) << "root overwrote its own repository's config";
  EXPECT_EQ(Git({"status", "--short"}, root_repo).exit_code, 0);
  EXPECT_FALSE(PathExists(outside_.Join("ran"))) << "root's git status ran the repository's program";
}

// Finding 2 (high): the workspace root laid out as a git directory. Garbage
// in .git/HEAD makes git pass .git by; HEAD, objects/, refs/ and a config at
// the root then make the root the repository, and its config runs a
// program at the user's next git status. Through odin exec, through the
// model's ExecuteCommand, and in a workspace with no .git at all.
TEST_F(Review3Test, Finding2AGitLayoutThatRunsAProgramNeverLandsFromACommand) {
  REQUIRE_BWRAP();
  // fsmonitor runs in the work tree: what it makes there says it ran.
  const std::string ran = ws_.Join("fsmonitor-ran");
  const std::string layout =
      "printf 'ref: refs/heads/main\\n' > HEAD && mkdir -p objects refs && printf "
      "'[core]\\n\\tbare = false\\n\\tworktree = .\\n\\tfsmonitor = \"touch fsmonitor-ran; false\"\\n' > config";
  for (std::string how : {"exec", "tool", "no .git"}) {
    SCOPED_TRACE(how);
    RemoveTree(ws_.Join(".git"));
    for (const char* p : {"HEAD", "objects", "refs", "config"}) RemoveTree(ws_.Join(p));
    bool repo = how != "no .git";
    if (repo) {
      ASSERT_EQ(Git({"init", "-q", "-b", "main", ws_.path()}).exit_code, 0);
    }
    std::string head = Get(ws_.Join(".git/HEAD"));
    std::string attack = (repo ? "printf garbage > .git/HEAD; " : std::string()) + layout + " && echo laid-out";
    Ran r = how == "tool" ? Command(attack) : Odin({"exec", "--", "sh", "-c", attack});
    EXPECT_NE(r.out.find("laid-out"), std::string::npos) << r.out << r.err;
    if (repo) {
      EXPECT_EQ(Get(ws_.Join(".git/HEAD")), head) << "a HEAD git cannot read landed";
    }
    Git({"status", "--short"});
    EXPECT_FALSE(PathExists(ran)) << "the user's git status ran the command's program";
    RemoveTree(ran);
  }
}

// The other side of finding 2: git's own work from edit-mode commands still
// lands (a new repository, staging, a commit, a new branch), and so does a
// harmless new repository in a subdirectory.
TEST_F(Review3Test, GitInitAddCommitAndCheckoutStillWorkFromEditModeCommands) {
  REQUIRE_BWRAP();
  Put("a.txt", "a\n");
  for (const std::string& c : {std::string("git init -q -b main"), std::string("git add a.txt"),
                               std::string("git -c user.name=t -c user.email=t@t commit -qm first"),
                               std::string("git checkout -q -b feature"), std::string("git init -q sub")}) {
    Ran r = Command(c);
    json j = json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
    EXPECT_EQ(j["exit_code"], 0) << c << ": " << r.out;
    EXPECT_EQ(j["output"].get<std::string>().find("did not land"), std::string::npos) << c << ": " << j.dump();
  }
  CommandOutput branch = Git({"rev-parse", "--abbrev-ref", "HEAD"});
  EXPECT_EQ(branch.output, "feature\n");
  CommandOutput log = Git({"log", "--format=%s"});
  EXPECT_EQ(log.output, "first\n");
  EXPECT_TRUE(PathExists(ws_.Join("sub/.git/HEAD")));
  EXPECT_EQ(Git({"status", "--short"}, ws_.Join("sub")).exit_code, 0);
}

// Finding 3 (high): odin undo planned "recreate link x -> outside" and
// "remove x/authorized_keys", each harmless alone, and applied them in that
// order: the removal went through the link it had just made.
TEST_F(Review3Test, Finding3UndoRemovesNothingThroughASymlinkItJustMadeAgain) {
  REQUIRE_BWRAP();
  std::string dir = outside_.Join("dir");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  ASSERT_TRUE(WriteFileAtomic(dir + "/authorized_keys", "ssh-ed25519 KEY\n").ok());
  ASSERT_EQ(symlink(dir.c_str(), ws_.Join("x").c_str()), 0);
  FakeLlm llm(json({{"responses",
                     {{{"tool_calls",
                        {{{"name", "ExecuteCommand"},
                          {"arguments", {{"command", "rm x && mkdir x && echo a > x/authorized_keys"}}}}}}},
                      {{"tool_calls", {{{"name", "ExecuteCommand"}, {"arguments", {{"command", "rm -rf x"}}}}}}},
                      {{"text", "done"}}}}})
                  .dump());
  Ran session = RunOdin(ws_.path(), {"-p", "tidy up", "--output-format", "json"}, ModelEnv(llm));
  ASSERT_EQ(session.exit_code, 0) << session.err;
  ASSERT_FALSE(PathExists(ws_.Join("x")));
  std::vector<std::string> message =
      LedgerRows(ws_.Join(".odin/odin.db"), "SELECT id FROM messages WHERE role = 'user'");
  ASSERT_EQ(message.size(), 1u);
  Ran undo = Odin({"undo", "--message", message[0], "--force"});
  EXPECT_EQ(Get(dir + "/authorized_keys"), "ssh-ed25519 KEY\n") << "undo removed through the link: " << undo.err;
  EXPECT_TRUE(PathExists(dir));
}

// Finding 4 (high): instruction files were read on the host through a
// cloned repository's symlinks, and their content sent to the model: every
// token in odin's environment, a private key. Finding 7 (medium): one that
// is /dev/zero killed the coordinator. Relative symlinks inside the
// workspace still work (AGENTS.md -> CLAUDE.md).
TEST_F(Review3Test, Finding4And7InstructionsAreNotReadThroughSymlinksOutOrFromDevices) {
  REQUIRE_BWRAP();
  ASSERT_EQ(Git({"init", "-q", ws_.path()}).exit_code, 0);  // the workspace is the repository, sub/ inside it
  ASSERT_TRUE(WriteFileAtomic(outside_.Join("id_ed25519"), "PRIVATE-KEY-46-XYZ\n").ok());
  ASSERT_EQ(symlink("/proc/self/environ", ws_.Join("AGENTS.md").c_str()), 0);
  ASSERT_TRUE(MakeDirs(ws_.Join("sub")).ok());
  ASSERT_EQ(symlink(outside_.Join("id_ed25519").c_str(), ws_.Join("sub/ODIN.md").c_str()), 0);
  ASSERT_TRUE(MakeDirs(ws_.Join("deep")).ok());
  ASSERT_EQ(symlink("/dev/zero", ws_.Join("deep/AGENTS.md").c_str()), 0);
  FakeLlm llm(R"({"responses":[{"text":"done"},{"text":"done"}]})");
  std::map<std::string, std::string> env = ModelEnv(llm, {{"SECRET_TOKEN_46", "tok-46-abcdefghijkl"}});
  Ran r = RunOdinWrapped({"prlimit", "--as=4000000000"}, ws_.Join("sub"), {"-p", "hello"}, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Ran z = RunOdinWrapped({"prlimit", "--as=4000000000"}, ws_.Join("deep"), {"-p", "hello"}, env);
  EXPECT_EQ(z.exit_code, 0) << "the coordinator died of deep/AGENTS.md -> /dev/zero: " << z.err;
  std::string sent;
  for (const std::string& line : llm.LogLines()) sent += line;
  EXPECT_EQ(sent.find("PRIVATE-KEY-46-XYZ"), std::string::npos) << "the private key went to the model";
  EXPECT_EQ(sent.find("tok-46-abcdefghijkl"), std::string::npos) << "odin's environment went to the model";
  EXPECT_NE(r.err.find("AGENTS.md"), std::string::npos) << "the refusal is said: " << r.err;
  // What the repository means by a relative link inside is still read.
  RemoveTree(ws_.Join("AGENTS.md"));
  Put("CLAUDE.md", "Shared rules: say CLAUDE-46.\n");
  ASSERT_EQ(symlink("CLAUDE.md", ws_.Join("AGENTS.md").c_str()), 0);
  FakeLlm again(R"({"responses":[{"text":"done"}]})");
  Ran read = RunOdin(ws_.path(), {"-p", "hello"}, ModelEnv(again));
  EXPECT_EQ(read.exit_code, 0) << read.err;
  std::string body;
  for (const std::string& line : again.LogLines()) body += line;
  EXPECT_NE(body.find("Shared rules: say CLAUDE-46."), std::string::npos);
}

// Finding 7's other half: the completion checks' project detection read
// Makefile and package.json whole.
TEST_F(Review3Test, Finding7AMakefileThatIsADeviceDoesNotKillTheCoordinator) {
  REQUIRE_BWRAP();
  ASSERT_EQ(symlink("/dev/zero", ws_.Join("Makefile").c_str()), 0);
  ASSERT_EQ(symlink("/dev/zero", ws_.Join("package.json").c_str()), 0);
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"WriteFile","arguments":{"file_path":"notes.txt","content":"n\n"}}]},
    {"text":"done"}]})");
  Ran r = RunOdinWrapped({"prlimit", "--as=4000000000"}, ws_.path(), {"-p", "write notes", "--profile", "auto"},
                         ModelEnv(llm));
  EXPECT_NE(r.exit_code, 134) << r.err;
  EXPECT_LT(r.exit_code, 128) << r.err;
  EXPECT_EQ(Get(ws_.Join("notes.txt")), "n\n");
}

// Finding 5 (medium): the session-start sweep of killed workers' overlays
// chmodded what a planted "next-*/w" symlink pointed at, and every
// directory below it, to 0700.
TEST_F(Review3Test, Finding5TheStartSweepChangesNothingAPlantedSymlinkPointsAt) {
  REQUIRE_BWRAP();
  ASSERT_EQ(Odin({"exec", "--", "true"}).exit_code, 0);  // Odin's own .odin
  std::string victim = outside_.Join("victim");
  ASSERT_TRUE(MakeDirs(victim + "/deep").ok());
  ASSERT_TRUE(WriteFileAtomic(victim + "/deep/keep.txt", "keep\n").ok());
  ASSERT_EQ(chmod(victim.c_str(), 0755), 0);
  ASSERT_EQ(chmod((victim + "/deep").c_str(), 0751), 0);
  std::string planted = ws_.Join(".odin/overlay/next-00000000000000ee");
  ASSERT_TRUE(MakeDirs(planted).ok());
  ASSERT_EQ(symlink(victim.c_str(), (planted + "/w").c_str()), 0);
  ASSERT_EQ(Odin({"exec", "--", "true"}).exit_code, 0);
  struct stat st;
  ASSERT_EQ(stat(victim.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  ASSERT_EQ(stat((victim + "/deep").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0751u);
  EXPECT_EQ(Get(victim + "/deep/keep.txt"), "keep\n");
}

// Finding 6 (medium): a mask over a root-only host file is a bind on the
// file as it was; replaced by rename (passwd rewriting /etc/shadow, an
// editor's atomic save), the mask went with the old file and a running
// sandbox read the new one. The test masks a file of its own through
// sandbox.root_hidden; nothing touches /etc/shadow.
TEST_F(Review3Test, Finding6AMaskedHostFileReplacedByRenameStaysMasked) {
  REQUIRE_BWRAP();
  if (geteuid() != 0) GTEST_SKIP() << "root_hidden masks apply to commands that run as root";
  // Where the sandbox shows the host's files as they are (its /tmp is a
  // tmpfs of its own, the home is hidden).
  char dir_template[] = "/var/tmp/odin-review3-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  std::string host_dir = dir_template;
  std::string secret = host_dir + "/shadow-46";
  ASSERT_TRUE(WriteFileAtomic(secret, "OLD-SECRET-46\n").ok());
  ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
  ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"),
                              json({{"sandbox", {{"root_hidden", {secret}}}}}).dump())
                  .ok());
  std::string go = outside_.Join("go");
  // Commands that write (over an overlay, in the worker's bubblewrap
  // sandbox): one that only reads runs in the read-only view, which the
  // worker makes again when a masked path is replaced.
  auto cat = [&](const std::string& tag) {
    std::string command = "cat " + secret + " > got-" + tag + "; echo " + tag + "=$(cat got-" + tag + ")";
    return json({{"tool_calls", {{{"name", "ExecuteCommand"}, {"arguments", {{"command", command}}}}}}});
  };
  json second = cat("second");
  second["hold_until"] = go;
  FakeLlm llm(json({{"responses", {cat("first"), second, {{"text", "done"}}}}}).dump());
  int out = -1;
  pid_t pid = StartOdin(ws_.path(), {"-p", "read it", "--output-format", "json"}, &out, ModelEnv(llm));
  // The second answer is asked for once the first command ran: then the
  // host replaces the file by rename.
  ASSERT_TRUE(WaitUntil([&] { return llm.LogLines().size() >= 3; }, std::chrono::seconds(60)));
  ASSERT_TRUE(WriteFileAtomic(secret, "NEW-SECRET-46\n").ok());  // a new inode, renamed over it
  ASSERT_TRUE(WriteFileAtomic(go, "").ok());
  std::string text = ReadUntil(out, "\x01");  // to its end
  close(out);
  EXPECT_EQ(Wait(pid), 0) << text;
  std::string sent;
  for (const std::string& line : llm.LogLines()) sent += line;
  EXPECT_EQ(sent.find("OLD-SECRET-46"), std::string::npos) << "the mask did not hold at first";
  EXPECT_EQ(sent.find("NEW-SECRET-46"), std::string::npos) << "the file replaced by rename was read unmasked";
  EXPECT_NE(sent.find("second="), std::string::npos) << "the second command did not run: " << text;
  RemoveTree(host_dir);
}

// Finding 8 (medium): odin mcp serve crashed on a tools/call whose
// arguments nest 300,000 levels (copied and dumped before the depth check),
// and on a notifications/cancelled whose requestId does.
TEST_F(Review3Test, Finding8McpServeAnswersDeeplyNestedInputWithAnErrorAndLivesOn) {
  REQUIRE_BWRAP();
  int in = -1, out = -1;
  pid_t pid = StartOdinPiped(ws_.path(), {"mcp", "serve"}, &in, &out, Env());
  auto send = [in](const std::string& line) {
    std::string l = line + "\n";
    for (size_t done = 0; done < l.size();) {
      ssize_t n = write(in, l.data() + done, l.size() - done);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  };
  std::string deep = std::string(300000, '[') + std::string(300000, ']');
  ASSERT_TRUE(send(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})"));
  ASSERT_TRUE(
      send(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"LS","arguments":{"x":)" + deep + "}}}"));
  ASSERT_TRUE(send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":)" + deep + "}}"));
  ASSERT_TRUE(send(R"({"jsonrpc":"2.0","id":3,"method":"ping"})"));
  std::string got = ReadUntil(out, R"("id":3)");
  EXPECT_NE(got.find("nested more than"), std::string::npos) << got.substr(0, 2000);
  EXPECT_NE(got.find(R"("id":3)"), std::string::npos) << "the server did not answer after the deep input";
  close(in);
  ReadUntil(out, "\x01");  // to its end
  close(out);
  EXPECT_EQ(Wait(pid), 0);
}

// Finding 9 (low): the worker's socket directory was writable by its
// commands: one could unlink or replace its worker's socket.
TEST_F(Review3Test, Finding9ACommandCannotTouchItsWorkersSocketDirectory) {
  REQUIRE_BWRAP();
  Ran r = Odin({"exec", "--", "sh", "-c",
                "for s in /tmp/odin-sock-*/*.sock; do d=$(dirname $s); echo found=$s; "
                "touch $d/planted 2>/dev/null && echo planted; "
                "rm -f $s 2>/dev/null && echo removed; "
                "mv $d /tmp/moved 2>/dev/null && echo moved; done; true"},
               {{"TMPDIR", "/tmp"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("found=/tmp/odin-sock-"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("planted"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("removed"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("moved"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace odin::testing

// ---------------------------------------------------------------------------
// The second attack pass on the new layer (told only the threat model). Each
// hole it found, as its attack.

namespace odin::testing {
namespace {

// As root on a workspace another user owns: the command made a file setuid,
// deleted it, and undo (or a hold's put-back) wrote it back as root with
// its recorded mode: a setuid-root binary of the model's choosing.
TEST_F(Review3Test, AttackPassUndoNeverWritesASetuidFileNorARootOwnedOne) {
  REQUIRE_BWRAP();
  if (std::string why = WhyNotAsAnotherUser(); !why.empty()) GTEST_SKIP() << why;
  ASSERT_EQ(chmod(ws_.path().c_str(), 0755), 0);
  Chown("65534:65534", ws_.path());
  FakeLlm llm(json({{"responses",
                     {{{"tool_calls",
                        {{{"name", "ExecuteCommand"},
                          {"arguments", {{"command", "printf '#!/bin/sh\\nid -u\\n' > tool && chmod 4755 tool"}}}}}}},
                      {{"tool_calls", {{{"name", "ExecuteCommand"}, {"arguments", {{"command", "rm -f tool"}}}}}}},
                      {{"text", "done"}}}}})
                  .dump());
  Ran session = RunOdin(ws_.path(), {"-p", "do it", "--output-format", "json"}, ModelEnv(llm));
  ASSERT_EQ(session.exit_code, 0) << session.err;
  Ran undo = Odin({"undo", "--last"});
  struct stat st;
  bool there = lstat(ws_.Join("tool").c_str(), &st) == 0;
  Chown("0:0", ws_.path());
  ASSERT_TRUE(there) << undo.err;
  EXPECT_EQ(st.st_mode & (S_ISUID | S_ISGID), 0u) << "undo wrote a setuid file";
  EXPECT_EQ(st.st_uid, 65534u) << "undo made the file root's";
}

// As root on a workspace another user owns: a command swapped a directory
// for a symlink to /proc/self; the change tracker looked through it, kept
// odin's own environment as a before-image, and undo wrote it back.
TEST_F(Review3Test, AttackPassTheTrackerKeepsNothingItSeesThroughASymlinkedDirectory) {
  REQUIRE_BWRAP();
  if (std::string why = WhyNotAsAnotherUser(); !why.empty()) GTEST_SKIP() << why;
  Put("sub/environ", "junk\n");
  ASSERT_EQ(chmod(ws_.path().c_str(), 0755), 0);
  Chown("65534:65534", ws_.path());
  FakeLlm llm(
      json({{"responses",
             {{{"tool_calls",
                {{{"name", "ExecuteCommand"}, {"arguments", {{"command", "rm -rf sub; ln -s /proc/self sub"}}}}}}},
              {{"tool_calls",
                {{{"name", "ExecuteCommand"},
                  {"arguments", {{"command", "rm sub; mkdir sub; echo x > sub/environ"}}}}}}},
              {{"text", "done"}}}}})
          .dump());
  Ran session = RunOdin(ws_.path(), {"-p", "do it", "--output-format", "json"},
                        ModelEnv(llm, {{"SECRET_TOKEN_46", "tok-attack-46-abcdef"}}));
  ASSERT_EQ(session.exit_code, 0) << session.err;
  Ran undo = Odin({"undo", "--last", "--force"});
  Chown("0:0", ws_.path());
  std::vector<std::string> images =
      LedgerRows(ws_.Join(".odin/odin.db"), "SELECT hex(content) FROM artifacts WHERE kind = 'before_image'");
  std::string hex;
  for (char c : std::string("tok-attack-46")) {
    char b[3];
    snprintf(b, sizeof b, "%02X", static_cast<unsigned char>(c));
    hex += b;
  }
  for (const std::string& image : images)
    EXPECT_EQ(image.find(hex), std::string::npos) << "odin's environment was kept";
  EXPECT_EQ(Get(ws_.Join("sub/environ")).find("tok-attack-46"), std::string::npos) << "undo wrote it back";
}

// A FIFO named .gitignore: libgit2's open of it on the host blocked odin
// for good, and every later command in the workspace with it.
TEST_F(Review3Test, AttackPassAFifoMadeByACommandDoesNotHangOdin) {
  REQUIRE_BWRAP();
  ASSERT_EQ(Git({"init", "-q", ws_.path()}).exit_code, 0);
  Put("a", "a\n");
  ASSERT_EQ(Git({"add", "a"}).exit_code, 0);
  ASSERT_EQ(Git({"commit", "-qm", "i"}).exit_code, 0);
  Ran made = RunOdinWrapped({"timeout", "120"}, ws_.path(),
                            {"tool", "ExecuteCommand", json({{"command", "mkfifo .gitignore && echo x > zz"}}).dump(),
                             "--mode", "edit", "--json"},
                            Env());
  EXPECT_NE(made.exit_code, 124) << "odin hung on the FIFO";
  Ran next = RunOdinWrapped({"timeout", "120"}, ws_.path(), {"exec", "--", "sh", "-c", "echo y > yy"}, Env());
  EXPECT_EQ(next.exit_code, 0) << next.err;
  struct stat st;
  EXPECT_FALSE(lstat(ws_.Join(".gitignore").c_str(), &st) == 0 && S_ISFIFO(st.st_mode)) << "the FIFO landed";
}

// A new repository whose config names a program through a key the first
// list did not know (gpg.ssh.defaultKeyCommand with commit.gpgSign): the
// user's next commit ran it.
TEST_F(Review3Test, AttackPassANewRepositoryWithAnUnknownSectionDoesNotLand) {
  REQUIRE_BWRAP();
  Put("a.txt", "hello\n");
  Ran r = Command(
      "git init -q . && git config commit.gpgSign true && git config gpg.format ssh && "
      "git config gpg.ssh.defaultKeyCommand 'touch defkey-ran' && git config tar.tgz.command 'touch tar-ran'");
  ASSERT_EQ(json::parse(r.out, nullptr, false)["exit_code"], 0) << r.out << r.err;
  std::string config = Get(ws_.Join(".git/config"));
  EXPECT_EQ(config.find("defaultKeyCommand"), std::string::npos) << config;
  EXPECT_EQ(config.find("tar"), std::string::npos) << config;
  Git({"add", "a.txt"});
  Git({"commit", "-qm", "x"});
  EXPECT_FALSE(PathExists(ws_.Join("defkey-ran"))) << "the user's commit ran the repository's program";
}

// A before-image edited in the ledger (a nested workspace's .odin, reachable
// from the outer one's commands) was written back by undo as it was.
TEST_F(Review3Test, AttackPassUndoWritesNoBeforeImageThatDoesNotMatchItsHash) {
  REQUIRE_BWRAP();
  Put("b.txt", "b\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"b.txt"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"b.txt","old_string":"b","new_string":"B"}}]},
    {"text":"done"}]})");
  ASSERT_EQ(RunOdin(ws_.path(), {"-p", "edit", "--output-format", "json"}, ModelEnv(llm)).exit_code, 0);
  StatusOr<CommandOutput> tamper = RunCommand(
      {.argv = {"sqlite3", ws_.Join(".odin/odin.db"),
                "DROP TRIGGER artifacts_no_UPDATE; UPDATE artifacts SET content = CAST('ATTACKER' AS BLOB) WHERE "
                "kind = 'before_image';"},
       .env = {"PATH=/usr/bin:/bin"}});
  if (!tamper.ok() || tamper->exit_code != 0) GTEST_SKIP() << "no sqlite3 program to tamper with the ledger";
  Ran undo = Odin({"undo", "--last"});
  EXPECT_EQ(undo.exit_code, 1);
  EXPECT_NE(Get(ws_.Join("b.txt")), "ATTACKER") << "undo wrote a tampered before-image";
  EXPECT_NE(undo.err.find("does not match the hash"), std::string::npos) << undo.err << undo.out;
}

}  // namespace
}  // namespace odin::testing

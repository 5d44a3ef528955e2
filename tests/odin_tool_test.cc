// End-to-end tests of the file tools through `odin tool`: the real odin,
// sandbox launcher, bubblewrap, worker, ripgrep and ledger.

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

class OdinToolTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(MakeDirs(ws_.Join(".git")).ok()); }

  // Runs a tool; returns its parsed --json result.
  json Tool(const std::string& name, const json& args, const std::string& session = "", const std::string& mode = "") {
    std::vector<std::string> argv = {"tool", name, args.dump(), "--json"};
    if (!session.empty()) argv.insert(argv.end(), {"--session", session});
    if (!mode.empty()) argv.insert(argv.end(), {"--mode", mode});
    last_ = RunOdin(ws_.path(), argv);
    json j = json::parse(last_.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << last_.out << last_.err;
    EXPECT_EQ(last_.exit_code, j.value("status", "") == "ok" ? 0 : 1);
    return j;
  }
  void Put(const std::string& rel, const std::string& content) {
    ASSERT_TRUE(MakeDirs(DirName(ws_.Join(rel))).ok());
    ASSERT_TRUE(WriteFileAtomic(ws_.Join(rel), content).ok());
  }
  std::string Get(const std::string& rel) { return *ReadFileToString(ws_.Join(rel)); }

  TempWorkspace ws_;
  Ran last_;
};

// Seed flow 1: a small file found by Grep (content output) can be edited.
TEST_F(OdinToolTest, GrepContentThenEdit) {
  Put("auth.go", "package auth\n\n// TODO: check tokens\nfunc Check() {}\n");
  json g = Tool("Grep", {{"pattern", "TODO"}, {"output_mode", "content"}, {"-n", true}, {"-C", 5}});
  ASSERT_EQ(g["status"], "ok");
  EXPECT_EQ(g["output"],
            "auth.go-1-package auth\nauth.go-2-\nauth.go:3:// TODO: check tokens\nauth.go-4-func Check() {}\n");
  json e =
      Tool("EditTool", {{"file_path", "auth.go"}, {"old_string", "TODO"}, {"new_string", "FIXME"}}, g["session_id"]);
  ASSERT_EQ(e["status"], "ok") << e.dump();
  EXPECT_EQ(Get("auth.go"), "package auth\n\n// FIXME: check tokens\nfunc Check() {}\n");
}

// Seed flow 2: a partial read, then an edit inside it.
TEST_F(OdinToolTest, PartialReadThenEditInsideIt) {
  std::string text;
  for (int i = 1; i <= 2000; ++i) text += "log line " + std::to_string(i) + "\n";
  Put("logs.txt", text);
  json r = Tool("Read", {{"file_path", "logs.txt"}, {"offset", 1000}, {"limit", 100}});
  ASSERT_EQ(r["status"], "ok");
  EXPECT_EQ(r["result"]["start_line"], 1000);
  EXPECT_EQ(r["result"]["end_line"], 1099);
  json e = Tool("EditTool", {{"file_path", "logs.txt"}, {"old_string", "log line 1050\n"}, {"new_string", "edited\n"}},
                r["session_id"]);
  ASSERT_EQ(e["status"], "ok") << e.dump();
  EXPECT_NE(Get("logs.txt").find("log line 1049\nedited\nlog line 1051\n"), std::string::npos);
}

// Seed flow 3: an insufficient cache names a range; reading it makes the retry pass.
TEST_F(OdinToolTest, InsufficientCacheNamesTheRangeToRead) {
  std::string text;
  for (int i = 1; i <= 200; ++i) text += i == 120 ? "config.timeout = 30\n" : "x = " + std::to_string(i) + "\n";
  Put("config.go", text);
  json r = Tool("Read", {{"file_path", "config.go"}, {"limit", 50}});
  std::string session = r["session_id"];
  json edit = {{"file_path", "config.go"}, {"old_string", "config.timeout"}, {"new_string", "config.requestTimeout"}};
  json refused = Tool("EditTool", edit, session);
  EXPECT_EQ(refused["status"], "rejected");
  EXPECT_NE(
      refused["error"].get<std::string>().find("line 120 of config.go, which you have not read (you read lines 1-50). "
                                               "Read lines 117-123 first (Read with offset=117 limit=7)"),
      std::string::npos)
      << refused.dump();
  EXPECT_EQ(Get("config.go"), text);
  ASSERT_EQ(Tool("Read", {{"file_path", "config.go"}, {"offset", 117}, {"limit", 7}}, session)["status"], "ok");
  json retried = Tool("EditTool", edit, session);
  ASSERT_EQ(retried["status"], "ok") << retried.dump();
  EXPECT_NE(Get("config.go").find("config.requestTimeout = 30\n"), std::string::npos);
}

TEST_F(OdinToolTest, EditWithoutAnyReadIsRejectedAndRecorded) {
  Put("a.txt", "alpha\n");
  json e = Tool("EditTool", {{"file_path", "a.txt"}, {"old_string", "alpha"}, {"new_string", "beta"}});
  EXPECT_EQ(e["status"], "rejected");
  EXPECT_EQ(e["output"],
            "Rejected: EditTool: you have not read a.txt. Read it first (Read with file_path=\"a.txt\"), then retry\n");
  EXPECT_EQ(Get("a.txt"), "alpha\n");
  json log = json::parse(RunOdin(ws_.path(), {"log", "--json", "--limit", "1"}).out);
  EXPECT_EQ(log[0]["status"], "rejected");
  EXPECT_EQ(log[0]["tool"], "EditTool");
}

TEST_F(OdinToolTest, FileChangedOnDiskBetweenReadAndEdit) {
  Put("a.txt", "version 1\n");
  std::string session = Tool("Read", {{"file_path", "a.txt"}})["session_id"];
  Put("a.txt", "version 2\n");  // someone else edits it
  json e = Tool("EditTool", {{"file_path", "a.txt"}, {"old_string", "version"}, {"new_string", "v"}}, session);
  EXPECT_EQ(e["status"], "rejected");
  EXPECT_NE(e["error"].get<std::string>().find("a.txt changed since you read it"), std::string::npos);
  EXPECT_EQ(Get("a.txt"), "version 2\n");
  Tool("Read", {{"file_path", "a.txt"}}, session);
  EXPECT_EQ(
      Tool("EditTool", {{"file_path", "a.txt"}, {"old_string", "version"}, {"new_string", "v"}}, session)["status"],
      "ok");
  EXPECT_EQ(Get("a.txt"), "v 2\n");
}

TEST_F(OdinToolTest, ConcurrentEditsOfOneFileLandOneAtATime) {
  Put("shared.txt", "count: 0\n");
  std::string session = Tool("Read", {{"file_path", "shared.txt"}})["session_id"];
  // Two coordinators, one read: both edits target the same version; the
  // worker-side lock and hash check let exactly one land.
  std::vector<std::pair<pid_t, int>> running;
  for (const char* to : {"1", "2"}) {
    int out;
    json args = {{"file_path", "shared.txt"}, {"old_string", "0"}, {"new_string", to}};
    running.push_back(
        {StartOdin(ws_.path(), {"tool", "EditTool", args.dump(), "--json", "--session", session}, &out), out});
  }
  int ok = 0, rejected = 0;
  for (auto [pid, out] : running) {
    std::string text = ReadUntil(out, "\n}");
    close(out);
    Wait(pid);
    json j = json::parse(text, nullptr, false);
    ok += j.value("status", "") == "ok";
    rejected += j.value("status", "") == "rejected";
  }
  EXPECT_EQ(ok, 1);
  EXPECT_EQ(rejected, 1);
  std::string now = Get("shared.txt");
  EXPECT_TRUE(now == "count: 1\n" || now == "count: 2\n") << now;
}

TEST_F(OdinToolTest, MultiEditIsAllOrNothing) {
  Put("m.txt", "a b c\n");
  std::string session = Tool("Read", {{"file_path", "m.txt"}})["session_id"];
  json bad =
      Tool("MultiEditTool",
           {{"file_path", "m.txt"},
            {"edits", {{{"old_string", "a"}, {"new_string", "A"}}, {{"old_string", "zzz"}, {"new_string", "Z"}}}}},
           session);
  EXPECT_EQ(bad["status"], "error");
  EXPECT_EQ(Get("m.txt"), "a b c\n");
  json good =
      Tool("MultiEditTool",
           {{"file_path", "m.txt"},
            {"edits", {{{"old_string", "a"}, {"new_string", "A"}}, {{"old_string", "A b"}, {"new_string", "AB"}}}}},
           session);
  ASSERT_EQ(good["status"], "ok") << good.dump();
  EXPECT_EQ(Get("m.txt"), "AB c\n");
}

TEST_F(OdinToolTest, WriteRecordsDiffAndHashesAsArtifacts) {
  json w = Tool("WriteFile", {{"file_path", "src/new.txt"}, {"content", "fresh\n"}});
  ASSERT_EQ(w["status"], "ok") << w.dump();
  EXPECT_EQ(Get("src/new.txt"), "fresh\n");
  json show = json::parse(RunOdin(ws_.path(), {"show", "--json", w["execution_id"]}).out);
  std::vector<std::string> kinds;
  for (const json& a : show["artifacts"]) kinds.push_back(a["kind"]);
  EXPECT_EQ(kinds, (std::vector<std::string>{"diff", "content_hashes"}));
  // Overwriting it needs a read first, like any change to an existing file.
  EXPECT_EQ(Tool("WriteFile", {{"file_path", "src/new.txt"}, {"content", "other\n"}})["status"], "rejected");
  EXPECT_EQ(Tool("WriteFile", {{"file_path", "src/new.txt"}, {"content", "other\n"}}, w["session_id"])["status"], "ok");
}

TEST_F(OdinToolTest, CrlfAndLatin1FilesKeepTheirBytes) {
  // Non-UTF-8 bytes in the diff must not break the worker protocol either.
  Put("dos.txt", "first\r\nsecond caf\xe9\r\n");
  std::string session = Tool("Read", {{"file_path", "dos.txt"}})["session_id"];
  ASSERT_EQ(Tool("EditTool", {{"file_path", "dos.txt"}, {"old_string", "first\nsecond"}, {"new_string", "1\n2"}},
                 session)["status"],
            "ok");
  EXPECT_EQ(Get("dos.txt"), "1\r\n2 caf\xe9\r\n");
}

TEST_F(OdinToolTest, GrepAndGlobRespectGitignore) {
  Put(".gitignore", "ignored/\n*.log\n");
  Put("src/keep.cc", "needle\n");
  Put("ignored/skip.cc", "needle\n");
  Put("debug.log", "needle\n");
  json g = Tool("Grep", {{"pattern", "needle"}});
  EXPECT_EQ(g["output"], "Found 1 file\nsrc/keep.cc\n");
  json glob = Tool("Glob", {{"pattern", "**/*.cc"}});
  EXPECT_EQ(glob["output"], "src/keep.cc\n");
  json ls = Tool("LS", {{"path", "."}});
  EXPECT_EQ(ls["output"], "- ./\n  - src/\n    - keep.cc\n");
}

TEST_F(OdinToolTest, AskModeRefusesWritesAndItsWorkersCannotWrite) {
  Put("a.txt", "x\n");
  json e = Tool("WriteFile", {{"file_path", "b.txt"}, {"content", "y"}}, "", "ask");
  EXPECT_EQ(e["status"], "rejected");
  EXPECT_NE(e["error"].get<std::string>().find("not available in ask mode"), std::string::npos);
  // The operating system agrees: the ask-mode worker's workspace is read-only.
  json c = Tool("ExecuteCommand", {{"command", "touch c.txt"}}, "", "ask");
  if (c["output"].get<std::string>().find("WITHOUT") == std::string::npos) {
    EXPECT_EQ(c["status"], "error");
    EXPECT_FALSE(PathExists(ws_.Join("c.txt")));
  }
  EXPECT_FALSE(PathExists(ws_.Join("b.txt")));
}

TEST_F(OdinToolTest, TodoWriteIsKeptAndRecorded) {
  json t = Tool("TodoWrite", {{"todos",
                               {{{"id", "1"}, {"content", "read the code"}, {"status", "completed"}},
                                {{"id", "2"}, {"content", "fix the bug"}, {"status", "in_progress"}}}}});
  ASSERT_EQ(t["status"], "ok");
  EXPECT_EQ(t["output"],
            "[x] 1. read the code\n[>] 2. fix the bug\n"
            "Todo list updated: 2 items, 1 completed, 1 in progress, 0 pending\n");
}

// --- bad input: a clear error, nothing written -------------------------------

TEST_F(OdinToolTest, BadInputGetsClearErrors) {
  Put("a.txt", "content\n");
  Put("bin.dat", std::string("\x00\x01\x02", 3));
  Put("big.txt", std::string((10u << 20) + 1, 'x'));
  ASSERT_TRUE(MakeDirs(ws_.Join("dir")).ok());
  ASSERT_EQ(symlink("/etc", ws_.Join("escape").c_str()), 0);
  std::string session = Tool("Read", {{"file_path", "a.txt"}})["session_id"];
  struct Case {
    std::string tool;
    json args;
    std::string error;
  };
  std::vector<Case> cases = {
      {"Read", {{"file_path", "missing.txt"}}, "Read: missing.txt does not exist"},
      {"Read", {{"file_path", "dir"}}, "is a directory, not a file"},
      {"Read", {{"file_path", "bin.dat"}}, "bin.dat is a binary file (3 bytes); its contents are not shown"},
      {"Read", {{"file_path", "big.txt"}}, "over the limit of 10485760 bytes"},
      {"Read", {{"file_path", "../outside.txt"}}, "needs approval: Read of ../outside.txt"},
      {"Read", {{"file_path", "escape/passwd"}}, "Read of escape/passwd (/etc/passwd) reads outside the workspace"},
      {"Read", {{"file_path", "/etc/passwd"}}, "reads outside the workspace; this run's approval policy is deny"},
      {"Read", json::object(), "Read: missing required field 'file_path'"},
      {"Read", {{"file_path", "a.txt"}, {"offset", -3}}, "'offset' must be an integer of at least 1"},
      {"EditTool", {{"file_path", "a.txt"}, {"old_string", ""}, {"new_string", "x"}}, "old_string is empty"},
      {"EditTool", {{"file_path", "a.txt"}, {"old_string", "content"}, {"new_string", "content"}}, "identical"},
      {"EditTool", {{"file_path", "a.txt"}, {"old_string", "absent"}, {"new_string", "x"}}, "old_string not found"},
      {"EditTool", {{"file_path", "a.txt"}, {"old_string", "x"}}, "missing required field 'new_string'"},
      {"EditTool",
       {{"file_path", "missing.txt"}, {"old_string", "a"}, {"new_string", "b"}},
       "missing.txt does not exist; use WriteFile to create it"},
      {"WriteFile", {{"file_path", "dir"}, {"content", "x"}}, "is a directory, not a file"},
      {"Frobnicate", {{"x", 1}}, "unknown tool 'Frobnicate'"},
  };
  for (const Case& c : cases) {
    json r = Tool(c.tool, c.args, session);
    EXPECT_NE(r["status"], "ok") << c.tool << " " << c.args.dump();
    EXPECT_NE(r.value("error", json("")).dump().find(c.error), std::string::npos)
        << c.tool << " " << c.args.dump() << " -> " << r.dump();
  }
  // Malformed JSON never reaches a tool; it is still an answered, recorded call.
  Ran bad = RunOdin(ws_.path(), {"tool", "Read", "{not json", "--json"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find("not valid JSON"), std::string::npos) << bad.out;
  EXPECT_EQ(Get("a.txt"), "content\n");
  EXPECT_FALSE(PathExists(ws_.Join("missing.txt")));
  Ran unknown_session = RunOdin(ws_.path(), {"tool", "Read", R"({"file_path":"a.txt"})", "--session", "ses_nope"});
  EXPECT_EQ(unknown_session.exit_code, 1);
  EXPECT_EQ(unknown_session.err, "odin tool: session ses_nope: no such session in the ledger\n");
}

}  // namespace
}  // namespace odin::testing

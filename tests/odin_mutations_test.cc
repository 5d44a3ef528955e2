// Every change is a mutation, end to end: what a command changes in the
// workspace is recorded, staled, reported and counted like a file tool's
// write, through the real odin, sandbox, workers and ledger. (The
// validation of a command's changes, with clangd, is in
// odin_validation_test.cc.)

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "tests/ledger_rows.h"
#include "tests/llm_requests.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

class OdinMutationsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A real repository: its .gitignore decides what is summarised.
    StatusOr<CommandOutput> init = RunCommand({.argv = {"git", "init", "-q", ws_.path()}, .env = CurrentEnvironment()});
    ASSERT_TRUE(init.ok() && init->exit_code == 0);
  }
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  std::map<std::string, std::string> Env(const FakeLlm& llm) { return FakeModelEnv(llm, marker_, user_); }
  json Prompt(const FakeLlm& llm, std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"-p", "do the task", "--output-format", "json"};
    args.insert(args.end(), more.begin(), more.end());
    last_ =
        wrapper_.empty() ? RunOdin(ws_.path(), args, Env(llm)) : RunOdinWrapped(wrapper_, ws_.path(), args, Env(llm));
    json j = json::parse(last_.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "stdout: " << last_.out << "\nstderr: " << last_.err;
    return j;
  }
  // The newest tool result a request carried, parsed.
  static json LastResult(const json& request) {
    std::vector<json> results = ToolResultsOf(request);
    return results.empty() ? json() : results.back();
  }
  void Put(const std::string& rel, const std::string& content) {
    ASSERT_TRUE(WriteFileAtomic(ws_.Join(rel), content).ok());
  }
  std::string Get(const std::string& rel) { return *ReadFileToString(ws_.Join(rel)); }
  // Waits until the clock file times come from (the kernel's coarse one)
  // is past path's ctime. False if it never is.
  static bool WaitForFileClockToPass(const std::string& path) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return false;
    int64_t changed = int64_t{st.st_ctim.tv_sec} * 1'000'000'000 + st.st_ctim.tv_nsec;
    return WaitUntil(
        [changed] {
          timespec now{};
          clock_gettime(CLOCK_REALTIME_COARSE, &now);
          return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec > changed;
        },
        std::chrono::seconds(5));
  }
  void Git(std::vector<std::string> args) {
    std::vector<std::string> argv = {"git", "-C", ws_.path(), "-c", "user.name=t", "-c", "user.email=t@t"};
    argv.insert(argv.end(), args.begin(), args.end());
    StatusOr<CommandOutput> out = RunCommand({.argv = argv, .env = CurrentEnvironment()});
    ASSERT_TRUE(out.ok() && out->exit_code == 0) << (out.ok() ? out->output : out.status().message());
  }
  // Files git wrote in the same clock tick as its index are "racily clean":
  // their recorded stat cannot vouch for them (git, and Odin, compare the
  // bytes instead). Committed files are usually older: make these so.
  void AgeForGit(const std::vector<std::string>& rels) {
    struct timespec past[2] = {{time(nullptr) - 60, 0}, {time(nullptr) - 60, 0}};
    for (const std::string& rel : rels) ASSERT_EQ(utimensat(AT_FDCWD, ws_.Join(rel).c_str(), past, 0), 0) << rel;
    Git({"update-index", "-q", "--refresh"});
  }
  std::vector<std::string> Rows(const std::string& sql, const std::string& bind = "") {
    return LedgerRows(ws_.Join(".odin/odin.db"), sql, bind);
  }
  // Whether the command ran over the workspace overlay (its writes applied
  // by the coordinator), as its end record says.
  bool RanOverOverlay(const std::string& execution_id) {
    std::vector<std::string> rows = Rows("SELECT result_json FROM execution_ends WHERE execution_id = ?", execution_id);
    return !rows.empty() && rows[0].find("\"overlay\":true") != std::string::npos;
  }
  // Whether a running command has written rel in its overlay (not landed yet).
  // (Written, not only made: a shell's `>` makes the file before its echo
  // writes the one line, and a test that acts in between sees it empty.)
  bool InACommandsOverlay(const std::string& rel) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(ws_.Join(".odin/overlay"), ec)) {
      std::error_code size_ec;
      if (std::filesystem::file_size(e.path().string() + "/u/" + rel, size_ec) > 0 && !size_ec) return true;
    }
    return false;
  }
  // The one ExecuteCommand the session ran.
  std::string CommandId() {
    std::vector<std::string> ids = Rows("SELECT execution_id FROM execution_starts WHERE tool = 'ExecuteCommand'");
    return ids.empty() ? "" : ids[0];
  }

  // The command changes shared.txt (in its overlay) and stops itself; the
  // test, seeing the change wait in the upper directory, changes the real
  // file, then lets the command go on.
  static constexpr const char* kStopsAfterWritingShared = R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"echo mine > shared.txt && kill -STOP $$ && echo resumed"}}]},
    {"text":"Done."}]})";
  json ChangedWhileTheCommandRuns(const FakeLlm& llm, bool removed = false) {
    Put("shared.txt", "before\n");
    std::thread outsider([&] {
      ASSERT_TRUE(WaitUntil([&] { return InACommandsOverlay("shared.txt"); }));
      if (removed) {
        ASSERT_EQ(unlink(ws_.Join("shared.txt").c_str()), 0);
      } else {
        Put("shared.txt", "theirs\n");
      }
      for (pid_t pid : ProcessesWithEnv("ODIN_TEST_MARK", marker_)) kill(pid, SIGCONT);
    });
    json r = Prompt(llm);
    outsider.join();
    return r;
  }
  // Odin runs in a user namespace whose inotify watch limit is 3 (a real
  // kernel limit, per user namespace), so its change tracker has no
  // watches: false, with why, where no such namespace can be made.
  bool WithoutWatches(std::string* why) {
    const std::string set_limit = "echo 3 > /proc/sys/user/max_inotify_watches";
    StatusOr<CommandOutput> probe =
        RunCommand({.argv = {"unshare", "-Ur", "sh", "-c", set_limit}, .env = CurrentEnvironment()});
    if (!probe.ok() || probe->exit_code != 0) {
      *why = "no user namespace with its own inotify limit here: " +
             (probe.ok() ? probe->output : probe.status().message());
      return false;
    }
    wrapper_ = {"unshare", "-Ur", "sh", "-c", set_limit + " && exec \"$0\" \"$@\""};
    return true;
  }

  TempWorkspace ws_;
  TempWorkspace user_;
  std::string marker_ = UniqueMarker();
  std::vector<std::string> wrapper_;  // what runs odin (WithoutWatches), or nothing
  Ran last_;
};

// A command's creations, modifications and deletions reach the model, the
// report, changed_files and the ledger; what git ignores is only counted.
TEST_F(OdinMutationsTest, ACommandsChangesAreRecordedReportedAndIgnoredOnesCounted) {
  Put(".gitignore", "node_modules/\n");
  Put("old.txt", "old\n");
  Put("keep.txt", "one\ntwo\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"mkdir -p node_modules/pkg && echo x > node_modules/pkg/index.js && echo hi > new.txt && rm old.txt && printf 'one\n2\n' > keep.txt"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u);
  json record = LastResult(requests[1]);
  std::string command = record["execution_id"];
  json expected = json::array({{{"path", "keep.txt"}, {"change", "modified"}},
                               {{"path", "new.txt"}, {"change", "created"}},
                               {{"path", "old.txt"}, {"change", "deleted"}}});
  EXPECT_EQ(record["changes"], expected) << record.dump();
  EXPECT_EQ(record["ignored_changes"]["node_modules"], 3) << record.dump();  // the two directories and the file

  EXPECT_EQ(r["changed_files"], json::array({"keep.txt", "new.txt", "old.txt"}));
  const json& files = r["report"]["files"];
  ASSERT_EQ(files.size(), 3u) << r["report"].dump();
  EXPECT_EQ(files[0]["path"], "keep.txt");
  EXPECT_EQ(files[0]["by_command"], true);
  EXPECT_EQ(files[0]["execution_ids"], json::array({command}));
  // Never read, but the workspace held its bytes until the command's
  // version landed from the overlay: its lines are counted.
  bool overlay = RanOverOverlay(command);
  EXPECT_TRUE(overlay) << "bubblewrap sandboxes commands here, so they run over the overlay";
  EXPECT_EQ(files[0]["lines_added"], 1) << r["report"].dump();
  EXPECT_EQ(files[0]["lines_removed"], 1);
  EXPECT_EQ(files[1]["change"], "created");
  EXPECT_EQ(files[1]["lines_added"], 1);
  EXPECT_EQ(files[2]["change"], "deleted");
  ASSERT_EQ(r["report"]["ignored_changes"].size(), 1u);
  EXPECT_EQ(r["report"]["ignored_changes"][0]["path"], "node_modules");
  EXPECT_EQ(r["report"]["ignored_changes"][0]["entries"], 3);

  // One record per path, chained like every other record.
  std::vector<std::string> rows =
      Rows("SELECT substr(path, length(?) + 2), change, source, undoable FROM mutations WHERE execution_id = '" +
               command + "' ORDER BY path",
           ws_.path());
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], "keep.txt|modified|command|1");  // its bytes before: the workspace's, kept
  EXPECT_EQ(rows[1], "new.txt|created|command|1");    // undone by deleting it
  EXPECT_EQ(rows[2], "node_modules|ignored|command|0");
  EXPECT_EQ(rows[3], "old.txt|deleted|command|1");
  EXPECT_EQ(Rows("SELECT after_sha256 FROM mutations WHERE path LIKE '%/new.txt'")[0],
            "98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4");  // sha256("hi\n")
  EXPECT_EQ(RunOdin(ws_.path(), {"ledger", "verify"}, Env(llm)).exit_code, 0);
}

// Two commands that can write, asked for in one turn: they run one after
// the other, in the order asked for (the writers' lane), so each change set is exactly its own
// command's, and two writes to one file both land, the second on top of the
// first: nothing lost, and the records chain the file's hashes.
TEST_F(OdinMutationsTest, TwoCommandsInOneTurnEachGetTheirOwnChangesAndNothingIsLost) {
  Put("shared.txt", "base\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[
      {"id":"first","name":"ExecuteCommand","arguments":{"command":"echo one > a.txt; echo first >> shared.txt; sleep 0.3; if [ -f b.txt ]; then echo overlapped; else echo alone; fi"}},
      {"id":"second","name":"ExecuteCommand","arguments":{"command":"if [ -f a.txt ]; then echo after-first; fi; echo two > b.txt; echo second >> shared.txt"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(Get("shared.txt"), "base\nfirst\nsecond\n");
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u);
  std::vector<json> results = ToolResultsOf(requests[1]);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]["output"], "alone\n");
  EXPECT_EQ(results[1]["output"], "after-first\n");
  EXPECT_EQ(results[0]["changes"],
            json::array({{{"path", "a.txt"}, {"change", "created"}}, {{"path", "shared.txt"}, {"change", "modified"}}}))
      << results[0].dump();
  EXPECT_EQ(results[1]["changes"],
            json::array({{{"path", "b.txt"}, {"change", "created"}}, {{"path", "shared.txt"}, {"change", "modified"}}}))
      << results[1].dump();
  std::string first = results[0]["execution_id"], second = results[1]["execution_id"];
  auto column = [&](const std::string& name) {
    return Rows("SELECT " + name + " FROM mutations WHERE path = ? ORDER BY rowid", ws_.Join("shared.txt"));
  };
  EXPECT_EQ(column("execution_id"), std::vector<std::string>({first, second}));
  std::vector<std::string> before = column("before_sha256"), after = column("after_sha256");
  ASSERT_EQ(before.size(), 2u);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(before[1], after[0]);  // the second changed what the first left
  EXPECT_EQ(Rows("SELECT count(*) FROM mutations WHERE note LIKE '%same time%'")[0], "0");
}

// A file changed by a command since the model read it: an edit based on
// that Read is refused, naming the command; after a new Read it lands.
TEST_F(OdinMutationsTest, AnEditAfterACommandChangedTheFileWaitsForANewRead) {
  Put("a.txt", "one\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"a.txt"}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"sed -i s/one/two/ a.txt"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"a.txt","old_string":"one","new_string":"three"}}]},
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"a.txt"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"a.txt","old_string":"two","new_string":"three"}}]},
    {"text":"a.txt says three."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(Get("a.txt"), "three\n");
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 6u);
  std::string sed = LastResult(requests[2])["execution_id"];
  json refused = LastResult(requests[3]);
  EXPECT_EQ(refused["status"], "rejected");
  EXPECT_NE(refused["output"].get<std::string>().find("changed since you read it (by " + sed + ")"), std::string::npos)
      << refused.dump();
  EXPECT_EQ(LastResult(requests[5])["status"], "ok");
  // The command's change had its before-image (the Read held the bytes):
  // counted in lines, and undoable.
  EXPECT_EQ(
      Rows("SELECT lines_added || '/' || lines_removed || '/' || undoable FROM mutations WHERE execution_id = ?", sed),
      std::vector<std::string>{"1/1/1"});
  // The report lists both changes of the file, the command's and the edit's.
  const json& files = r["report"]["files"];
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0]["execution_ids"].size(), 2u);
  EXPECT_EQ(files[0]["execution_ids"][0], sed);
}

// Commands that only read (cat, git status) run in the workers' read-only
// view: no overlay is made, read or applied for them, and nothing of them is
// tracked; a command that can write still runs over its overlay.
TEST_F(OdinMutationsTest, CommandsThatOnlyReadRunInTheReadOnlyViewAndAreNotTracked) {
  Put("a.txt", "alpha\n");
  // The first command can write: once its result is in, the workers' Hello
  // (which says they have the overlay, and so the view) has come.
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"echo beta > b.txt"}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"cat a.txt b.txt"}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"git status --short | sort"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 4u);
  json write = LastResult(requests[1]), cat = LastResult(requests[2]), status = LastResult(requests[3]);
  EXPECT_TRUE(RanOverOverlay(write["execution_id"])) << "bubblewrap sandboxes commands here";
  EXPECT_EQ(write["changes"], json::array({{{"path", "b.txt"}, {"change", "created"}}})) << write.dump();
  EXPECT_EQ(cat["output"], "alpha\nbeta\n") << cat.dump();
  EXPECT_EQ(status["output"], "?? a.txt\n?? b.txt\n") << status.dump();
  for (const json& read : {cat, status}) {
    std::string id = read["execution_id"];
    EXPECT_EQ(read["exit_code"], 0) << read.dump();
    EXPECT_FALSE(read.contains("changes")) << read.dump();
    EXPECT_FALSE(read.contains("workspace")) << read.dump();  // nothing tried to write
    EXPECT_FALSE(RanOverOverlay(id));
    EXPECT_EQ(Rows("SELECT count(*) FROM execution_ends WHERE execution_id = ? AND result_json LIKE "
                   "'%\"read_only_view\":true%'",
                   id),
              std::vector<std::string>{"1"});
    EXPECT_EQ(Rows("SELECT count(*) FROM mutations WHERE execution_id = ?", id), std::vector<std::string>{"0"});
  }
  EXPECT_EQ(r["changed_files"], json::array({"b.txt"}));
}

// A directory the user hides inside the workspace is a mask the read-only
// view could lose while a command runs (it sits on the directory itself,
// which can be made again): there, commands that only read run over
// overlays, whose masks hold.
TEST_F(OdinMutationsTest, WithAHiddenDirectoryInTheWorkspaceCommandsThatOnlyReadRunOverOverlays) {
  Put("a.txt", "alpha\n");
  ASSERT_TRUE(MakeDirs(ws_.Join("secrets")).ok());
  Put("secrets/k", "KEY\n");
  ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
  ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"),
                              json({{"sandbox", {{"hide", {ws_.Join("secrets")}}}}}).dump())
                  .ok());
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"echo beta > b.txt"}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"cat a.txt secrets/k"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 3u);
  json cat = LastResult(requests[2]);
  std::string output = cat["output"];
  EXPECT_NE(output.find("alpha"), std::string::npos) << cat.dump();
  EXPECT_EQ(output.find("KEY"), std::string::npos) << cat.dump();
  EXPECT_TRUE(RanOverOverlay(cat["execution_id"])) << cat.dump();
}

// A repository whose own config makes `git diff` run a program of its
// (diff.external) would write through a command judged to only read: in
// the read-only view the write fails and nothing changes. The same program
// run another way (bash -c) runs over the overlay, and its write is
// recorded as the command's.
TEST_F(OdinMutationsTest, ACommandJudgedToOnlyReadCannotWriteThroughTheRepositorysConfig) {
  Put("t.txt", "one\n");
  Git({"add", "t.txt"});
  Git({"commit", "-q", "-m", "t"});
  Put("t.txt", "two\n");
  Put("differ.sh", "#!/bin/sh\necho pwned > pwned.txt\necho differ ran\n");
  ASSERT_EQ(chmod(ws_.Join("differ.sh").c_str(), 0755), 0);
  Git({"config", "diff.external", ws_.Join("differ.sh")});
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"echo warm > w.txt"}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"git diff"}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"bash -c 'git diff'"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 4u);
  json viewed = LastResult(requests[2]), other = LastResult(requests[3]);
  std::string output = viewed["output"];
  EXPECT_NE(output.find("differ ran"), std::string::npos) << viewed.dump();
  EXPECT_NE(output.find("Read-only file system"), std::string::npos) << viewed.dump();
  // The model is told why, and how to run it where it can write.
  EXPECT_NE(viewed.value("workspace", "").find("bash -c"), std::string::npos) << viewed.dump();
  EXPECT_EQ(Rows("SELECT count(*) FROM mutations WHERE execution_id = ?", viewed["execution_id"].get<std::string>()),
            std::vector<std::string>{"0"});
  // Written by the other run alone.
  EXPECT_EQ(Get("pwned.txt"), "pwned\n");
  EXPECT_EQ(other["changes"], json::array({{{"path", "pwned.txt"}, {"change", "created"}}})) << other.dump();
  EXPECT_EQ(Rows("SELECT change || '|' || source FROM mutations WHERE path = ?", ws_.Join("pwned.txt")),
            std::vector<std::string>{"created|command"});
}

// odin exec in its own (writable) mode records what the command changed,
// and a read-only mode changes nothing.
TEST_F(OdinMutationsTest, OdinExecRecordsWhatItsCommandChanged) {
  Ran ran = RunOdin(ws_.path(), {"exec", "--json", "--", "sh", "-c", "echo made > made.txt"},
                    {{"ODIN_TEST_MARK", marker_},
                     {"XDG_CONFIG_HOME", user_.Join("config")},
                     {"XDG_STATE_HOME", user_.Join("state")}});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  json out = json::parse(ran.out);
  EXPECT_EQ(out["changed_files"], json::array({"made.txt"})) << ran.out;
  std::string id = out["execution_id"];
  EXPECT_EQ(Rows("SELECT change || '|' || source FROM mutations WHERE execution_id = ?", id),
            std::vector<std::string>{"created|command"});
}

// odin exec makes no look at the tree when its worker's Hello says its
// commands run over the overlay; where the worker cannot make one (here:
// the overlay's directory is not writable to it, so its probe fails), the
// Hello says so and the coordinator looks first. Either way the command's
// changes are recorded (an unread file's with its before-image only over
// the overlay).
TEST_F(OdinMutationsTest, OdinExecRecordsChangesWithOrWithoutTheOverlay) {
  for (bool overlay : {true, false}) {
    SCOPED_TRACE(overlay ? "overlay" : "no overlay");
    std::string rel = overlay ? "with.txt" : "without.txt";
    Put(rel, "before\n");
    // odin exec has no tracker: a change whose ctime is in its dispatch's
    // tick of the file system's clock counts as one made meanwhile. The
    // test's write is from before: let that tick pass.
    ASSERT_TRUE(WaitForFileClockToPass(ws_.Join(rel)));
    MakeOdinStateDir(ws_.path());
    ASSERT_TRUE(MakeDirs(ws_.Join(".odin/overlay")).ok());
    chmod(ws_.Join(".odin/overlay").c_str(), overlay ? 0700 : 0500);
    Ran ran = RunOdin(ws_.path(), {"exec", "--json", "--", "sh", "-c", "echo after > " + rel + "; echo n > new-" + rel},
                      {{"ODIN_TEST_MARK", marker_},
                       {"XDG_CONFIG_HOME", user_.Join("config")},
                       {"XDG_STATE_HOME", user_.Join("state")}});
    chmod(ws_.Join(".odin/overlay").c_str(), 0700);
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    json out = json::parse(ran.out);
    EXPECT_EQ(out["changed_files"], json::array({"new-" + rel, rel})) << ran.out;
    EXPECT_EQ(Get(rel), "after\n");
    std::string id = out["execution_id"];
    EXPECT_EQ(Rows("SELECT substr(path, length('" + ws_.path() +
                       "') + 2) || '|' || change || '|' || undoable "
                       "FROM mutations WHERE execution_id = ? ORDER BY path",
                   id),
              (std::vector<std::string>{"new-" + rel + "|created|1",
                                        // Unread and uncommitted: its bytes before only the overlay has.
                                        rel + "|modified|" + (overlay ? "1" : "0")}));
    EXPECT_EQ(RanOverOverlay(id), overlay);
  }
}

// A worker killed while it held an overlay prepared for its next command
// (or in its probe) leaves its directories; the next session's start
// removes them. A command's own directories (its work, which a coordinator
// that died never applied) are left as they are.
TEST_F(OdinMutationsTest, WhatKilledWorkersLeftIsRemovedAtTheNextStart) {
  MakeOdinStateDir(ws_.path());
  std::string overlay = ws_.Join(".odin/overlay");
  for (const char* id : {"next-00000000000000aa", "probe-00000000000000bb", "ex_planted"}) {
    ASSERT_TRUE(MakeDirs(overlay + "/" + id + "/u").ok());
    ASSERT_TRUE(MakeDirs(overlay + "/" + id + "/w/work").ok());
    Put(std::string(".odin/overlay/") + id + "/u/f.txt", "f\n");
    ASSERT_EQ(chmod((overlay + "/" + id + "/w/work").c_str(), 0), 0);  // as the overlay leaves it
  }
  Ran ran = RunOdin(ws_.path(), {"exec", "--json", "--", "sh", "-c", "echo a > a.txt"},
                    {{"ODIN_TEST_MARK", marker_},
                     {"XDG_CONFIG_HOME", user_.Join("config")},
                     {"XDG_STATE_HOME", user_.Join("state")}});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_TRUE(RanOverOverlay(json::parse(ran.out)["execution_id"]));
  EXPECT_EQ(Get("a.txt"), "a\n");
  EXPECT_FALSE(PathExists(overlay + "/next-00000000000000aa"));
  EXPECT_FALSE(PathExists(overlay + "/probe-00000000000000bb"));
  EXPECT_EQ(Get(".odin/overlay/ex_planted/u/f.txt"), "f\n");
  // And the session's own worker left nothing of its own behind.
  for (const auto& e : std::filesystem::directory_iterator(overlay)) {
    EXPECT_EQ(e.path().filename().string(), "ex_planted");
  }
}

// odin undo: a command's changes and a file tool's edit put back from the
// ledger's before-images; refused after a later change unless forced; a
// dry run changes nothing; the undo is recorded, and can itself be undone.
TEST_F(OdinMutationsTest, UndoPutsBackACommandsChangesAndIsRecorded) {
  Put("a.txt", "one\n");
  Put("old.txt", "old\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"a.txt"}},{"name":"Read","arguments":{"file_path":"old.txt"}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"sed -i s/one/two/ a.txt && echo new > new.txt && rm old.txt"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  std::string command = LastResult(RequestsOf(llm)[2])["execution_id"];
  auto user = [&] {
    return std::map<std::string, std::string>{{"XDG_CONFIG_HOME", user_.Join("config")},
                                              {"XDG_STATE_HOME", user_.Join("state")}};
  };

  // A dry run shows the diff and writes nothing.
  Ran dry = RunOdin(ws_.path(), {"undo", command, "--dry-run"}, user());
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("restore a.txt"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("-two"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("+one"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("remove new.txt"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("recreate old.txt"), std::string::npos) << dry.out;
  EXPECT_EQ(Get("a.txt"), "two\n");

  // A later change to one of its files: refused, nothing written.
  Put("a.txt", "two, then edited by hand\n");
  Ran refused = RunOdin(ws_.path(), {"undo", command}, user());
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("a.txt: it changed since"), std::string::npos) << refused.err;
  EXPECT_TRUE(PathExists(ws_.Join("new.txt")));
  EXPECT_FALSE(PathExists(ws_.Join("old.txt")));

  // Forced: everything as it was before the command.
  Ran forced = RunOdin(ws_.path(), {"undo", command, "--force", "--json"}, user());
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  std::string undo = json::parse(forced.out)["execution_id"];
  EXPECT_EQ(Get("a.txt"), "one\n");
  EXPECT_EQ(Get("old.txt"), "old\n");
  EXPECT_FALSE(PathExists(ws_.Join("new.txt")));
  EXPECT_EQ(Rows("SELECT tool FROM execution_starts WHERE execution_id = ?", undo), std::vector<std::string>{"Undo"});
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM mutations WHERE execution_id = ? AND source = 'undo'", undo)[0], "3");

  // --last goes further back, never to an undo, and never twice to one call:
  // nothing else changed files here.
  Ran last = RunOdin(ws_.path(), {"undo", "--last"}, user());
  EXPECT_EQ(last.exit_code, 1);
  EXPECT_NE(last.err.find("not undone already"), std::string::npos) << last.err;
  // The undo is a call like any: undoing it brings back what it replaced.
  Ran redo = RunOdin(ws_.path(), {"undo", undo}, user());
  ASSERT_EQ(redo.exit_code, 0) << redo.err;
  EXPECT_NE(redo.out.find(undo), std::string::npos) << redo.out;
  EXPECT_EQ(Get("a.txt"), "two, then edited by hand\n");
  EXPECT_EQ(Get("new.txt"), "new\n");
  EXPECT_FALSE(PathExists(ws_.Join("old.txt")));
  EXPECT_EQ(RunOdin(ws_.path(), {"ledger", "verify"}, user()).exit_code, 0);
}

// A command's first change to a file nobody read has no before-image: undo
// says so and refuses; --force skips it and puts back the rest. A whole
// message's calls are undone with --message, a file tool's edit included.
TEST_F(OdinMutationsTest, UndoOfAMessageAndWhatCannotBeUndone) {
  Put("unread.txt", "unread\n");
  Put("b.txt", "b\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"b.txt"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"b.txt","old_string":"b","new_string":"B"}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"echo changed > unread.txt && echo c > c.txt"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  std::map<std::string, std::string> env = {{"XDG_CONFIG_HOME", user_.Join("config")},
                                            {"XDG_STATE_HOME", user_.Join("state")}};
  std::string message = Rows("SELECT id FROM messages WHERE role = 'user'")[0];
  // Never read, yet undoable: the command ran over the overlay, so the
  // workspace held its bytes until its version landed.
  ASSERT_TRUE(RanOverOverlay(CommandId()));
  EXPECT_EQ(Rows("SELECT undoable FROM mutations WHERE path = ?", ws_.Join("unread.txt")),
            std::vector<std::string>({"1"}));
  // What cannot be undone: c.txt changed since (by someone else).
  Put("c.txt", "someone else's\n");
  Ran refused = RunOdin(ws_.path(), {"undo", "--message", message}, env);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("c.txt"), std::string::npos) << refused.err;
  EXPECT_EQ(Get("b.txt"), "B\n");
  Ran forced = RunOdin(ws_.path(), {"undo", "--message", message, "--force"}, env);
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_FALSE(PathExists(ws_.Join("c.txt")));  // forced over the later change
  EXPECT_EQ(Get("b.txt"), "b\n");
  EXPECT_EQ(Get("unread.txt"), "unread\n");
  // Bad input: one line, non-zero, nothing done.
  Ran bad = RunOdin(ws_.path(), {"undo", "ex_nonexistent"}, env);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("no such execution"), std::string::npos) << bad.err;
  Ran two = RunOdin(ws_.path(), {"undo", "--last", "--message", message}, env);
  EXPECT_EQ(two.exit_code, 1);
}

// A committed file nobody read, changed by a command (sed -i): its bytes
// before come from git's index, so the report counts its lines and undo
// puts it back.
TEST_F(OdinMutationsTest, ACommittedFileNobodyReadIsUndoableFromGitsIndex) {
  Put("src.txt", "one\ntwo\n");
  Git({"add", "src.txt"});
  Git({"commit", "-q", "-m", "base"});
  AgeForGit({"src.txt"});
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"sed -i 's/two/2/' src.txt"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  ASSERT_EQ(r["report"]["files"].size(), 1u) << r["report"].dump();
  EXPECT_EQ(r["report"]["files"][0]["lines_added"], 1) << r["report"].dump();
  EXPECT_EQ(r["report"]["files"][0]["lines_removed"], 1);
  EXPECT_EQ(Rows("SELECT undoable FROM mutations WHERE path = ?", ws_.Join("src.txt")),
            std::vector<std::string>({"1"}));
  Ran undo = RunOdin(ws_.path(), {"undo", "--last"}, Env(llm));
  ASSERT_EQ(undo.exit_code, 0) << undo.err;
  EXPECT_EQ(Get("src.txt"), "one\ntwo\n");
}

// Undo after git's HEAD moved (a commit since the call): it warns, naming
// where HEAD was and is, and still undoes.
// Issue 47, item 11: changes git ignores (a build's output) do not block the
// undo of the files git tracks; they are left alone, said in one line.
TEST_F(OdinMutationsTest, UndoLeavesWhatGitIgnoresAloneAndPutsBackTheRest) {
  Git({"init", "-q"});
  Put(".gitignore", "build/\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"mkdir -p build && echo obj > build/a.o && echo obj > build/b.o && echo made > made.txt"}}]},
    {"text":"Built."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  ASSERT_TRUE(PathExists(ws_.Join("made.txt")));
  Ran undo = RunOdin(ws_.path(), {"undo", "--last"}, Env(llm));
  ASSERT_EQ(undo.exit_code, 0) << undo.out << undo.err;
  EXPECT_FALSE(PathExists(ws_.Join("made.txt")));
  EXPECT_TRUE(PathExists(ws_.Join("build/a.o")));
  EXPECT_NE(undo.out.find("left alone: build/: 3 changes git ignores"), std::string::npos) << undo.out;
}

// A directory the call made whose own .gitignore ignores what is in it (as
// pytest makes .pytest_cache): left alone with its contents, in one line,
// not a failed removal.
TEST_F(OdinMutationsTest, UndoLeavesADirectoryHoldingWhatGitIgnores) {
  Git({"init", "-q"});
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"mkdir -p cache/v && printf '*\\n' > cache/.gitignore && echo x > cache/v/data && echo made > made.txt"}}]},
    {"text":"Built."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  ASSERT_TRUE(PathExists(ws_.Join("cache/v/data")));
  Ran undo = RunOdin(ws_.path(), {"undo", "--last"}, Env(llm));
  ASSERT_EQ(undo.exit_code, 0) << undo.out << undo.err;
  EXPECT_FALSE(PathExists(ws_.Join("made.txt")));
  EXPECT_TRUE(PathExists(ws_.Join("cache/v/data")));
  EXPECT_EQ(undo.out.find("failed"), std::string::npos) << undo.out;
  EXPECT_EQ(undo.out.find("remove directory cache"), std::string::npos) << undo.out;
  // One line for the directory and what it holds.
  EXPECT_NE(undo.out.find("left alone: cache/: made by these calls, with "), std::string::npos) << undo.out;
  EXPECT_EQ(undo.out.find("left alone: cache/v"), std::string::npos) << undo.out;
  EXPECT_EQ(undo.out.find("left alone: cache/.gitignore"), std::string::npos) << undo.out;
}

TEST_F(OdinMutationsTest, UndoWarnsWhenGitsHeadMovedSince) {
  auto git = [&](std::vector<std::string> args) { Git(std::move(args)); };
  Put("a.txt", "one\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"echo made > made.txt"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  Ran quiet = RunOdin(ws_.path(), {"undo", "--last", "--dry-run"}, Env(llm));
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("HEAD moved"), std::string::npos) << quiet.err;  // the branch had no commit then, nor now
  git({"add", "a.txt"});
  git({"commit", "-q", "-m", "since"});
  Ran undo = RunOdin(ws_.path(), {"undo", "--last"}, Env(llm));
  ASSERT_EQ(undo.exit_code, 0) << undo.err;
  EXPECT_NE(undo.err.find("warning: git's HEAD moved since ex_"), std::string::npos) << undo.err;
  EXPECT_NE(undo.err.find("(no commit yet), it is"), std::string::npos) << undo.err;
  EXPECT_FALSE(PathExists(ws_.Join("made.txt")));
}

// Changes nobody asked for: what a command leaves running dies with it, and
// what changes between calls (an editor, another program) is found at the
// next call's boundary, recorded as external (no call's), and staled in the
// file cache, so an edit based on the earlier Read is refused.
TEST_F(OdinMutationsTest, ABackgroundWriterDiesWithItsCommandAndOutsideChangesAreExternal) {
  Put("b.txt", "b\n");
  TempWorkspace release;
  std::string sleeper = "sleep 3." + std::to_string(getpid());
  json script = {
      {"responses",
       {{{"tool_calls",
          {{{"name", "Read"}, {"arguments", {{"file_path", "b.txt"}}}},
           {{"name", "ExecuteCommand"},
            {"arguments",
             {{"command", "echo a > a.txt; (" + sleeper + "; echo late > late.txt) & setsid sh -c '" + sleeper +
                              "; echo escaped > escaped.txt' & echo started"}}}}}}},
        {{"hold_until", release.Join("go")},
         {"tool_calls",
          {{{"name", "EditTool"}, {"arguments", {{"file_path", "b.txt"}, {"old_string", "b"}, {"new_string", "B"}}}}}}},
        {{"text", "Done."}}}}};
  FakeLlm llm(script.dump());
  int out = -1;
  pid_t odin = StartOdin(ws_.path(), {"-p", "do the task", "--output-format", "json"}, &out, Env(llm));
  ASSERT_TRUE(WaitUntil([&] { return RequestsOf(llm).size() >= 2; })) << "the command never ended";
  // The command has ended: what it left running is gone.
  EXPECT_TRUE(WaitUntil([&] { return ProcessesWithArg(sleeper).empty(); }, std::chrono::seconds(2)))
      << "a background writer outlived its command";
  // Meanwhile, outside Odin:
  Put("b.txt", "changed outside\n");
  Put("ext.txt", "new outside\n");
  ASSERT_TRUE(WriteFileAtomic(release.Join("go"), "").ok());
  std::string text = ReadUntil(out, "\n}");
  close(out);
  EXPECT_EQ(Wait(odin), 0);
  json r = json::parse(text.substr(0, text.rfind('}') + 1), nullptr, false);
  ASSERT_FALSE(r.is_discarded()) << text;
  EXPECT_EQ(r["status"], "done");
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 3u);
  json edit = LastResult(requests[2]);
  EXPECT_EQ(edit["status"], "rejected") << edit.dump();
  EXPECT_NE(edit["summary"].get<std::string>().find("changed since you read it (by a change outside Odin)"),
            std::string::npos)
      << edit.dump();
  EXPECT_EQ(Get("b.txt"), "changed outside\n");
  EXPECT_FALSE(PathExists(ws_.Join("late.txt")));
  EXPECT_FALSE(PathExists(ws_.Join("escaped.txt")));
  EXPECT_EQ(Rows("SELECT substr(path, length(?) + 2) || '|' || change || '|' || execution_id FROM mutations "
                 "WHERE source = 'external' ORDER BY path",
                 ws_.path()),
            std::vector<std::string>({"b.txt|modified|", "ext.txt|created|"}));
  // Outside changes are nobody's: not in the message's changed files.
  EXPECT_EQ(r["changed_files"], json::array({"a.txt"}));
}

// The before-image caps come from the config: past ledger.before_image_cap_bytes
// a change keeps only its hash and is not undoable, a file tool's as well
// as a command's.
TEST_F(OdinMutationsTest, BeforeImageCapsFromTheConfig) {
  ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
  ASSERT_TRUE(
      WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), R"({"ledger":{"before_image_cap_bytes":8}})").ok());
  Put("small.txt", "tiny\n");
  Put("large.txt", "more than eight bytes\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"small.txt"}},{"name":"Read","arguments":{"file_path":"large.txt"}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"echo x >> small.txt; echo x >> large.txt"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(Rows("SELECT substr(path, length(?) + 2) || '|' || undoable FROM mutations ORDER BY path", ws_.path()),
            std::vector<std::string>({"large.txt|0", "small.txt|1"}));
}

// A directory replaced by a symlink since: undo never writes through it.
TEST_F(OdinMutationsTest, UndoNeverWritesThroughASymlinkedDirectory) {
  TempWorkspace outside;
  ASSERT_TRUE(MakeDirs(ws_.Join("d")).ok());
  Put("d/x.txt", "x\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"d/x.txt"}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"echo y > d/x.txt"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  std::string command = LastResult(RequestsOf(llm)[2])["execution_id"];
  RemoveTree(ws_.Join("d"));
  ASSERT_EQ(symlink(outside.path().c_str(), ws_.Join("d").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomic(outside.Join("x.txt"), "y\n").ok());
  std::map<std::string, std::string> env = {{"XDG_CONFIG_HOME", user_.Join("config")},
                                            {"XDG_STATE_HOME", user_.Join("state")}};
  Ran forced = RunOdin(ws_.path(), {"undo", command, "--force"}, env);
  EXPECT_EQ(*ReadFileToString(outside.Join("x.txt")), "y\n");  // untouched
  EXPECT_NE((forced.err + forced.out).find("not where it was"), std::string::npos) << forced.err << forced.out;
}

// /undo in the interactive session: the last message's changes shown, put
// back, and the model told with the next message.
TEST_F(OdinMutationsTest, InteractiveUndoPutsBackTheLastMessageAndTellsTheModel) {
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"echo made > made.txt"}}]},
    {"text":"made it"},
    {"text":"understood"}]})");
  int in, out;
  pid_t pid = StartOdinPiped(ws_.path(), {}, &in, &out, Env(llm));
  auto say = [&](const std::string& line) {
    std::string text = line + "\n";
    ASSERT_EQ(write(in, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  };
  say("make the file");
  // The message's end (its report), not only the model's words: /undo
  // waits for a turn that is over.
  std::string seen = ReadUntil(out, "Status: done");
  ASSERT_TRUE(PathExists(ws_.Join("made.txt"))) << seen;
  say("/undo");
  seen = ReadUntil(out, " put back");
  EXPECT_NE(seen.find("remove made.txt"), std::string::npos) << seen;
  EXPECT_NE(seen.find("undone: 1 path put back"), std::string::npos) << seen;
  EXPECT_FALSE(PathExists(ws_.Join("made.txt")));
  say("what now?");
  seen = ReadUntil(out, "Status: done");
  close(in);
  close(out);
  EXPECT_EQ(Wait(pid), 0);
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 3u);
  std::string next = LastMessageOf(requests[2])["content"];
  EXPECT_NE(next.find("The user undid the changes of their previous message"), std::string::npos) << next;
  EXPECT_NE(next.find("made.txt"), std::string::npos) << next;
  EXPECT_NE(next.find("what now?"), std::string::npos) << next;
}

// Protected names anywhere in the tree never land from a command: put back
// or moved aside, recorded as such, and never in the change set.
TEST_F(OdinMutationsTest, ProtectedPathsACommandMakesNeverLandAndAreNotItsChanges) {
  ASSERT_TRUE(MakeDirs(ws_.Join("sub")).ok());
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"echo evil > sub/AGENTS.md; echo '{}' > .mcp.json; echo ok > fine.txt"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  EXPECT_FALSE(PathExists(ws_.Join("sub/AGENTS.md")));
  EXPECT_FALSE(PathExists(ws_.Join(".mcp.json")));
  json record = LastResult(RequestsOf(llm)[1]);
  EXPECT_EQ(record["changes"], json::array({{{"path", "fine.txt"}, {"change", "created"}}})) << record.dump();
  // Over the overlay they never reach the workspace: discarded, said so.
  ASSERT_TRUE(RanOverOverlay(CommandId()));
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM gate_events WHERE kind = 'protected_path_discarded'")[0], "1");
  EXPECT_NE(record.dump().find("did not land"), std::string::npos) << record.dump();
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM mutations WHERE path LIKE '%AGENTS.md' OR path LIKE '%.mcp.json'")[0], "0");
}

// Over the overlay, git's own work lands but what configures git does not,
// whatever path the command takes: a hook planted, the config rewritten,
// .git replaced by a file pointing elsewhere, a nested repository's hooks.
TEST_F(OdinMutationsTest, GitsWorkLandsButNotWhatConfiguresIt) {
  Put("a.txt", "a\n");
  Git({"add", "a.txt"});
  Git({"commit", "-q", "-m", "base"});
  std::string config_before = Get(".git/config");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"git -c user.name=m -c user.email=m@m commit -q --allow-empty -m second; printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout; git config core.fsmonitor 'echo pwned'; echo x >> a.txt"}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"mv .git .git-moved && echo 'gitdir: /tmp' > .git"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  EXPECT_FALSE(PathExists(ws_.Join(".git/hooks/post-checkout")));
  EXPECT_EQ(Get(".git/config"), config_before);
  EXPECT_TRUE(IsDirectory(ws_.Join(".git")));
  EXPECT_EQ(Get("a.txt"), "a\nx\n");
  // The commit itself landed: git's objects and refs are ordinary work.
  StatusOr<CommandOutput> log =
      RunCommand({.argv = {"git", "-C", ws_.path(), "log", "--format=%s"}, .env = CurrentEnvironment()});
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(log->output, "second\nbase\n");
  // git's own files are not mutations.
  std::vector<std::string> git_rows = Rows("SELECT path FROM mutations WHERE path LIKE '%/.git/%'");
  EXPECT_TRUE(git_rows.empty()) << git_rows.size() << " such as " << git_rows[0];
  // mv .git: over the overlay a copy and a removal. The removal of .git
  // and the file in its place never land; the copy does, but not laid out
  // like a git directory (its HEAD is moved aside), so git never takes it
  // for a repository.
  EXPECT_FALSE(PathExists(ws_.Join(".git-moved/HEAD")));
  EXPECT_EQ(RunOdin(ws_.path(), {"ledger", "verify"}, Env(llm)).exit_code, 0);
}

// A worker that dies while its command runs: what the command wrote is in
// its overlay, which the coordinator finds by itself and applies, so the
// changes are recorded and nothing the command did is lost.
TEST_F(OdinMutationsTest, WhatACommandWroteLandsEvenIfItsWorkerDies) {
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"echo data > made.txt && kill -STOP $$"}}]},
    {"text":"Done."}]})");
  std::thread killer([&] {
    ASSERT_TRUE(WaitUntil([&] { return InACommandsOverlay("made.txt"); }));
    for (pid_t pid : ProcessesWithArg("odin-worker")) {
      std::vector<pid_t> ours = ProcessesWithEnv("ODIN_TEST_MARK", marker_);
      if (std::find(ours.begin(), ours.end(), pid) != ours.end()) kill(pid, SIGKILL);
    }
  });
  json r = Prompt(llm);
  killer.join();
  ASSERT_FALSE(r.is_null()) << last_.err;
  EXPECT_EQ(Get("made.txt"), "data\n");
  std::string command = CommandId();
  EXPECT_EQ(Rows("SELECT change || ' ' || source FROM mutations WHERE path = ?", ws_.Join("made.txt")),
            std::vector<std::string>({"created command"}));
  EXPECT_EQ(Rows("SELECT execution_id FROM mutations WHERE path = ?", ws_.Join("made.txt")),
            std::vector<std::string>({command}));
}

// A file changed by something else while a command ran is not overwritten
// by the command's version: a conflict, reported, the command's version
// kept aside, nothing lost.
TEST_F(OdinMutationsTest, AFileChangedWhileTheCommandRanIsAConflictNotOverwritten) {
  FakeLlm llm(kStopsAfterWritingShared);
  json r = ChangedWhileTheCommandRuns(llm);
  // The command's work did not land: not done.
  ASSERT_EQ(r["status"], "conflict") << last_.err;
  EXPECT_EQ(last_.exit_code, 10);
  EXPECT_EQ(Get("shared.txt"), "theirs\n");
  std::string command = CommandId();
  ASSERT_TRUE(RanOverOverlay(command));
  EXPECT_EQ(Get(".odin/conflicts/" + command + "/shared.txt"), "mine\n");
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM gate_events WHERE kind = 'overlay_conflict'")[0], "1");
  json record = LastResult(RequestsOf(llm)[1]);
  EXPECT_NE(record.dump().find("changed by something else while the command ran"), std::string::npos) << record.dump();
  // What changed it is external, never the command's.
  EXPECT_EQ(Rows("SELECT source FROM mutations WHERE path = ?", ws_.Join("shared.txt")),
            std::vector<std::string>({"external"}));
}

// Two sessions at once in one workspace: the second changes a file while
// the first's command (which wrote it too) runs. The first's version is set
// aside, its stale edit is refused naming the other session, and its run
// ends `conflict` (exit 10) with a report that names the other session and
// where the set-aside version is.
TEST_F(OdinMutationsTest, AConflictWithAnotherSessionEndsTheRunAsAConflictNamingIt) {
  Put("shared.txt", "before\n");
  FakeLlm first(R"({"responses":[
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"shared.txt"}}]},
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"echo mine > shared.txt && kill -STOP $$"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"shared.txt","old_string":"before","new_string":"edited"}}]},
    {"text":"Done."}]})");
  FakeLlm second(R"({"responses":[
    {"tool_calls":[{"name":"Read","arguments":{"file_path":"shared.txt"}}]},
    {"tool_calls":[{"name":"EditTool","arguments":{"file_path":"shared.txt","old_string":"before","new_string":"theirs"}}]},
    {"text":"Changed it."}]})");
  Ran other;
  std::thread outsider([&] {
    ASSERT_TRUE(WaitUntil([&] { return InACommandsOverlay("shared.txt"); }));
    other = RunOdin(ws_.path(), {"-p", "change it", "--output-format", "json"}, Env(second));
    for (pid_t pid : ProcessesWithEnv("ODIN_TEST_MARK", marker_)) kill(pid, SIGCONT);
  });
  json r = Prompt(first);
  outsider.join();
  ASSERT_EQ(other.exit_code, 0) << other.err;
  json theirs = json::parse(other.out);
  std::string other_session = theirs["session_id"];
  EXPECT_EQ(Get("shared.txt"), "theirs\n");

  EXPECT_EQ(r["status"], "conflict") << last_.out << last_.err;
  EXPECT_EQ(last_.exit_code, 10);
  EXPECT_EQ(r["is_error"], true);
  std::string command = CommandId();
  // CommandId reads the first ExecuteCommand; the other session ran none.
  EXPECT_EQ(Get(".odin/conflicts/" + command + "/shared.txt"), "mine\n");
  const json& conflicts = r["report"]["conflicts"];
  ASSERT_EQ(conflicts.size(), 1u) << r["report"].dump();
  EXPECT_EQ(conflicts[0]["path"], "shared.txt");
  EXPECT_EQ(conflicts[0]["by_session"], other_session);
  EXPECT_EQ(conflicts[0]["kept_in"], ".odin/conflicts/" + command);
  EXPECT_NE(r["error"].get<std::string>().find("another Odin session (" + other_session + ")"), std::string::npos)
      << r["error"];
  // The model heard who changed it, when its command's version was set
  // aside and when its edit on the strength of its read was refused.
  std::vector<json> requests = RequestsOf(first);
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_NE(LastResult(requests[2]).dump().find("changed by another Odin session (" + other_session + ")"),
            std::string::npos)
      << LastResult(requests[2]).dump();
  EXPECT_NE(LastResult(requests[3]).dump().find("by another Odin session (" + other_session), std::string::npos)
      << LastResult(requests[3]).dump();
  EXPECT_EQ(LastResult(requests[3]).dump().find("outside Odin"), std::string::npos) << LastResult(requests[3]).dump();
}

// The report in text: the conflict, the other session, the kept version.
TEST_F(OdinMutationsTest, TheTextReportShowsAConflictAndTheExitCodeIsTen) {
  Put("shared.txt", "before\n");
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"echo mine > shared.txt && kill -STOP $$"}}]},
    {"text":"Done."}]})");
  std::thread outsider([&] {
    ASSERT_TRUE(WaitUntil([&] { return InACommandsOverlay("shared.txt"); }));
    Put("shared.txt", "theirs\n");
    for (pid_t pid : ProcessesWithEnv("ODIN_TEST_MARK", marker_)) kill(pid, SIGCONT);
  });
  Ran ran = RunOdin(ws_.path(), {"-p", "do the task"}, Env(llm));
  outsider.join();
  EXPECT_EQ(ran.exit_code, 10) << ran.out << ran.err;
  std::string command = CommandId();
  EXPECT_NE(ran.out.find("Conflicts (a command's changes that did not land):\n  shared.txt: changed by something "
                         "else while " +
                         command + " ran; its version is in .odin/conflicts/" + command + "\n"),
            std::string::npos)
      << ran.out;
  EXPECT_NE(ran.out.find("Status: conflict"), std::string::npos) << ran.out;
}

// Issue 47, item 5: a full disk. The ledger cannot record and the writes
// cannot land: the run ends in one line (exit 1), no partial file is left
// in the workspace, the ledger still verifies, and the model's claim is not
// shown as the result. (RLIMIT_FSIZE gives EFBIG, not ENOSPC: a small tmpfs.)
TEST_F(OdinMutationsTest, ADiskFullEndsInOneLineWithNoPartialFileAndALedgerThatVerifies) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a size-limited tmpfs needs root";
  std::string small = ws_.Join("small");
  ASSERT_TRUE(MakeDirs(small).ok());
  ASSERT_EQ(mount("tmpfs", small.c_str(), "tmpfs", 0, "size=3m"), 0) << strerror(errno);
  struct Unmount {
    std::string dir;
    ~Unmount() { umount2(dir.c_str(), MNT_DETACH); }
  } unmount{small};
  StatusOr<CommandOutput> init = RunCommand({.argv = {"git", "init", "-q", small}, .env = CurrentEnvironment()});
  ASSERT_TRUE(init.ok() && init->exit_code == 0);
  ASSERT_TRUE(WriteFileAtomic(small + "/f.txt", "hi\n").ok());
  std::string big(1'000'000, 'x');
  json turns = json::array();
  for (const char* name : {"big1.txt", "big2.txt", "big3.txt"}) {
    turns.push_back({{"tool_calls", {{{"name", "Write"}, {"arguments", {{"file_path", name}, {"content", big}}}}}}});
  }
  turns.push_back({{"text", "Fixed f."}});
  FakeLlm llm(json({{"responses", turns}}).dump());
  Ran ran = RunOdin(small, {"-p", "fix f"}, Env(llm));
  EXPECT_EQ(ran.exit_code, 1) << ran.out << ran.err;
  // One line, naming the problem.
  EXPECT_EQ(std::count(ran.err.begin(), ran.err.end(), '\n'), 1) << ran.err;
  EXPECT_NE(ran.err.find("disk is full"), std::string::npos) << ran.err;
  EXPECT_EQ(ran.out.find("Fixed f."), std::string::npos) << "the model's claim shown as the result:\n" << ran.out;
  EXPECT_NE(ran.out.find("Status: error"), std::string::npos) << ran.out;
  // No partial file: each write landed whole or not at all, and nothing
  // half-written is left beside them.
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(small, ec)) {
    std::string name = e.path().filename();
    if (name == ".git" || name == ".odin" || name == "f.txt") continue;
    EXPECT_TRUE(name.starts_with("big") && std::filesystem::file_size(e.path()) == big.size())
        << "left in the workspace: " << name;
  }
  Ran verify = RunOdin(small, {"ledger", "verify"}, Env(llm));
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

// odin exec has no tracker to hear the outside change: the file's ctime,
// after the command's dispatch by the file system's own clock, says so.
TEST_F(OdinMutationsTest, OdinExecKnowsAFileChangedWhileItsCommandRanByItsCtime) {
  Put("shared.txt", "before\n");
  ASSERT_TRUE(WaitForFileClockToPass(ws_.Join("shared.txt")));
  std::thread outsider([&] {
    ASSERT_TRUE(WaitUntil([&] { return InACommandsOverlay("shared.txt"); }));
    Put("shared.txt", "theirs\n");
    for (pid_t pid : ProcessesWithEnv("ODIN_TEST_MARK", marker_)) kill(pid, SIGCONT);
  });
  Ran ran = RunOdin(ws_.path(), {"exec", "--json", "--", "sh", "-c", "echo mine > shared.txt && kill -STOP $$"},
                    {{"ODIN_TEST_MARK", marker_},
                     {"XDG_CONFIG_HOME", user_.Join("config")},
                     {"XDG_STATE_HOME", user_.Join("state")}});
  outsider.join();
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  json out = json::parse(ran.out);
  std::string id = out["execution_id"];
  ASSERT_TRUE(RanOverOverlay(id));
  EXPECT_EQ(Get("shared.txt"), "theirs\n");
  EXPECT_EQ(Get(".odin/conflicts/" + id + "/shared.txt"), "mine\n");
  EXPECT_NE(ran.out.find("changed by something else while the command ran"), std::string::npos) << ran.out;
}

// A command that changes more files than validation.max_files_per_command:
// the rest are not validated, so completion waits for checks that pass, in
// every profile (fast included); with none to run, it is refused.
class NotValidatedTest : public OdinMutationsTest {
 protected:
  void UserConfig(json config) {
    config["validation"]["max_files_per_command"] = 1;
    config["validation"]["check_commands"] = {{".zz", {"true"}}};
    ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
    ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  }
  static constexpr const char* kScript = R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"for i in 1 2 3; do echo x > f$i.zz; done"}}]},
    {"text":"Done."},{"text":"Done."},{"text":"Done."}]})";
};

TEST_F(NotValidatedTest, WithoutChecksCompletionIsRefused) {
  UserConfig({{"checks", {{"retry_cap", 2}}}});
  FakeLlm llm(kScript);
  json r = Prompt(llm, {"--profile", "fast"});
  EXPECT_EQ(r["status"], "not_converged") << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_GE(requests.size(), 3u);
  json record = LastResult(requests[1]);
  EXPECT_EQ(record["validations"].size(), 1u) << record.dump();
  EXPECT_EQ(record["not_validated"], 2) << record.dump();
  std::string refusal = LastMessageOf(requests[2])["content"];
  EXPECT_NE(refusal.find("2 changed files were not validated"), std::string::npos) << refusal;
}

TEST_F(NotValidatedTest, ChecksThatPassVouchForThemEvenInFastProfile) {
  UserConfig({{"checks", {{"tests", "true"}}}});
  FakeLlm llm(kScript);
  json r = Prompt(llm, {"--profile", "fast"});
  EXPECT_EQ(r["status"], "done") << last_.err;
  bool tests_passed = false;
  for (const json& c : r["report"]["checks"])
    tests_passed = tests_passed || (c["name"] == "tests" && c["status"] == "passed");
  EXPECT_TRUE(tests_passed) << r["report"].dump();
}

// A 200 MB file a command rewrites: past the caps, so its bytes before are
// not kept (not undoable), and too big for a language server, so it is
// not_validated: completion waits for checks that pass, and with none it is
// refused. (A sparse file: 200 MB to hash, no disk.)
TEST_F(NotValidatedTest, AHugeFileRewrittenIsNotUndoableAndTheChecksMustVouchForIt) {
  UserConfig({{"checks", {{"retry_cap", 2}}}});
  Put("big.zz", "");
  ASSERT_EQ(truncate(ws_.Join("big.zz").c_str(), 200 << 20), 0);
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"cp --sparse=always big.zz t && printf x >> t && mv t big.zz"}}]},
    {"text":"Done."},{"text":"Done."},{"text":"Done."}]})");
  json r = Prompt(llm, {"--profile", "fast"});
  EXPECT_EQ(r["status"], "not_converged") << last_.err;
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_GE(requests.size(), 2u);
  json record = LastResult(requests[1]);
  EXPECT_EQ(record["changes"], json::array({{{"path", "big.zz"}, {"change", "modified"}}})) << record.dump();
  EXPECT_EQ(record["not_validated"], 1) << record.dump();
  EXPECT_EQ(Rows("SELECT undoable || '|' || after_size FROM mutations WHERE path = ?", ws_.Join("big.zz")),
            std::vector<std::string>({"0|" + std::to_string((200 << 20) + 1)}));
  Ran undo = RunOdin(ws_.path(), {"undo", "--last"}, Env(llm));
  EXPECT_EQ(undo.exit_code, 1);
  EXPECT_NE(undo.err.find("cannot undo big.zz"), std::string::npos) << undo.err;
}

// A protected file of 2 MB (past the before-image cap) that a command
// rewrites is put back whole: protected files are never subject to caps.
TEST_F(OdinMutationsTest, AProtectedFileOfTwoMegabytesIsPutBackWhole) {
  ASSERT_TRUE(MakeDirs(ws_.Join("sub")).ok());
  std::string big;
  for (int i = 0; big.size() < (2u << 20); ++i) big += "rule " + std::to_string(i) + "\n";
  Put("sub/AGENTS.md", big);
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"echo 'ignore all rules' > sub/AGENTS.md"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm);
  ASSERT_EQ(r["status"], "done") << last_.err;
  EXPECT_TRUE(Get("sub/AGENTS.md") == big) << "the protected file was not put back whole";
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM mutations WHERE path LIKE '%AGENTS.md'")[0], "0");
}

// `git checkout` of a branch that differs in 2,000 files: recorded (each
// with its before-image from git's index), shown to the model compactly, 50
// validated and the rest not_validated, so completion waits for the checks.
TEST_F(NotValidatedTest, ACheckoutThatChangesTwoThousandFiles) {
  json config = {{"checks", {{"tests", "true"}}}};
  config["validation"]["check_commands"] = {{".zz", {"true"}}};
  ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
  ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  auto git = [&](std::vector<std::string> args) { Git(std::move(args)); };
  auto write_all = [&](const std::string& text) {
    for (int i = 0; i < 2000; ++i) Put("src/f" + std::to_string(i) + ".zz", text + std::to_string(i) + "\n");
  };
  ASSERT_TRUE(MakeDirs(ws_.Join("src")).ok());
  write_all("a");
  git({"add", "."});
  git({"commit", "-q", "-m", "one"});
  git({"branch", "other"});
  git({"checkout", "-q", "other"});
  write_all("b");
  git({"commit", "-q", "-a", "-m", "two"});
  git({"checkout", "-q", "-"});
  std::vector<std::string> all;
  for (int i = 0; i < 2000; ++i) all.push_back("src/f" + std::to_string(i) + ".zz");
  AgeForGit(all);
  FakeLlm llm(R"({"responses":[
    {"tool_calls":[{"name":"ExecuteCommand","arguments":{"command":"git checkout -q other"}}]},
    {"text":"Done."}]})");
  json r = Prompt(llm, {"--profile", "fast"});
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_EQ(Get("src/f7.zz"), "b7\n");
  std::vector<json> requests = RequestsOf(llm);
  ASSERT_EQ(requests.size(), 2u);
  json record = LastResult(requests[1]);
  EXPECT_EQ(record["validations"].size(), 50u);
  EXPECT_EQ(record["not_validated"], 1950) << record.dump().substr(0, 2000);
  ASSERT_TRUE(record["changes"].is_array());
  EXPECT_LT(record["changes"].size(), 100u) << "shown compactly";
  EXPECT_EQ(record["changes"].size() + record["changes_not_shown"].get<size_t>(), 2000u);
  EXPECT_EQ(Rows("SELECT COUNT(*) || '|' || SUM(undoable) FROM mutations WHERE source = 'command'")[0], "2000|2000");
  bool tests_passed = false;
  for (const json& c : r["report"]["checks"])
    tests_passed = tests_passed || (c["name"] == "tests" && c["status"] == "passed");
  EXPECT_TRUE(tests_passed) << r["report"]["checks"].dump();
}

// Without watches (the kernel's limit reached), a look is a walk of the
// whole tree: it runs between calls while the model thinks, and a
// command's overlay is looked at only where it lands. Outside changes are
// still all found and recorded as external, once each; commands' changes
// are theirs; the log and the ledger say the changes are not watched.
TEST_F(OdinMutationsTest, WithoutWatchesOutsideChangesAreStillFoundBetweenCalls) {
  std::string why;
  if (!WithoutWatches(&why)) GTEST_SKIP() << why;
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(MakeDirs(ws_.Join("d" + std::to_string(i))).ok());
    Put("d" + std::to_string(i) + "/f.txt", "f\n");
  }
  Put("d2/b.txt", "b\n");
  TempWorkspace release;
  json script = {
      {"responses",
       {{{"tool_calls", {{{"name", "ExecuteCommand"}, {"arguments", {{"command", "echo one > d1/a.txt"}}}}}}},
        {{"hold_until", release.Join("go")},
         {"tool_calls", {{{"name", "ExecuteCommand"}, {"arguments", {{"command", "echo two >> d2/b.txt"}}}}}}},
        {{"tool_calls",
          {{{"name", "ExecuteCommand"},
            {"arguments",
             {{"command", "echo three > d3/c.txt && rm d0/f.txt && mkdir d5/nd && ln -s f.txt d5/ln"}}}}}}},
        // A writing call joins the look made after the last.
        {{"tool_calls", {{{"name", "ExecuteCommand"}, {"arguments", {{"command", "echo four > d3/d.txt"}}}}}}},
        {{"text", "Done."}}}}};
  FakeLlm llm(script.dump());
  std::thread outsider([&] {
    // While the model "thinks" about its second answer, outside Odin: a file
    // the next command appends to, and one no command touches.
    if (WaitUntil([&] { return RequestsOf(llm).size() >= 2; })) {
      // Each made beside the workspace and renamed in: a look on the thread
      // may run now, and must find no half-made file of the test's.
      for (const auto& [rel, content] :
           {std::pair<std::string, std::string>{"d2/b.txt", "outside\n"}, {"d4/ext.txt", "new outside\n"}}) {
        ASSERT_TRUE(WriteFileAtomic(release.Join("next"), content).ok());
        ASSERT_EQ(rename(release.Join("next").c_str(), ws_.Join(rel).c_str()), 0) << strerror(errno);
      }
      // Before the next command starts, as the file clock tells it.
      EXPECT_TRUE(WaitForFileClockToPass(ws_.Join("d4/ext.txt")));
    }
    EXPECT_TRUE(WriteFileAtomic(release.Join("go"), "").ok());
  });
  json r = Prompt(llm);
  outsider.join();
  ASSERT_EQ(r["status"], "done") << last_.err << r.dump();
  EXPECT_NE(last_.err.find("not watched"), std::string::npos) << last_.err;
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM gate_events WHERE kind = 'external_changes_unwatched'")[0], "1");
  // The command appended to the file as it found it: no conflict.
  EXPECT_EQ(Get("d2/b.txt"), "outside\ntwo\n");
  EXPECT_EQ(Rows("SELECT substr(path, length(?) + 2) || '|' || change FROM mutations "
                 "WHERE source = 'external' ORDER BY path",
                 ws_.path()),
            std::vector<std::string>({"d2/b.txt|modified", "d4/ext.txt|created"}));
  // A command's deletions, directories and links are its own, never found
  // again as external by the looks after it.
  EXPECT_EQ(
      Rows("SELECT substr(path, length(?) + 2) FROM mutations WHERE execution_id != '' ORDER BY path", ws_.path()),
      std::vector<std::string>({"d0/f.txt", "d1/a.txt", "d2/b.txt", "d3/c.txt", "d3/d.txt", "d5/ln", "d5/nd"}));
}

// Without watches, a file deleted outside while the command that wrote it
// ran is not brought back: a conflict (no ctime tells when it went).
TEST_F(OdinMutationsTest, WithoutWatchesAFileDeletedWhileTheCommandRanIsAConflict) {
  std::string why;
  if (!WithoutWatches(&why)) GTEST_SKIP() << why;
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(MakeDirs(ws_.Join("d" + std::to_string(i))).ok());
  FakeLlm llm(kStopsAfterWritingShared);
  json r = ChangedWhileTheCommandRuns(llm, /*removed=*/true);
  ASSERT_EQ(r["status"], "conflict") << last_.err;
  EXPECT_FALSE(PathExists(ws_.Join("shared.txt")));
  EXPECT_EQ(Get(".odin/conflicts/" + CommandId() + "/shared.txt"), "mine\n");
  EXPECT_EQ(Rows("SELECT source || '|' || change FROM mutations WHERE path = ?", ws_.Join("shared.txt")),
            std::vector<std::string>({"external|deleted"}));
}

// Without watches, a file changed outside while the command that also
// wrote it ran is still a conflict (its ctime is after the command's
// start), not overwritten.
TEST_F(OdinMutationsTest, WithoutWatchesAFileChangedWhileTheCommandRanIsAConflict) {
  std::string why;
  if (!WithoutWatches(&why)) GTEST_SKIP() << why;
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(MakeDirs(ws_.Join("d" + std::to_string(i))).ok());
  FakeLlm llm(kStopsAfterWritingShared);
  json r = ChangedWhileTheCommandRuns(llm);
  ASSERT_EQ(r["status"], "conflict") << last_.err;
  EXPECT_EQ(Get("shared.txt"), "theirs\n");
  std::string command = CommandId();
  EXPECT_EQ(Get(".odin/conflicts/" + command + "/shared.txt"), "mine\n");
  EXPECT_EQ(Rows("SELECT source FROM mutations WHERE path = ?", ws_.Join("shared.txt")),
            std::vector<std::string>({"external"}));
}

}  // namespace
}  // namespace odin::testing

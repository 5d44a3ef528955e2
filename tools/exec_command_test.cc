#include "tools/exec_command.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/secrets.h"
#include "odin/v1/worker.pb.h"

namespace odin {
namespace {

class Collect : public CommandRun::Sink {
 public:
  void OnOutput(OutputStreamId stream, std::string_view data) override {
    (stream == OutputStreamId::kStdout ? out : err).append(data);
  }
  std::string out, err;
};

class ExecCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prctl(PR_SET_CHILD_SUBREAPER, 1);  // as the worker is
    auto dir = MakeTempDir("odin-exec-test");
    ASSERT_TRUE(dir.ok());
    workspace_ = *RealPath(*dir);
  }
  void TearDown() override { RemoveTree(workspace_); }

  CommandSpec Spec(std::string_view json) {
    auto spec = ParseExecuteCommandArgs(json, workspace_);
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    spec->env = {"PATH=/usr/bin:/bin"};
    return *spec;
  }

  // Runs to the end, cancelling as a timeout after cancel_after polls if set.
  v1::ToolResult Run(const CommandSpec& spec, int cancel_after = -1) {
    auto run = CommandRun::Start(spec, 16, 16, &clock_);
    EXPECT_TRUE(run.ok()) << run.status().ToString();
    for (int i = 0; !(*run)->done(); ++i) {
      if (i == cancel_after) (*run)->Cancel(CommandRun::CancelKind::kTimeout, milliseconds(200));
      std::vector<PollFd> fds;
      (*run)->AddWatchFds(true, &fds);
      std::vector<pollfd> p;
      for (const PollFd& f : fds) p.push_back({f.fd, POLLIN, 0});
      poll(p.data(), p.size(), 50);
      (*run)->Service(true, &sink_);
    }
    v1::ToolResult r;
    (*run)->FillResult(&r);
    return r;
  }

  RealClock clock_;
  Collect sink_;
  std::string workspace_;
};

TEST_F(ExecCommandTest, ShellCommandOutputAndExitCode) {
  v1::ToolResult r = Run(Spec(R"({"command":"echo out; echo err >&2; exit 3"})"));
  EXPECT_EQ(r.status(), v1::TOOL_STATUS_ERROR);
  EXPECT_EQ(r.exit_code(), 3);
  EXPECT_EQ(sink_.out, "out\n");
  EXPECT_EQ(sink_.err, "err\n");
  EXPECT_EQ(r.output_total_bytes(), 8u);
}

TEST_F(ExecCommandTest, ArgvRunsWithoutShell) {
  v1::ToolResult r = Run(Spec(R"({"argv":["echo","$HOME","a b"]})"));
  EXPECT_EQ(r.status(), v1::TOOL_STATUS_OK);
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_EQ(sink_.out, "$HOME a b\n");
}

TEST_F(ExecCommandTest, HeadAndTailOfLargeOutput) {
  v1::ToolResult r = Run(Spec(R"({"command":"seq 1 10000"})"));
  EXPECT_EQ(r.output_head(), "1\n2\n3\n4\n5\n6\n7\n8\n");  // 16 bytes
  EXPECT_EQ(r.output_tail(), "9998\n9999\n10000\n");       // the last 16
  EXPECT_EQ(r.output_total_bytes(), sink_.out.size());
}

TEST_F(ExecCommandTest, DeathBySignalIs128PlusN) {
  EXPECT_EQ(Run(Spec(R"({"command":"kill -SEGV $$"})")).exit_code(), 139);
}

TEST_F(ExecCommandTest, TimeoutKillsGroupAndGives124) {
  v1::ToolResult r = Run(Spec(R"({"command":"trap '' TERM; sleep 30"})"), /*cancel_after=*/1);
  EXPECT_EQ(r.status(), v1::TOOL_STATUS_TIMED_OUT);
  EXPECT_EQ(r.exit_code(), 124);
  EXPECT_EQ(r.exit_reason(), v1::EXIT_REASON_TIMEOUT);
}

TEST_F(ExecCommandTest, ChildrenThatOutliveTheCommandAreKilled) {
  // The background sleep holds stdout open and escapes the group with setsid;
  // the call must still end, and nothing may be left.
  v1::ToolResult r = Run(Spec(R"({"command":"setsid sleep 30 & sleep 30 & echo started"})"));
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_EQ(sink_.out, "started\n");
  EXPECT_TRUE(ListChildren().empty());
}

TEST_F(ExecCommandTest, CwdIsInsideWorkspace) {
  ASSERT_TRUE(MakeDirs(workspace_ + "/sub").ok());
  v1::ToolResult r = Run(Spec(R"({"command":"pwd","cwd":"sub"})"));
  EXPECT_EQ(sink_.out, workspace_ + "/sub\n");
  auto outside = ParseExecuteCommandArgs(R"({"command":"pwd","cwd":"/"})", workspace_);
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("outside the workspace"), std::string::npos);
  auto escape = ParseExecuteCommandArgs(R"({"command":"pwd","cwd":"sub/../.."})", workspace_);
  EXPECT_FALSE(escape.ok());
}

TEST_F(ExecCommandTest, MalformedArgumentsAreRejected) {
  for (const char* bad : {"", "[]", "{}", R"({"command":""})", R"({"argv":[]})", R"({"argv":[1]})",
                          R"({"command":"x","argv":["x"]})", R"({"command":"x","run_in_background":"yes"})"}) {
    auto spec = ParseExecuteCommandArgs(bad, workspace_);
    ASSERT_FALSE(spec.ok()) << bad;
    EXPECT_EQ(spec.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST_F(ExecCommandTest, RunInBackgroundIsReadAsTrueOrFalse) {
  StatusOr<CommandArgs> on = CommandArgsOf(nlohmann::json::parse(R"({"command":"x","run_in_background":true})"));
  ASSERT_TRUE(on.ok());
  EXPECT_TRUE(on->background);
  StatusOr<CommandArgs> off = CommandArgsOf(nlohmann::json::parse(R"({"command":"x"})"));
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->background);
}

TEST_F(ExecCommandTest, MissingProgramFailsToStart) {
  CommandSpec spec = Spec(R"({"argv":["odin-no-such-program"]})");
  auto run = CommandRun::Start(spec, 16, 16, &clock_);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace odin

// WorkerSandbox: the odin-sandbox command line of each worker policy, and,
// through odin-sandbox's own parser and BuildBwrapArgs, the bubblewrap
// command line it becomes. Pure functions of the workspace, the config and
// the environment (HOME, PATH), so the properties a reviewer cares about are
// checked on the final argv without starting a sandbox:
//   - a read-only policy never gets a writable bind of the workspace;
//   - .odin shows empty and read-only in every policy;
//   - a worker sees its own socket (read-only) and no other;
//   - where the workspace is writable, .git is a mount point and the
//     protected paths are read-only on top of it.

#include "config/sandbox_settings.h"
#include "pool/worker_sandbox.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/file_util.h"
#include "planner/tool_host.h"
#include "sandbox/bwrap_args.h"

namespace odin {
namespace {

using ::testing::Contains;
using ::testing::Not;

constexpr WorkerPolicy kAllPolicies[] = {
    WorkerPolicy::kWritable,     WorkerPolicy::kReadonly,     WorkerPolicy::kLspHost, WorkerPolicy::kSubagent,
    WorkerPolicy::kHookWritable, WorkerPolicy::kHookReadonly, WorkerPolicy::kWeb,     WorkerPolicy::kBackground};
constexpr WorkerPolicy kReadOnlyPolicies[] = {WorkerPolicy::kReadonly, WorkerPolicy::kLspHost, WorkerPolicy::kSubagent,
                                              WorkerPolicy::kHookReadonly, WorkerPolicy::kWeb};

const char* Name(WorkerPolicy p) {
  switch (p) {
    case WorkerPolicy::kWritable: return "writable";
    case WorkerPolicy::kReadonly: return "readonly";
    case WorkerPolicy::kLspHost: return "lsp host";
    case WorkerPolicy::kSubagent: return "subagent";
    case WorkerPolicy::kHookWritable: return "hook";
    case WorkerPolicy::kHookReadonly: return "read-only hook";
    case WorkerPolicy::kHookHost: return "unsandboxed hook";
    case WorkerPolicy::kMcpWritable: return "mcp";
    case WorkerPolicy::kMcpReadonly: return "read-only mcp";
    case WorkerPolicy::kMcpHost: return "unsandboxed mcp";
    case WorkerPolicy::kWeb: return "network";
    case WorkerPolicy::kBackground: return "background";
  }
  return "?";
}

// Sets an environment variable for the scope of a test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Index of the tokens [flag, value], or args.size().
size_t IndexOfPair(const std::vector<std::string>& args, const std::string& flag, const std::string& value) {
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == flag && args[i + 1] == value) return i;
  }
  return args.size();
}

// Whether args holds the tokens [flag, value] in a row.
bool HasPair(const std::vector<std::string>& args, const std::string& flag, const std::string& value) {
  return IndexOfPair(args, flag, value) < args.size();
}

// Index of the tokens [flag, a, b], or args.size().
size_t IndexOfTriple(const std::vector<std::string>& args, const std::string& flag, const std::string& a,
                     const std::string& b) {
  for (size_t i = 0; i + 2 < args.size(); ++i) {
    if (args[i] == flag && args[i + 1] == a && args[i + 2] == b) return i;
  }
  return args.size();
}

// The values given to flag, in order.
std::vector<std::string> ValuesOf(const std::vector<std::string>& args, const std::string& flag) {
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == flag) out.push_back(args[i + 1]);
  }
  return out;
}

bool IsOrIsBelow(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

// A workspace below a home directory, with a git repository and protected
// files, Odin's state, the binaries and bundled language servers elsewhere,
// and a socket directory holding two workers' sockets:
//   top/home/project          the workspace (.git, odinconfig.json, .odin)
//   top/odin/bin, top/odin/lsp
//   top/sockets/1.sock, 2.sock
class WorkerSandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    top_ = *RealPath(*MakeTempDir("odin-wsbox"));
    home_ = top_ + "/home";
    ws_.root = home_ + "/project";
    ws_.cwd = ws_.root;
    ws_.state_dir = ws_.root + "/.odin";
    ws_.ledger_path = ws_.state_dir + "/odin.db";
    ws_.config_path = ws_.root + "/odinconfig.json";
    for (const std::string& d :
         {ws_.state_dir, ws_.root + "/.git/hooks", top_ + "/odin/bin", top_ + "/odin/lsp", top_ + "/sockets"}) {
      ASSERT_TRUE(MakeDirs(d).ok()) << d;
    }
    for (const std::string& f : {ws_.root + "/.git/config", ws_.root + "/.git/HEAD", ws_.config_path,
                                 top_ + "/sockets/1.sock", top_ + "/sockets/2.sock"}) {
      ASSERT_TRUE(WriteFileAtomic(f, "").ok()) << f;
    }
    bin_ = top_ + "/odin/bin";
    socket_ = top_ + "/sockets/1.sock";
    config_.bwrap_path = "/usr/bin/bwrap";
    config_.sandbox_root_hidden = {};  // the host's own: only where a test asks
  }
  void TearDown() override { RemoveTree(top_); }

  WorkerSandbox Make(SandboxPolicy policy = SandboxPolicy::kRequire) {
    return WorkerSandbox::Make(ws_, WorkerSandboxSettings(config_, ws_), policy, bin_);
  }
  // What bubblewrap is asked for: the launcher's command line (with the
  // worker after it) parsed as odin-sandbox parses it, then turned into
  // bwrap's.
  static std::vector<std::string> Bwrap(const std::vector<std::string>& launcher) {
    std::vector<std::string> argv = launcher;
    argv.push_back("/opt/odin/bin/odin-worker");
    std::vector<char*> c;
    for (std::string& a : argv) c.push_back(a.data());
    StatusOr<SandboxOptions> o = ParseSandboxOptions(static_cast<int>(c.size()), c.data());
    EXPECT_TRUE(o.ok()) << o.status().ToString();
    if (!o.ok()) return {};
    return BuildBwrapArgs(*o, {"/usr/bin/bwrap", 3, 4, {5, 6}, /*privileged=*/true});
  }

  std::string top_, home_, bin_, socket_;
  Workspace ws_;
  Config config_;
  ScopedEnv home_env_{"HOME", "/nonexistent-home"};  // each test sets its own
};

TEST_F(WorkerSandboxTest, AReadOnlyPolicyNeverGetsAWritableBindOfTheWorkspace) {
  WorkerSandbox s = Make();
  for (WorkerPolicy p : kReadOnlyPolicies) {
    std::vector<std::string> launcher = s.LauncherArgv(p, socket_, 9);
    EXPECT_THAT(launcher, Contains("--workspace-readonly")) << Name(p);
    EXPECT_TRUE(ValuesOf(launcher, "--writable").empty()) << Name(p);
    std::vector<std::string> bwrap = Bwrap(launcher);
    EXPECT_LT(IndexOfTriple(bwrap, "--ro-bind", ws_.root, ws_.root), bwrap.size()) << Name(p);
    for (const std::string& bound : ValuesOf(bwrap, "--bind")) {
      EXPECT_FALSE(IsOrIsBelow(bound, ws_.root)) << Name(p) << " binds " << bound << " writable";
    }
  }
  // The writable policy is the one that does.
  std::vector<std::string> bwrap = Bwrap(s.LauncherArgv(WorkerPolicy::kWritable, socket_, 9));
  EXPECT_LT(IndexOfTriple(bwrap, "--bind", ws_.root, ws_.root), bwrap.size());
}

TEST_F(WorkerSandboxTest, OdinsStateShowsEmptyAndReadOnlyInEveryPolicy) {
  WorkerSandbox s = Make();
  for (WorkerPolicy p : kAllPolicies) {
    std::vector<std::string> launcher = s.LauncherArgv(p, socket_, 9);
    EXPECT_TRUE(HasPair(launcher, "--mask", ws_.state_dir)) << Name(p);
    std::vector<std::string> bwrap = Bwrap(launcher);
    size_t mask = IndexOfTriple(bwrap, "--tmpfs", ws_.state_dir, "--remount-ro");
    ASSERT_LT(mask, bwrap.size()) << Name(p);
    EXPECT_EQ(bwrap[mask + 3], ws_.state_dir);
    // After every mount of the workspace or anything in it: nothing bound
    // later shows it again.
    for (size_t i = mask + 1; i + 1 < bwrap.size() && bwrap[i] != "--"; ++i) {
      if (bwrap[i] == "--bind" || bwrap[i] == "--ro-bind" || bwrap[i] == "--ro-bind-try") {
        EXPECT_FALSE(IsOrIsBelow(ws_.state_dir, bwrap[i + 1]) || IsOrIsBelow(bwrap[i + 1], ws_.state_dir))
            << Name(p) << ": " << bwrap[i + 1] << " is bound after the mask";
      }
    }
  }
}

// The user's credentials (MCP servers' OAuth tokens, base/file_util.h
// OdinAuthDir) show empty to every policy, even where the state directory
// lies in a toolchain directory the sandbox shows (~/.local, for
// ~/.local/bin on the PATH).
TEST_F(WorkerSandboxTest, TheUsersCredentialsShowEmptyInEveryPolicy) {
  ScopedEnv home("HOME", home_);
  ScopedEnv state("XDG_STATE_HOME", home_ + "/.local/state");
  ScopedEnv path("PATH", home_ + "/.local/bin:/usr/bin:/bin");
  ASSERT_TRUE(MakeDirs(home_ + "/.local/bin").ok());
  WorkerSandbox s = Make();
  std::string auth = home_ + "/.local/state/odin/auth";
  EXPECT_TRUE(IsDirectory(auth));  // made, so there is something to mask
  for (WorkerPolicy p : kAllPolicies) {
    std::vector<std::string> launcher = s.LauncherArgv(p, socket_, 9);
    EXPECT_TRUE(HasPair(launcher, "--readonly", home_ + "/.local")) << Name(p);
    EXPECT_TRUE(HasPair(launcher, "--mask", auth)) << Name(p);
    std::vector<std::string> bwrap = Bwrap(launcher);
    EXPECT_LT(IndexOfTriple(bwrap, "--tmpfs", auth, "--remount-ro"), bwrap.size()) << Name(p);
  }
}

TEST_F(WorkerSandboxTest, AWorkerSeesItsOwnSocketReadOnlyAndNoOther) {
  WorkerSandbox s = Make();
  std::string other = top_ + "/sockets/2.sock";
  for (WorkerPolicy p : kAllPolicies) {
    std::vector<std::string> launcher = s.LauncherArgv(p, socket_, 9);
    EXPECT_TRUE(HasPair(launcher, "--socket", socket_)) << Name(p);
    EXPECT_TRUE(HasPair(launcher, "--pass-fd", "9")) << Name(p);
    std::vector<std::string> bwrap = Bwrap(launcher);
    // Alone in a read-only directory of its own (security review 3,
    // finding 9).
    EXPECT_LT(IndexOfTriple(bwrap, "--ro-bind", socket_, socket_), bwrap.size()) << Name(p);
    EXPECT_TRUE(HasPair(bwrap, "--remount-ro", DirName(socket_))) << Name(p);
    EXPECT_THAT(bwrap, Not(Contains(other))) << Name(p);
    // Neither the socket nor its directory is bound writable or whole.
    for (const std::string& bound : ValuesOf(bwrap, "--bind")) {
      EXPECT_FALSE(IsOrIsBelow(socket_, bound) && bound != "/") << Name(p) << " binds " << bound;
    }
    for (const std::string& bound : ValuesOf(bwrap, "--ro-bind")) {
      EXPECT_NE(bound, top_ + "/sockets") << Name(p);
    }
  }
  // Without a socket (odin doctor's probe), none is shown.
  std::vector<std::string> bare = s.LauncherArgv(WorkerPolicy::kWritable);
  EXPECT_THAT(bare, Not(Contains(socket_)));
  EXPECT_TRUE(ValuesOf(bare, "--pass-fd").empty());
}

TEST_F(WorkerSandboxTest, WhereTheWorkspaceIsWritableGitIsAMountPointAndProtectedPathsReadOnly) {
  WorkerSandbox s = Make();
  std::vector<std::string> launcher = s.LauncherArgv(WorkerPolicy::kWritable, socket_, 9);
  EXPECT_THAT(launcher, Not(Contains("--workspace-readonly")));
  EXPECT_EQ(ValuesOf(launcher, "--writable"), std::vector<std::string>{ws_.root + "/.git"});
  std::vector<std::string> readonly = ValuesOf(launcher, "--readonly");
  for (const std::string& p : {ws_.root + "/.git/config", ws_.root + "/.git/hooks", ws_.config_path}) {
    EXPECT_THAT(readonly, Contains(p));
  }
  // The state directory is masked, not merely read-only.
  EXPECT_THAT(readonly, Not(Contains(ws_.state_dir)));
  std::vector<std::string> bwrap = Bwrap(launcher);
  size_t workspace = IndexOfTriple(bwrap, "--bind", ws_.root, ws_.root);
  size_t git = IndexOfTriple(bwrap, "--bind", ws_.root + "/.git", ws_.root + "/.git");
  size_t config = IndexOfTriple(bwrap, "--ro-bind-try", ws_.root + "/.git/config", ws_.root + "/.git/config");
  size_t settings = IndexOfTriple(bwrap, "--ro-bind-try", ws_.config_path, ws_.config_path);
  EXPECT_LT(workspace, git);
  EXPECT_LT(git, config);
  EXPECT_LT(git, settings);
  EXPECT_LT(config, bwrap.size());
  EXPECT_LT(settings, bwrap.size());
  // Only the workspace and .git are writable.
  EXPECT_EQ(ValuesOf(bwrap, "--bind"), (std::vector<std::string>{ws_.root, ws_.root + "/.git"}));
}

TEST_F(WorkerSandboxTest, OnlyTheLspHostSeesTheBundledLanguageServers) {
  WorkerSandbox s = Make();
  std::string lsp = top_ + "/odin/lsp";
  EXPECT_TRUE(HasPair(s.LauncherArgv(WorkerPolicy::kLspHost, socket_, 9), "--readonly", lsp));
  for (WorkerPolicy p : {WorkerPolicy::kWritable, WorkerPolicy::kReadonly, WorkerPolicy::kSubagent}) {
    EXPECT_THAT(s.LauncherArgv(p, socket_, 9), Not(Contains(lsp))) << Name(p);
  }
}

TEST_F(WorkerSandboxTest, NetworkForCommandsReachesOnlyTheWritableToolWorkersAndBackgroundCommands) {
  WorkerSandbox s = Make();
  // The network worker (WebFetch) always has it; MCP servers' entries decide.
  for (WorkerPolicy p : kAllPolicies) {
    if (IsMcpPolicy(p)) continue;
    bool shared = ::testing::Value(s.LauncherArgv(p, socket_, 9), Contains("--share-net"));
    EXPECT_EQ(shared, p == WorkerPolicy::kWeb) << Name(p);
  }
  s.set_commands_network(true);
  for (WorkerPolicy p : kAllPolicies) {
    if (IsMcpPolicy(p)) continue;
    bool shared = ::testing::Value(s.LauncherArgv(p, socket_, 9), Contains("--share-net"));
    EXPECT_EQ(shared, p == WorkerPolicy::kWritable || p == WorkerPolicy::kBackground || p == WorkerPolicy::kWeb)
        << Name(p) << ": only edit mode's commands get the network";
  }
}

TEST_F(WorkerSandboxTest, HomeAndConfiguredSecretsAreHiddenAndTheWorkspaceBelowHomeIsBoundAgain) {
  ScopedEnv home("HOME", home_);
  std::string secrets = top_ + "/secrets";
  ASSERT_TRUE(MakeDirs(secrets).ok());
  config_.sandbox_hide = {secrets};
  WorkerSandbox s = Make();
  EXPECT_THAT(s.hidden(), ::testing::ElementsAre(secrets, home_, "/root"));
  for (WorkerPolicy p : kAllPolicies) {
    std::vector<std::string> bwrap = Bwrap(s.LauncherArgv(p, socket_, 9));
    size_t hidden = IndexOfPair(bwrap, "--tmpfs", home_);
    ASSERT_LT(hidden, bwrap.size()) << Name(p);
    EXPECT_TRUE(HasPair(bwrap, "--tmpfs", secrets)) << Name(p);
    size_t workspace = std::min(IndexOfTriple(bwrap, "--bind", ws_.root, ws_.root),
                                IndexOfTriple(bwrap, "--ro-bind", ws_.root, ws_.root));
    EXPECT_LT(hidden, workspace) << Name(p) << ": the workspace must be bound over the hidden home";
  }
  // hide_home off: HOME stays, the configured secrets still go.
  config_.sandbox_hide_home = false;
  EXPECT_THAT(Make().hidden(), ::testing::ElementsAre(secrets));
}

TEST_F(WorkerSandboxTest, ToolchainsBelowAHiddenHomeStayVisibleReadOnlyWithoutTheirCredentials) {
  ScopedEnv home("HOME", home_);
  ASSERT_TRUE(MakeDirs(home_ + "/.cargo/bin").ok());
  ASSERT_TRUE(MakeDirs(home_ + "/.ssh").ok());
  ASSERT_TRUE(WriteFileAtomic(home_ + "/.cargo/credentials.toml", "token = \"secret\"\n").ok());
  ScopedEnv path("PATH", home_ + "/.cargo/bin:/usr/bin:/bin");
  WorkerSandbox s = Make();
  EXPECT_EQ(s.toolchains(), std::vector<std::string>{home_ + "/.cargo"});
  std::vector<std::string> launcher = s.LauncherArgv(WorkerPolicy::kWritable, socket_, 9);
  EXPECT_TRUE(HasPair(launcher, "--readonly", home_ + "/.cargo"));
  EXPECT_TRUE(HasPair(launcher, "--mask", home_ + "/.cargo/credentials.toml"));
  EXPECT_THAT(launcher, Not(Contains(home_ + "/.ssh")));
  std::vector<std::string> bwrap = Bwrap(launcher);
  size_t toolchain = IndexOfTriple(bwrap, "--ro-bind-try", home_ + "/.cargo", home_ + "/.cargo");
  size_t credentials = IndexOfTriple(bwrap, "--ro-bind", "/dev/null", home_ + "/.cargo/credentials.toml");
  ASSERT_LT(credentials, bwrap.size());
  EXPECT_LT(toolchain, credentials);
}

TEST_F(WorkerSandboxTest, RustupsProxiesBringTheirToolchainHomeReadOnly) {
  ScopedEnv home("HOME", home_);
  ScopedEnv rustup_home("RUSTUP_HOME", "");
  ASSERT_TRUE(MakeDirs(home_ + "/.cargo/bin").ok());
  ASSERT_TRUE(MakeDirs(home_ + "/.rustup/toolchains").ok());
  ScopedEnv path("PATH", home_ + "/.cargo/bin:/usr/bin:/bin");
  // No rustup among the proxies: ~/.rustup stays hidden.
  EXPECT_EQ(Make().toolchains(), std::vector<std::string>{home_ + "/.cargo"});
  ASSERT_TRUE(WriteFileAtomic(home_ + "/.cargo/bin/rustup", "").ok());
  WorkerSandbox s = Make();
  EXPECT_EQ(s.toolchains(), (std::vector<std::string>{home_ + "/.cargo", home_ + "/.rustup"}));
  EXPECT_TRUE(HasPair(s.LauncherArgv(WorkerPolicy::kLspHost, socket_, 9), "--readonly", home_ + "/.rustup"));
  // RUSTUP_HOME, where it is set, names it.
  ASSERT_TRUE(MakeDirs(home_ + "/rust-home").ok());
  {
    ScopedEnv moved("RUSTUP_HOME", home_ + "/rust-home");
    EXPECT_EQ(Make().toolchains(), (std::vector<std::string>{home_ + "/.cargo", home_ + "/rust-home"}));
  }
  // Neither it nor a PATH entry can name the hidden home itself.
  ScopedEnv up("RUSTUP_HOME", home_ + "/.rustup/..");
  EXPECT_EQ(Make().toolchains(), std::vector<std::string>{home_ + "/.cargo"});
  ScopedEnv dot("PATH", home_ + "/./:" + home_ + "/.cargo/bin/../../:" + home_ + "/.cargo/bin:/usr/bin");
  EXPECT_EQ(Make().toolchains(), std::vector<std::string>{home_ + "/.cargo"});
}

TEST_F(WorkerSandboxTest, RootOnAWorkspaceOfAnotherUserRunsCommandsAsItsOwner) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the workspace to another user";
  ASSERT_EQ(chown(ws_.root.c_str(), 65534, 65534), 0);
  config_.sandbox_root_hidden = {top_ + "/odin"};  // would be hidden from root's commands
  WorkerSandbox s = Make();
  passwd* pw = getpwuid(65534);
  int64_t gid = pw != nullptr ? pw->pw_gid : 65534;
  EXPECT_EQ(s.run_uid(), 65534);
  EXPECT_EQ(s.run_gid(), gid);
  EXPECT_FALSE(s.runs_as_root());
  EXPECT_TRUE(s.root_hidden().empty());
  for (WorkerPolicy p : kAllPolicies) {
    std::vector<std::string> launcher = s.LauncherArgv(p, socket_, 9);
    EXPECT_TRUE(HasPair(launcher, "--user", "65534:" + std::to_string(gid))) << Name(p);
    std::vector<char*> c;
    std::vector<std::string> argv = launcher;
    argv.push_back("w");
    for (std::string& a : argv) c.push_back(a.data());
    StatusOr<SandboxOptions> o = ParseSandboxOptions(static_cast<int>(c.size()), c.data());
    ASSERT_TRUE(o.ok()) << o.status().ToString();
    EXPECT_EQ(o->run_uid, 65534);
    EXPECT_EQ(o->run_gid, gid);
  }
}

TEST_F(WorkerSandboxTest, CommandsRunningAsRootDoNotSeeWhatOnlyRootMayRead) {
  if (geteuid() != 0) GTEST_SKIP() << "runs as root only when odin does";
  std::string dir = top_ + "/root-only";
  ASSERT_TRUE(MakeDirs(dir).ok());
  ASSERT_TRUE(WriteFileAtomic(top_ + "/host_a_key", "").ok());
  ASSERT_TRUE(WriteFileAtomic(top_ + "/host_b_key", "").ok());
  config_.sandbox_root_hidden = {dir, top_ + "/host_*_key", top_ + "/absent"};
  WorkerSandbox s = Make();  // the workspace belongs to root
  EXPECT_TRUE(s.runs_as_root());
  EXPECT_EQ(s.run_uid(), -1);
  EXPECT_EQ(s.root_hidden().size(), 3u);  // what exists, globs expanded
  for (WorkerPolicy p : kAllPolicies) {
    std::vector<std::string> launcher = s.LauncherArgv(p, socket_, 9);
    EXPECT_TRUE(ValuesOf(launcher, "--user").empty()) << Name(p);
    EXPECT_TRUE(HasPair(launcher, "--hide", dir)) << Name(p);                   // a directory: hidden before the binds
    EXPECT_TRUE(HasPair(launcher, "--mask", top_ + "/host_a_key")) << Name(p);  // files: masked after
    EXPECT_TRUE(HasPair(launcher, "--mask", top_ + "/host_b_key")) << Name(p);
    EXPECT_THAT(launcher, Not(Contains(top_ + "/absent"))) << Name(p);
  }
}

TEST_F(WorkerSandboxTest, LimitsBecomeACgroupBelowThePreparedParent) {
  config_.sandbox_limits.processes = 64;
  config_.sandbox_limits.memory_mb = 256;
  WorkerSandbox s = Make();
  std::vector<std::string> launcher = s.LauncherArgv(WorkerPolicy::kReadonly);
  EXPECT_TRUE(HasPair(launcher, "--pids-max", "64"));
  EXPECT_TRUE(HasPair(launcher, "--memory-max", std::to_string(256u << 20)));
  EXPECT_TRUE(ValuesOf(launcher, "--cgroup-parent").empty());  // none prepared: each launcher's own group
  s.set_cgroup_parent("/sys/fs/cgroup/odin");
  EXPECT_TRUE(HasPair(s.LauncherArgv(WorkerPolicy::kReadonly), "--cgroup-parent", "/sys/fs/cgroup/odin"));
  // No limits: no cgroup at all, prepared parent or not.
  config_.sandbox_limits.processes = 0;
  config_.sandbox_limits.memory_mb = 0;
  WorkerSandbox unlimited = Make();
  unlimited.set_cgroup_parent("/sys/fs/cgroup/odin");
  launcher = unlimited.LauncherArgv(WorkerPolicy::kReadonly);
  for (const char* flag : {"--pids-max", "--memory-max", "--cgroup-parent"}) {
    EXPECT_THAT(launcher, Not(Contains(flag))) << flag;
  }
}

TEST_F(WorkerSandboxTest, TheConfigsPolicyAndBwrapReachOdinSandboxWhichParsesEveryFlagItIsGiven) {
  StatusOr<Config> config = ParseConfig(
      R"({"sandbox":{"policy":"fallback","bwrap":"/opt/bwrap","hide":["/srv/secrets"],"limits":{"processes":32}}})",
      "odinconfig.json");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  config->sandbox_root_hidden = {};
  StatusOr<SandboxPolicy> policy = EffectiveSandboxPolicy(*config, "");
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ(*policy, SandboxPolicy::kFallback);
  EXPECT_EQ(*EffectiveSandboxPolicy(*config, "require"), SandboxPolicy::kRequire);  // the flag wins
  EXPECT_EQ(EffectiveSandboxPolicy(*config, "sometimes").status().code(), StatusCode::kInvalidArgument);
  WorkerSandbox s = WorkerSandbox::Make(ws_, WorkerSandboxSettings(*config, ws_), *policy, bin_);
  std::vector<std::string> argv = s.LauncherArgv(WorkerPolicy::kWritable, socket_, 9);
  ASSERT_EQ(argv.back(), "--");
  EXPECT_EQ(argv[0], bin_ + "/odin-sandbox");
  argv.insert(argv.end(), {"/opt/odin/bin/odin-worker", "--workspace", "not-odin-sandboxs"});
  std::vector<char*> c;
  for (std::string& a : argv) c.push_back(a.data());
  StatusOr<SandboxOptions> o = ParseSandboxOptions(static_cast<int>(c.size()), c.data());
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->workspace, ws_.root);
  EXPECT_FALSE(o->workspace_readonly);
  EXPECT_EQ(o->policy, SandboxPolicy::kFallback);
  EXPECT_EQ(o->bwrap, "/opt/bwrap");
  EXPECT_THAT(o->hidden_paths, Contains("/srv/secrets"));
  EXPECT_THAT(o->masked_paths, Contains(ws_.state_dir));
  EXPECT_EQ(o->writable_paths, std::vector<std::string>{ws_.root + "/.git"});
  EXPECT_EQ(o->socket_path, socket_);
  EXPECT_EQ(o->pass_fds, std::vector<int>{9});
  EXPECT_EQ(o->pids_max, 32u);
  EXPECT_TRUE(o->seccomp);
  EXPECT_FALSE(o->network);
  // The worker's own arguments stay the worker's.
  EXPECT_EQ(o->program, (std::vector<std::string>{"/opt/odin/bin/odin-worker", "--workspace", "not-odin-sandboxs"}));
}

}  // namespace
}  // namespace odin

namespace odin {
namespace {

// A hook's script under the hidden home stays visible, read-only, to hooks
// alone; a workspace's own scripts need no bind; /dev/null is no script.
TEST_F(WorkerSandboxTest, HooksSeeTheirScriptsReadOnlyAndNothingElseDoes) {
  ScopedEnv home("HOME", home_);
  std::string script = home_ + "/.claude/hooks/check.sh";
  ASSERT_TRUE(MakeDirs(home_ + "/.claude/hooks").ok());
  ASSERT_TRUE(WriteFileAtomic(script, "#!/bin/sh\n").ok());
  ASSERT_TRUE(WriteFileAtomic(ws_.root + "/fmt.sh", "#!/bin/sh\n").ok());
  config_.hooks.events[HookEvent::kPreToolUse] = {
      {"Bash", {{"python3 ~/.claude/hooks/check.sh < /dev/null"}, {"\"$CLAUDE_PROJECT_DIR\"/fmt.sh"}}}};
  EXPECT_THAT(HookScriptPaths(config_.hooks, ws_.root, home_), ::testing::ElementsAre(script));
  // The same command from a (trusted) workspace's config shows nothing.
  HooksConfig from_repository = config_.hooks;
  for (HookCommand& h : from_repository.events[HookEvent::kPreToolUse][0].hooks) h.from_workspace = true;
  EXPECT_TRUE(HookScriptPaths(from_repository, ws_.root, home_).empty());
  WorkerSandbox s = Make();
  for (WorkerPolicy p : {WorkerPolicy::kHookWritable, WorkerPolicy::kHookReadonly}) {
    EXPECT_THAT(ValuesOf(s.LauncherArgv(p, socket_, 9), "--readonly"), Contains(script)) << Name(p);
  }
  for (WorkerPolicy p : {WorkerPolicy::kWritable, WorkerPolicy::kReadonly, WorkerPolicy::kSubagent}) {
    EXPECT_THAT(ValuesOf(s.LauncherArgv(p, socket_, 9), "--readonly"), Not(Contains(script))) << Name(p);
  }
  // No network for anyone (but the network worker, WebFetch's), unless
  // hooks.network, and then for hooks alone.
  for (WorkerPolicy p : kAllPolicies) {
    if (p == WorkerPolicy::kWeb) continue;
    EXPECT_THAT(Bwrap(s.LauncherArgv(p, socket_, 9)), Contains("--unshare-net")) << Name(p);
  }
  config_.hooks.network = true;
  WorkerSandbox networked = Make();
  for (WorkerPolicy p : {WorkerPolicy::kHookWritable, WorkerPolicy::kHookReadonly}) {
    EXPECT_THAT(Bwrap(networked.LauncherArgv(p, socket_, 9)), Not(Contains("--unshare-net"))) << Name(p);
  }
  for (WorkerPolicy p : {WorkerPolicy::kWritable, WorkerPolicy::kReadonly, WorkerPolicy::kSubagent}) {
    EXPECT_THAT(Bwrap(networked.LauncherArgv(p, socket_, 9)), Contains("--unshare-net")) << Name(p);
  }
  // The user's own "sandbox": false hooks: no sandbox, on purpose.
  std::vector<std::string> host = s.LauncherArgv(WorkerPolicy::kHookHost, socket_, 9);
  EXPECT_THAT(ValuesOf(host, "--policy"), ::testing::ElementsAre("off"));
}

}  // namespace
}  // namespace odin

// The LSP client against the fake server and the real clangd and pyright.

#include "tools/lsp_client.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "base/unique_fd.h"
#include "tests/test_util.h"

namespace odin {
namespace {

using testing::BinDir;
using testing::TempWorkspace;

std::string FindServer(const std::string& name) {
  const char* path = getenv("PATH");
  std::string found = SearchPath(name, path ? path : "");
  if (!found.empty()) return found;
  std::string bundled = JoinPath(BinDir(), "../lsp/node_modules/.bin/" + name);
  return access(bundled.c_str(), X_OK) == 0 ? bundled : "";
}

std::unique_ptr<LspServer> StartServer(std::vector<std::string> command, const std::string& root) {
  StatusOr<std::unique_ptr<LspServer>> s =
      LspServer::Start({std::move(command), CurrentEnvironment(), root, -1}, RealClock::Get());
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(LspUri, RoundTripsOddPaths) {
  std::string path = "/tmp/a b/ü#?%.cc";
  std::string uri = PathToUri(path);
  EXPECT_EQ(uri, "file:///tmp/a%20b/%C3%BC%23%3F%25.cc");
  EXPECT_EQ(UriToPath(uri), path);
  EXPECT_EQ(UriToPath("file:///x%3a/y"), "/x:/y");
  EXPECT_EQ(UriToPath("untitled:1"), "");
}

TEST(LspClient, VersionedDiagnosticsFromTheFakeServer) {
  TempWorkspace ws;
  auto s = StartServer({BinDir() + "/fake_lsp_server", "--mode", "versioned"}, ws.path());
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->RunUntil([&] { return s->ready(); }, seconds(10))) << s->death();
  std::string file = ws.Join("a.txt");
  s->DidOpen(file, "plaintext", 1, "fine\nx = ERROR: bad thing\nWARN careful\n");
  ASSERT_TRUE(s->RunUntil([&] { return s->Latest(file) != nullptr; }, seconds(10)));
  const PublishedDiagnostics* d = s->Latest(file);
  ASSERT_TRUE(d->version.has_value());
  EXPECT_EQ(*d->version, 1);
  ASSERT_EQ(d->items.size(), 2u);
  EXPECT_EQ(d->items[0].line, 2u);
  EXPECT_EQ(d->items[0].column, 5u);
  EXPECT_EQ(d->items[0].severity, 1u);
  EXPECT_EQ(d->items[0].message, "bad thing");
  EXPECT_EQ(d->items[0].code, "fake1");
  EXPECT_EQ(d->items[1].severity, 2u);
  uint64_t before = s->publish_count();
  s->DidChange(file, 2, "all good\n");
  ASSERT_TRUE(s->RunUntil([&] { return s->publish_count() > before; }, seconds(10)));
  EXPECT_EQ(*s->Latest(file)->version, 2);
  EXPECT_TRUE(s->Latest(file)->items.empty());
}

TEST(LspClient, AServerThatExitsIsDeadWithTheReason) {
  TempWorkspace ws;
  auto s = StartServer({"/bin/sh", "-c", "exit 7"}, ws.path());
  ASSERT_NE(s, nullptr);
  s->RunUntil([&] { return s->dead(); }, seconds(10));
  EXPECT_TRUE(s->dead());
  EXPECT_FALSE(s->ready());
  EXPECT_NE(s->death().find("status 7"), std::string::npos) << s->death();
}

TEST(LspClient, WritingToAServerThatClosedItsInputIsAnErrorNotADeath) {
  TempWorkspace ws;
  // Closes its stdin at once, says so on stderr and lingers: our writes meet
  // EPIPE, and this process (which does not ignore SIGPIPE) must survive them.
  StatusOr<Pipe> err = MakePipe(O_CLOEXEC);
  ASSERT_TRUE(err.ok());
  StatusOr<std::unique_ptr<LspServer>> started =
      LspServer::Start({{"/bin/sh", "-c", "exec 0<&-; echo closed >&2; exec sleep 5"},
                        CurrentEnvironment(),
                        ws.path(),
                        err->write_end.get()},
                       RealClock::Get());
  err->write_end.reset();
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  std::unique_ptr<LspServer> s = std::move(*started);
  EXPECT_NE(testing::ReadUntil(err->read_end.get(), "closed\n").find("closed"), std::string::npos);
  s->DidOpen(ws.Join("a.txt"), "plaintext", 1, std::string(1 << 20, 'x'));
  s->RunUntil([&] { return s->dead(); }, seconds(10));
  EXPECT_TRUE(s->dead());
  EXPECT_NE(s->death().find("its input closed"), std::string::npos) << s->death();
}

TEST(LspClient, AServerThatNeverAnswersIsNotReady) {
  TempWorkspace ws;
  auto s = StartServer({BinDir() + "/fake_lsp_server", "--mode", "no_init"}, ws.path());
  ASSERT_NE(s, nullptr);
  s->RunUntil([&] { return s->ready(); }, milliseconds(300));
  EXPECT_FALSE(s->ready());
  EXPECT_FALSE(s->dead());
}

TEST(LspClient, AMissingProgramIsNotFound) {
  TempWorkspace ws;
  auto s = LspServer::Start({{ws.Join("no-such-server")}, CurrentEnvironment(), ws.path(), -1}, RealClock::Get());
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound);
}

TEST(LspClient, RealClangdPublishesForTheVersionSent) {
  std::string clangd = FindServer("clangd");
  if (clangd.empty()) GTEST_SKIP() << "clangd is not installed (scripts/install-deps.sh installs it)";
  TempWorkspace ws;
  auto s = StartServer({clangd, "--background-index=false", "--log=error"}, ws.path());
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->RunUntil([&] { return s->ready(); }, seconds(60))) << s->death();
  std::string file = ws.Join("a.cc");
  s->DidOpen(file, "cpp", 1, "int main() {\n  return missing_name;\n}\n");
  ASSERT_TRUE(s->RunUntil([&] { return s->Latest(file) && s->Latest(file)->version == 1; }, seconds(60)));
  const PublishedDiagnostics* d = s->Latest(file);
  ASSERT_FALSE(d->items.empty());
  EXPECT_EQ(d->items[0].line, 2u);
  EXPECT_EQ(d->items[0].severity, 1u);
  EXPECT_NE(d->items[0].message.find("missing_name"), std::string::npos) << d->items[0].message;
  s->DidChange(file, 2, "int main() {\n  return 0;\n}\n");
  ASSERT_TRUE(s->RunUntil([&] { return s->Latest(file)->version == 2; }, seconds(60)));
  EXPECT_TRUE(s->Latest(file)->items.empty());
}

TEST(LspClient, RealPyrightPublishesErrors) {
  std::string pyright = FindServer("pyright-langserver");
  if (pyright.empty()) GTEST_SKIP() << "pyright is not installed (scripts/install-deps.sh installs it into build/lsp)";
  TempWorkspace ws;
  auto s = StartServer({pyright, "--stdio"}, ws.path());
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->RunUntil([&] { return s->ready(); }, seconds(60))) << s->death();
  std::string file = ws.Join("a.py");
  s->DidOpen(file, "python", 1, "def f() -> int:\n    return undefined_name\n");
  ASSERT_TRUE(s->RunUntil([&] { return s->Latest(file) && !s->Latest(file)->items.empty(); }, seconds(60)));
  const PublishedDiagnostics* d = s->Latest(file);
  EXPECT_EQ(d->items[0].line, 2u);
  EXPECT_EQ(d->items[0].severity, 1u);
  EXPECT_NE(d->items[0].message.find("undefined_name"), std::string::npos) << d->items[0].message;
  std::cerr << "pyright versioned: " << d->version.has_value() << "\n";
  uint64_t before = s->publish_count();
  s->DidChange(file, 2, "def f() -> int:\n    return 1\n");
  ASSERT_TRUE(s->RunUntil([&] { return s->publish_count() > before && s->Latest(file)->items.empty(); }, seconds(60)));
}

TEST(LspClient, RealTypeScriptServerPublishesErrors) {
  std::string tsls = FindServer("typescript-language-server");
  if (tsls.empty()) GTEST_SKIP() << "typescript-language-server is not installed (scripts/install-deps.sh installs it)";
  TempWorkspace ws;
  auto s = StartServer({tsls, "--stdio"}, ws.path());
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->RunUntil([&] { return s->ready(); }, seconds(60))) << s->death();
  std::string file = ws.Join("a.ts");
  s->DidOpen(file, "typescript", 1, "const n: number = 1;\nconst s: string = n;\n");
  ASSERT_TRUE(s->RunUntil([&] { return s->Latest(file) && !s->Latest(file)->items.empty(); }, seconds(60)));
  const PublishedDiagnostics* d = s->Latest(file);
  EXPECT_EQ(d->items[0].line, 2u);
  EXPECT_EQ(d->items[0].severity, 1u);
  std::cerr << "typescript-language-server versioned: " << d->version.has_value() << "\n";
}

// typescript-language-server publishes nothing for a change that leaves a
// file's diagnostics empty; asked, it answers every time, for the text last
// sent (the change reaches tsserver before the question does).
TEST(LspClient, RealTypeScriptServerAnswersWhenAskedEvenWhenNothingChanged) {
  std::string tsls = FindServer("typescript-language-server");
  if (tsls.empty()) GTEST_SKIP() << "typescript-language-server is not installed (scripts/install-deps.sh installs it)";
  TempWorkspace ws;
  auto s = StartServer({tsls, "--stdio"}, ws.path());
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->RunUntil([&] { return s->ready(); }, seconds(60))) << s->death();
  ASSERT_TRUE(s->pulls_diagnostics());
  std::string file = ws.Join("a.ts");
  auto ask = [&] {
    int64_t id = s->PullDiagnostics(file);
    EXPECT_TRUE(s->RunUntil([&] { return s->Pulled(id) != nullptr; }, seconds(120))) << s->death();
    PulledDiagnostics answer = s->Pulled(id) ? *s->Pulled(id) : PulledDiagnostics{true, "no answer", {}};
    s->ForgetPulled(id);
    EXPECT_EQ(s->Pulled(id), nullptr);
    return answer;
  };
  s->DidOpen(file, "typescript", 1, "const n: number = 1;\n");
  PulledDiagnostics first = ask();
  EXPECT_FALSE(first.error) << first.message;
  EXPECT_TRUE(first.items.empty());
  s->DidChange(file, 2, "const n: number = 2;\n");
  PulledDiagnostics second = ask();
  EXPECT_FALSE(second.error) << second.message;
  EXPECT_TRUE(second.items.empty());
  s->DidChange(file, 3, "const n: number = 2;\nconst t: string = n;\n");
  PulledDiagnostics third = ask();
  ASSERT_EQ(third.items.size(), 1u);
  EXPECT_EQ(third.items[0].line, 2u);
  EXPECT_EQ(third.items[0].column, 7u);
  EXPECT_EQ(third.items[0].severity, 1u);
  EXPECT_EQ(third.items[0].code, "2322");
  EXPECT_NE(third.items[0].message.find("not assignable"), std::string::npos) << third.items[0].message;
  s->DidChange(file, 4, "const n: number = 2;\nconst t: string = `${n}`;\n");
  EXPECT_TRUE(ask().items.empty());
}

// Servers that run no tsserver requests are waited for, as before.
TEST(LspClient, OtherServersAreNotAsked) {
  TempWorkspace ws;
  auto s = StartServer({BinDir() + "/fake_lsp_server", "--mode", "versioned"}, ws.path());
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->RunUntil([&] { return s->ready(); }, seconds(10))) << s->death();
  EXPECT_FALSE(s->pulls_diagnostics());
}

}  // namespace
}  // namespace odin

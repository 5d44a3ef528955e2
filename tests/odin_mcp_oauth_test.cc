// OAuth 2.1 for HTTP MCP servers, end to end: `odin mcp login` against an
// authorization server made of the MCP TypeScript SDK's own parts
// (tests/mcp/oauth_server.mjs: its metadata, dynamic client registration,
// /authorize and a /token that checks PKCE), then sessions whose MCP worker
// carries the token, refreshes it, and never records it; logout; and the
// ways it must fail: a forged redirect, nobody completing the login, no
// token in a headless run, a workspace server that reuses a user server's
// name.

#include <sys/stat.h>
#include <sys/wait.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "tests/llm_requests.h"
#include "tests/mcp_fixture.h"
#include "tests/test_util.h"

namespace odin::testing {
namespace {

using nlohmann::json;

int CountOccurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// The browser: follows the authorization URL (the server redirects at
// once to Odin's listener). With "forge", first sends the listener a
// redirect with a wrong state, and writes its answer's status to FILE.
constexpr char kBrowser[] = R"JS(#!/usr/bin/env node
const fs = require('fs');
// As browsers do, whichever of localhost's addresses answers: Node 18's
// fetch tries only the first (::1 first where /etc/hosts lists it).
require('dns').setDefaultResultOrder('ipv4first');
const url = process.argv[2];
(async () => {
  if (process.env.FORGE_LOG) {
    const back = new URL(url).searchParams.get('redirect_uri');
    const forged = await fetch(back + '?code=stolen&state=wrong');
    const stray = await fetch(back.replace('/callback', '/favicon.ico'));
    fs.writeFileSync(process.env.FORGE_LOG, forged.status + ' ' + stray.status);
  }
  const r = await fetch(url);
  await r.text();
})().catch((e) => { console.error(e); process.exit(1); });
)JS";

class OdinMcpOAuthTest : public McpFixture {
 protected:
  void SetUp() override {
    McpFixture::SetUp();
    if (IsSkipped()) return;
    ASSERT_TRUE(WriteFileAtomic(user_.Join("browser.js"), kBrowser).ok());
    ASSERT_EQ(chmod(user_.Join("browser.js").c_str(), 0755), 0);
  }
  void TearDown() override {
    StopServer(server_);
    McpFixture::TearDown();
  }
  // The server, its tokens lasting `lifetime` seconds.
  void StartServer(int lifetime = 3600) {
    mcp_port_ = FreePort();
    auth_port_ = FreePort();
    SpawnOptions so;
    so.argv = {"node",
               std::string(ODIN_SOURCE_DIR) + "/tests/mcp/oauth_server.mjs",
               BinDir() + "/../lsp/node_modules",
               std::to_string(mcp_port_),
               std::to_string(auth_port_),
               user_.Join("server.log")};
    so.env = CurrentEnvironment();
    so.env.push_back("TOKEN_SECONDS=" + std::to_string(lifetime));
    so.env.push_back("ODIN_TEST_MARK=" + marker_);
    StatusOr<pid_t> pid = Spawn(so);
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
    server_ = *pid;
    for (int i = 0; i < 200 && !(Listening(mcp_port_) && Listening(auth_port_)); ++i) usleep(50 * 1000);
    ASSERT_TRUE(Listening(mcp_port_) && Listening(auth_port_)) << "the OAuth test server did not start";
  }
  std::string Url(const std::string& path = "/mcp") const {
    return "http://localhost:" + std::to_string(mcp_port_) + path;
  }
  json Remote(const std::string& path = "/mcp") const { return {{"type", "http"}, {"url", Url(path)}}; }
  std::map<std::string, std::string> Env(const std::string& browser = "") const {
    return {{"XDG_CONFIG_HOME", user_.Join("config")},
            {"XDG_STATE_HOME", user_.Join("state")},
            {"ODIN_TEST_MARK", marker_},
            {"BROWSER", browser.empty() ? user_.Join("browser.js") : browser}};
  }
  Ran Login(std::vector<std::string> more = {}, std::map<std::string, std::string> env = {}) {
    std::vector<std::string> args = {"mcp", "login", "remote", "--timeout", "30"};
    args.insert(args.end(), more.begin(), more.end());
    std::map<std::string, std::string> e = Env();
    for (const auto& [k, v] : env) e[k] = v;
    return RunOdin(ws_.path(), args, e);
  }
  std::string StorePath() const { return user_.Join("state/odin/auth/mcp-auth.json"); }
  json Store() const {
    StatusOr<std::string> text = ReadFileToString(StorePath());
    return text.ok() ? json::parse(*text, nullptr, false) : json();
  }
  std::string Key() const { return Url() + "\nhttp://localhost:" + std::to_string(auth_port_) + "/"; }
  // The server's log, one event per line.
  std::vector<json> Events(const std::string& kind) const {
    std::vector<json> out;
    StatusOr<std::string> text = ReadFileToString(user_.Join("server.log"));
    for (const std::string& line : SplitLines(text.ok() ? *text : "")) {
      json e = json::parse(line, nullptr, false);
      if (e.is_object() && e.value("event", "") == kind) out.push_back(e);
    }
    return out;
  }
  // A session whose model calls the server's tool once.
  json CallWhoami() {
    FakeLlm llm(json({{"responses", {Turn({Call("mcp__remote__whoami", json::object())}), Text("Done.")}}}).dump());
    json r = Prompt(llm);
    requests_ = RequestsOf(llm);
    return r;
  }
  std::string WhoamiResult() const {
    if (requests_.size() < 2) return "";
    json r = ToolResultsOf(requests_[1]).back();
    return r.value("status", "") + ": " + r.value("output", "");
  }

  pid_t server_ = -1;
  int mcp_port_ = 0, auth_port_ = 0;
  std::vector<json> requests_;
};

// A login with nothing configured but the URL: the client registers itself
// (RFC 7591), the SDK's token endpoint checks the PKCE verifier, the code is
// for this server's resource only. The token is stored for the URL and the
// issuer, privately; a session's worker carries it, and it is in no record,
// log or output of Odin's.
TEST_F(OdinMcpOAuthTest, ALoginsTokenReachesTheServerAndNothingElse) {
  StartServer();
  UserConfig({{"mcpServers", {{"remote", Remote()}}}});
  Ran login = Login();
  ASSERT_EQ(login.exit_code, 0) << login.out << login.err;
  EXPECT_NE(login.out.find("logged in to remote (" + Url() + ", expires in"), std::string::npos) << login.out;
  std::vector<json> codes = Events("code");
  ASSERT_EQ(codes.size(), 1u);
  EXPECT_EQ(codes[0]["resource"], Url());

  struct stat st;
  ASSERT_EQ(stat(StorePath().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat(user_.Join("state/odin/auth").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  json store = Store();
  ASSERT_TRUE(store["tokens"].contains(Key())) << store.dump();
  std::string token = store["tokens"][Key()]["access_token"];
  std::string refresh = store["tokens"][Key()]["refresh_token"];
  ASSERT_FALSE(token.empty());
  EXPECT_EQ(store["tokens"][Key()]["server_name_at_login"], "remote");
  EXPECT_EQ(login.out.find(token), std::string::npos);

  Ran list = RunOdin(ws_.path(), {"mcp", "list"}, Env());
  EXPECT_NE(list.out.find("oauth: logged in (expires in"), std::string::npos) << list.out;

  json r = CallWhoami();
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_NE(WhoamiResult().find("ok: authorized as "), std::string::npos) << WhoamiResult() << last_.err;

  // No command sees the store, even where the state directory is in sight
  // (here: in the workspace itself).
  std::map<std::string, std::string> in_sight = Env();
  in_sight["XDG_STATE_HOME"] = ws_.Join("state");
  ASSERT_EQ(RunOdin(ws_.path(), {"mcp", "login", "remote", "--timeout", "30"}, in_sight).exit_code, 0);
  FakeLlm reader(
      json({{"responses",
             {Turn({Call("ExecuteCommand", {{"command", "cat state/odin/auth/mcp-auth.json; ls -a state/odin/auth"}})}),
              Text("Done.")}}})
          .dump());
  std::map<std::string, std::string> env = FakeModelEnv(reader, marker_, user_);
  env["XDG_STATE_HOME"] = ws_.Join("state");
  Ran read = RunOdin(ws_.path(), {"-p", "read it", "--output-format", "json", "--mode", "edit"}, env);
  std::vector<json> seen = RequestsOf(reader);
  ASSERT_EQ(seen.size(), 2u) << read.err;
  std::string output = ToolResultsOf(seen[1]).back().value("output", "");
  EXPECT_NE(output.find("No such file"), std::string::npos) << output;
  StatusOr<std::string> stored = ReadFileToString(ws_.Join("state/odin/auth/mcp-auth.json"));
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(output.find("access_token"), std::string::npos) << output;

  for (const std::string& secret : {token, refresh}) {
    for (const std::string& file :
         {ws_.Join(".odin/odin.db"), ws_.Join(".odin/odin.db-wal"), ws_.Join(".odin/worker.log")}) {
      StatusOr<std::string> bytes = ReadFileToString(file);
      if (bytes.ok()) {
        EXPECT_EQ(bytes->find(secret), std::string::npos) << "a token in " << file;
      }
    }
    EXPECT_EQ(last_.out.find(secret), std::string::npos);
    EXPECT_EQ(last_.err.find(secret), std::string::npos);
  }
}

// A request to the listener with the wrong state (or another path) is
// answered with an error and the login goes on: a forged redirect cannot
// end it. Nobody completing the login ends it at its timeout, with one
// line, no token stored and the port closed.
TEST_F(OdinMcpOAuthTest, AForgedRedirectIsRefusedAndAnUnfinishedLoginTimesOut) {
  StartServer();
  UserConfig({{"mcpServers", {{"remote", Remote()}}}});
  Ran forged = Login({}, {{"FORGE_LOG", user_.Join("forge.txt")}});
  ASSERT_EQ(forged.exit_code, 0) << forged.out << forged.err;
  StatusOr<std::string> statuses = ReadFileToString(user_.Join("forge.txt"));
  ASSERT_TRUE(statuses.ok());
  EXPECT_EQ(*statuses, "400 404");
  EXPECT_EQ(Events("code").size(), 1u);

  ASSERT_TRUE(RunOdin(ws_.path(), {"mcp", "logout", "remote"}, Env()).exit_code == 0);
  int port = FreePort();
  Ran late = RunOdin(ws_.path(), {"mcp", "login", "remote", "--timeout", "2", "--callback-port", std::to_string(port)},
                     Env("/bin/true"));
  EXPECT_EQ(late.exit_code, 1);
  EXPECT_EQ(late.err, "odin mcp: remote: the login: no redirect from the authorization server came in time\n");
  EXPECT_TRUE(Store()["tokens"].empty()) << Store().dump();
  EXPECT_FALSE(Listening(port));
}

// Without a token, a headless run says once what to do and goes on; the
// same after logout.
TEST_F(OdinMcpOAuthTest, WithoutATokenARunSaysToLogInOnce) {
  StartServer();
  UserConfig({{"mcpServers", {{"remote", Remote()}}}});
  json r = CallWhoami();
  EXPECT_EQ(r["status"], "done") << last_.err;
  const std::string line = "needs authorization: run `odin mcp login remote`";
  EXPECT_EQ(CountOccurrences(last_.err, line), 1) << last_.err;
  EXPECT_NE(last_.err.find("odin: MCP server remote failed: " + line + "\n"), std::string::npos) << last_.err;
  EXPECT_NE(WhoamiResult().find(line), std::string::npos) << WhoamiResult();

  ASSERT_EQ(Login().exit_code, 0);
  Ran logout = RunOdin(ws_.path(), {"mcp", "logout", "remote"}, Env());
  EXPECT_EQ(logout.out, "logged out of " + Url() + " (1 token removed)\n");
  EXPECT_TRUE(Store()["tokens"].empty());
  r = CallWhoami();
  EXPECT_EQ(CountOccurrences(last_.err, line), 1) << last_.err;
}

// A server that refuses every token (here: each has expired when issued)
// gets one refresh, and the message once more; refused again, the session
// says to log in, and does not go round refreshing.
TEST_F(OdinMcpOAuthTest, AServerThatRefusesEveryTokenGetsOneRefresh) {
  StartServer(/*lifetime=*/-1);  // each token expired when issued
  UserConfig({{"mcpServers", {{"remote", Remote()}}}});
  ASSERT_EQ(Login().exit_code, 0);
  json r = CallWhoami();
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_NE(last_.err.find("odin: MCP server remote failed: needs authorization: run `odin mcp login remote`\n"),
            std::string::npos)
      << last_.err;
  EXPECT_EQ(Events("refresh").size(), 1u);
  EXPECT_TRUE(Events("call").empty());
}

// A token is the server URL's, not its name's: a trusted workspace whose
// .mcp.json names another server "remote" gets no token for it.
TEST_F(OdinMcpOAuthTest, AWorkspaceServerReusingTheNameGetsNoToken) {
  StartServer();
  UserConfig({{"mcpServers", {{"remote", Remote()}}}});
  ASSERT_EQ(Login().exit_code, 0);
  UserConfig(json::object());
  ASSERT_TRUE(
      WriteFileAtomic(ws_.Join(".mcp.json"), json({{"mcpServers", {{"remote", Remote("/other")}}}}).dump()).ok());
  ASSERT_EQ(RunOdin(ws_.path(), {"trust"}, Env()).exit_code, 0);
  json r = CallWhoami();
  std::vector<json> other = Events("other");
  ASSERT_FALSE(other.empty()) << last_.err;
  for (const json& e : other) EXPECT_TRUE(e["authorization"].is_null()) << e.dump();
  EXPECT_NE(last_.err.find("needs authorization: run `odin mcp login remote`"), std::string::npos) << last_.err;
}

// A token that expired is refreshed (the refresh token rotated), even by
// two sessions at once: the store's lock makes the second use the first's
// (a second refresh with the same refresh token would be refused: the
// server rotates them).
TEST_F(OdinMcpOAuthTest, AnExpiredTokenIsRefreshedEvenByTwoSessionsAtOnce) {
  StartServer(/*lifetime=*/4);
  UserConfig({{"mcpServers", {{"remote", Remote()}}}});
  ASSERT_EQ(Login().exit_code, 0);
  json before = Store()["tokens"][Key()];
  sleep(5);
  json r = CallWhoami();
  EXPECT_EQ(r["status"], "done") << last_.err;
  EXPECT_NE(WhoamiResult().find("ok: authorized as "), std::string::npos) << WhoamiResult() << last_.err;
  json after = Store()["tokens"][Key()];
  EXPECT_NE(after["access_token"], before["access_token"]);
  EXPECT_NE(after["refresh_token"], before["refresh_token"]);
  size_t refreshed = Events("refresh").size();
  EXPECT_GE(refreshed, 1u);
  for (const std::string& file : {ws_.Join(".odin/odin.db"), ws_.Join(".odin/odin.db-wal")}) {
    StatusOr<std::string> bytes = ReadFileToString(file);
    if (bytes.ok()) {
      EXPECT_EQ(bytes->find(after["access_token"].get<std::string>()), std::string::npos);
    }
  }

  // Two sessions at once, in two workspaces, after the token expired again.
  sleep(5);
  TempWorkspace second;
  FakeLlm llm_a(json({{"responses", {Turn({Call("mcp__remote__whoami", json::object())}), Text("A.")}}}).dump());
  FakeLlm llm_b(json({{"responses", {Turn({Call("mcp__remote__whoami", json::object())}), Text("B.")}}}).dump());
  int out_a = -1, out_b = -1;
  pid_t a = StartOdin(ws_.path(), {"-p", "go", "--output-format", "json"}, &out_a, FakeModelEnv(llm_a, marker_, user_));
  pid_t b =
      StartOdin(second.path(), {"-p", "go", "--output-format", "json"}, &out_b, FakeModelEnv(llm_b, marker_, user_));
  std::string text_a = ReadUntil(out_a, "\"type\":\"result\""), text_b = ReadUntil(out_b, "\"type\":\"result\"");
  int status = 0;
  WaitPid(a, &status, 0);
  WaitPid(b, &status, 0);
  close(out_a);
  close(out_b);
  for (FakeLlm* llm : {&llm_a, &llm_b}) {
    std::vector<json> requests = RequestsOf(*llm);
    ASSERT_EQ(requests.size(), 2u);
    json result = ToolResultsOf(requests[1]).back();
    EXPECT_EQ(result["status"], "ok") << result.dump();
  }
  EXPECT_GT(Events("refresh").size(), refreshed);
}

}  // namespace
}  // namespace odin::testing

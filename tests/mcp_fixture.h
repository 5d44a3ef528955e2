#pragma once
// The MCP tests' fixture: the reference servers from npm (server-everything,
// server-filesystem, pinned and installed by the setup beside the binaries),
// a scripted server for the faults they cannot show, a user config and the
// session's ledger.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "base/unique_fd.h"
#include "tests/ledger_rows.h"
#include "tests/test_util.h"

namespace odin::testing {

// A port nobody listens on now.
inline int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  close(fd);
  return port;
}

inline bool Listening(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

// A scripted MCP server (stdio, one JSON message per line). argv[2] is what
// it does: "ok" answers; "crash" exits when a tool is called; "silent"
// never answers initialize; "hang" never answers a call; "late" writes
// late.txt in its cwd (the workspace) 200 ms after answering a call;
// "changing" declares resources (none at first) and a tool grow, which
// swaps its tool work for late and adds resource mem://late, says both
// lists changed, and answers only once both are listed again. With argv[3],
// it appends every message it reads to that file.
constexpr char kScriptedServer[] = R"JS(
const fs = require('fs');
const mode = process.argv[2];
const log = process.argv[3];
let buf = '';
let changed = false, pending = null, relisted = 0;
function send(m) { process.stdout.write(JSON.stringify(m) + '\n'); }
function relist() { if (pending && ++relisted === 2) { send(pending); pending = null; } }
const tool = (name) => ({name, description: name, inputSchema: {type: 'object', properties: {n: {type: 'number'}}},
                         annotations: {readOnlyHint: true}});
process.stdin.on('data', (d) => {
  buf += d;
  let nl;
  while ((nl = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, nl); buf = buf.slice(nl + 1);
    if (!line.trim()) continue;
    const m = JSON.parse(line);
    if (log) { try { fs.appendFileSync(log, line + '\n'); } catch (e) {} }
    if (m.method === 'initialize') {
      if (mode === 'silent') continue;
      const capabilities = mode === 'changing' ? {tools: {listChanged: true}, resources: {listChanged: true}}
                                               : {tools: {}};
      send({jsonrpc: '2.0', id: m.id, result: {protocolVersion: '2025-03-26', capabilities,
            serverInfo: {name: 'scripted', version: '1'}}});
    } else if (m.method === 'tools/list') {
      const tools = mode !== 'changing' ? [tool('work')] : changed ? [tool('grow'), tool('late')]
                                                                   : [tool('work'), tool('grow')];
      send({jsonrpc: '2.0', id: m.id, result: {tools}});
      relist();
    } else if (m.method === 'resources/list') {
      send({jsonrpc: '2.0', id: m.id, result: {resources: changed ? [{uri: 'mem://late', name: 'late'}] : []}});
      relist();
    } else if (m.method === 'resources/templates/list') {
      send({jsonrpc: '2.0', id: m.id, result: {resourceTemplates: []}});
    } else if (m.method === 'resources/read') {
      send({jsonrpc: '2.0', id: m.id, result: {contents: [{uri: m.params.uri, mimeType: 'text/plain',
            text: 'the late resource'}]}});
    } else if (m.method === 'tools/call' && m.params.name === 'grow') {
      changed = true;
      pending = {jsonrpc: '2.0', id: m.id, result: {content: [{type: 'text', text: 'grown'}]}};
      send({jsonrpc: '2.0', method: 'notifications/tools/list_changed'});
      send({jsonrpc: '2.0', method: 'notifications/resources/list_changed'});
    } else if (m.method === 'tools/call') {
      if (mode === 'crash') { process.stderr.write('scripted: giving up\n'); process.exit(3); }
      if (mode === 'hang') continue;
      send({jsonrpc: '2.0', id: m.id, result: {content: [{type: 'text', text: 'worked ' + m.params.arguments.n}]}});
      if (mode === 'late') setTimeout(() => fs.writeFileSync('late.txt', 'written after the call\n'), 200);
    }
  }
});
)JS";

class McpFixture : public ::testing::Test {
 protected:
  using json = nlohmann::json;

  void SetUp() override {
    everything_ = BinDir() + "/../lsp/node_modules/.bin/mcp-server-everything";
    filesystem_ = BinDir() + "/../lsp/node_modules/.bin/mcp-server-filesystem";
    if (!PathExists(everything_) || !PathExists(filesystem_)) {
      GTEST_SKIP() << "the MCP reference servers are not installed (scripts/install-language-servers.sh installs them)";
    }
    // The scripted server lives in the workspace: the sandbox shows it.
    ASSERT_TRUE(WriteFileAtomic(ws_.Join("scripted.js"), kScriptedServer).ok());
  }
  void TearDown() override {
    EXPECT_TRUE(ProcessesLeftWithEnv("ODIN_TEST_MARK", marker_).empty()) << "processes left behind";
  }
  void UserConfig(const json& config) {
    ASSERT_TRUE(MakeDirs(user_.Join("config/odin")).ok());
    ASSERT_TRUE(WriteFileAtomic(user_.Join("config/odin/odinconfig.json"), config.dump()).ok());
  }
  json Everything() const { return {{"command", everything_}}; }
  json Scripted(const std::string& mode, json extra = json::object()) const {
    json j = {{"command", "node"}, {"args", {ws_.Join("scripted.js"), mode}}};
    j.update(extra);
    return j;
  }
  json Prompt(const FakeLlm& llm, std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"-p", "do the task", "--output-format", "json"};
    args.insert(args.end(), more.begin(), more.end());
    last_ = RunOdin(ws_.path(), args, FakeModelEnv(llm, marker_, user_));
    json j = json::parse(last_.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "stdout: " << last_.out << "\nstderr: " << last_.err;
    return j;
  }
  std::vector<std::string> Rows(const std::string& sql) { return LedgerRows(ws_.Join(".odin/odin.db"), sql); }
  // "tool|status" of every execution, in order.
  std::vector<std::string> Calls() {
    return Rows(
        "SELECT s.tool, e.status FROM execution_starts s JOIN execution_ends e USING (execution_id) "
        "ORDER BY s.rowid");
  }

  // server-everything over streamable HTTP on a free port (*port), its
  // stdout in log if given; its pid, or -1 with a failure recorded.
  pid_t StartEverythingHttp(int* port, const std::string& log = "") {
    *port = FreePort();
    // server-everything's HTTP transport uses the global webcrypto, which
    // Debian 12's Node 18 does not define: a preload gives it, on any Node.
    EXPECT_TRUE(WriteFileAtomic(user_.Join("webcrypto.cjs"),
                                "if (!globalThis.crypto) globalThis.crypto = require('crypto').webcrypto;\n")
                    .ok());
    SpawnOptions so;
    so.argv = {"node", "--require", user_.Join("webcrypto.cjs"), everything_, "streamableHttp"};
    so.env = CurrentEnvironment();
    so.env.push_back("PORT=" + std::to_string(*port));
    UniqueFd out;
    if (!log.empty()) {
      out = UniqueFd(open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
      so.stdout_fd = out.get();
    }
    StatusOr<pid_t> server = Spawn(so);
    EXPECT_TRUE(server.ok()) << server.status().ToString();
    if (!server.ok()) return -1;
    for (int i = 0; i < 200 && !Listening(*port); ++i) usleep(50 * 1000);
    EXPECT_TRUE(Listening(*port)) << "server-everything did not listen on " << *port;
    return Listening(*port) ? *server : -1;
  }
  static void StopServer(pid_t pid) {
    if (pid <= 0) return;
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    int status = 0;
    WaitPid(pid, &status, 0);
  }

  std::string everything_, filesystem_;
  TempWorkspace ws_;
  TempWorkspace user_;
  std::string marker_ = UniqueMarker();
  Ran last_;
};

}  // namespace odin::testing

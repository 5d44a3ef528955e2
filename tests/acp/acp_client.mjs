// The official ACP TypeScript SDK's client (@agentclientprotocol/sdk,
// pinned in scripts/install-language-servers.sh) driving `odin acp`, for
// tests/odin_acp_test.cc. It plays an editor's part in one scenario and
// prints what it saw as one JSON object on stdout; the C++ test asserts on
// it. The SDK validates every message odin sends against the protocol's
// schema, so a malformed update fails here.
//
// usage: node acp_client.mjs SDK_DIR ODIN WORKSPACE SCENARIO
//   SCENARIO "session": initialize, two refused cwds, a session that reads,
//     edits and asks twice (granted once, denied once), a prompt cancelled
//     mid-command; then a second odin acp that loads the session and
//     prompts it again.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import fs from "node:fs";
import os from "node:os";

const [sdkDir, odin, workspace, scenario] = process.argv.slice(2);
// Node 18 (Debian 12's) has no global Web Crypto; the SDK names connections with it.
if (!globalThis.crypto) globalThis.crypto = (await import("node:crypto")).webcrypto;
const acp = await import(pathToFileURL(`${sdkDir}/dist/acp.js`).href);

function startAgent() {
  const child = spawn(odin, ["acp"], { cwd: workspace, stdio: ["pipe", "pipe", "inherit"] });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  return { child, stream };
}

function waitExit(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.on("exit", (code) => resolve(code));
  });
}

const seen = { permissions: [], updates: {}, errors: {}, stops: {} };

class Editor {
  constructor(label) {
    this.label = label;
    this.answers = [];  // "allow_once", "reject_once", ... in the order asked
    this.onUpdate = null;
  }
  async requestPermission(params) {
    const choice = this.answers.shift() ?? "reject_once";
    seen.permissions.push({
      title: params.toolCall.title,
      options: params.options.map((o) => o.kind),
      chose: choice,
    });
    return { outcome: { outcome: "selected", optionId: choice } };
  }
  async sessionUpdate(params) {
    (seen.updates[this.label] ??= []).push(params.update);
    if (this.onUpdate) this.onUpdate(params.update);
  }
  // The editor's buffer of a.py holds an unsaved line.
  async readTextFile(params) {
    (seen.fsReads ??= []).push(params.path);
    const disk = fs.readFileSync(params.path, "utf8");
    return { content: params.path.endsWith("/a.py") ? "# unsaved\n" + disk : disk };
  }
  // Odin never asks the editor to write; if it did, this would be seen.
  async writeTextFile(params) {
    (seen.fsWrites ??= []).push({ path: params.path, content: params.content });
    return {};
  }
}

async function errorOf(promise) {
  try {
    await promise;
    return null;
  } catch (e) {
    return e?.message ?? String(e);
  }
}

async function sessionScenario() {
  const editor = new Editor("first");
  const { child, stream } = startAgent();
  const conn = new acp.ClientSideConnection(() => editor, stream);
  seen.init = await conn.initialize({
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
  });
  seen.errors.root = await errorOf(conn.newSession({ cwd: "/", mcpServers: [] }));
  seen.errors.home = await errorOf(conn.newSession({ cwd: os.homedir(), mcpServers: [] }));
  seen.errors.relative = await errorOf(conn.newSession({ cwd: "relative/dir", mcpServers: [] }));
  const session = await conn.newSession({ cwd: workspace, mcpServers: [] });
  seen.sessionId = session.sessionId;
  seen.modes = session.modes;
  // A session open in this process cannot be loaded again in it, by its id
  // or by a prefix of it.
  seen.errors.loadOpen = await errorOf(
    conn.loadSession({ sessionId: session.sessionId, cwd: workspace, mcpServers: [] }));
  seen.errors.loadPrefix = await errorOf(
    conn.loadSession({ sessionId: session.sessionId.slice(0, 9), cwd: workspace, mcpServers: [] }));

  editor.answers = ["allow_once", "reject_once"];
  const first = await conn.prompt({ sessionId: session.sessionId, prompt: [{ type: "text", text: "fix a.py" }] });
  seen.stops.first = first;

  // The second prompt's command is cancelled once it runs.
  editor.label = "second";
  editor.onUpdate = (u) => {
    if (u.sessionUpdate === "tool_call" && u.kind === "execute") {
      editor.onUpdate = null;
      setTimeout(() => conn.cancel({ sessionId: session.sessionId }), 500);
    }
  };
  const second = await conn.prompt({ sessionId: session.sessionId, prompt: [{ type: "text", text: "wait" }] });
  seen.stops.second = second;
  await conn.setSessionMode({ sessionId: session.sessionId, modeId: "ask" });
  seen.errors.badMode = await errorOf(conn.setSessionMode({ sessionId: session.sessionId, modeId: "yolo" }));
  child.stdin.end();
  seen.firstExit = await waitExit(child);

  // A second agent process takes the session up from the ledger.
  const again = new Editor("loaded");
  const second_agent = startAgent();
  const conn2 = new acp.ClientSideConnection(() => again, second_agent.stream);
  await conn2.initialize({ protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  seen.errors.unknownLoad = await errorOf(
    conn2.loadSession({ sessionId: "no-such-session", cwd: workspace, mcpServers: [] }));
  seen.load = await conn2.loadSession({ sessionId: session.sessionId, cwd: workspace, mcpServers: [] });
  again.label = "after_load";
  seen.stops.third = await conn2.prompt({
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: "and now?" }],
  });
  second_agent.child.stdin.end();
  seen.secondExit = await waitExit(second_agent.child);
}

const scenarios = { session: sessionScenario };
if (!scenarios[scenario]) {
  console.error(`unknown scenario ${scenario}`);
  process.exit(2);
}
const timer = setTimeout(() => {
  console.log(JSON.stringify({ ...seen, timedOut: true }));
  process.exit(3);
}, 240000);
try {
  await scenarios[scenario]();
} catch (e) {
  seen.failure = e?.stack ?? String(e);
}
clearTimeout(timer);
console.log(JSON.stringify(seen));
process.exit(0);

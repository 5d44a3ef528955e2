// The MCP TypeScript SDK's client (@modelcontextprotocol/sdk, installed
// with the reference servers by scripts/install-language-servers.sh)
// driving `odin mcp serve --mode edit`, for tests/odin_mcp_servers_test.cc.
// The SDK checks each result's structuredContent against the tool's
// outputSchema itself, so a record that does not fit fails here. Prints what
// it saw as one JSON object after "RESULT ".
//
// usage: node mcp_serve_client.mjs NODE_MODULES ODIN WORKSPACE
import { pathToFileURL } from "node:url";

const [modules, odin, workspace] = process.argv.slice(2);
if (!globalThis.crypto) globalThis.crypto = (await import("node:crypto")).webcrypto;
const sdk = `${modules}/@modelcontextprotocol/sdk/dist/esm`;
const { Client } = await import(pathToFileURL(`${sdk}/client/index.js`).href);
const { StdioClientTransport } = await import(pathToFileURL(`${sdk}/client/stdio.js`).href);

const seen = {};
setTimeout(() => {
  console.log("RESULT " + JSON.stringify({ ...seen, timedOut: true }));
  process.exit(3);
}, 120000).unref();

try {
  const transport = new StdioClientTransport({
    command: odin,
    args: ["mcp", "serve", "--mode", "edit"],
    cwd: workspace,
    env: process.env,
    stderr: "inherit",
  });
  const client = new Client({ name: "odin-test", version: "1" });
  await client.connect(transport);
  const { tools } = await client.listTools();
  seen.tools = Object.fromEntries(tools.map((t) => [t.name, { annotations: t.annotations, outputSchema: !!t.outputSchema }]));

  const read = await client.callTool({ name: "Read", arguments: { file_path: "a.py" } });
  seen.read = { isError: read.isError, structured: read.structuredContent };
  const edit = await client.callTool({
    name: "EditTool",
    arguments: { file_path: "a.py", old_string: "return 1", new_string: "return 2" },
  });
  seen.edit = { isError: edit.isError, structured: edit.structuredContent };

  const progress = [];
  const command = await client.callTool(
    { name: "ExecuteCommand", arguments: { command: "for i in 1 2 3 4 5; do echo line $i; sleep 0.4; done" } },
    undefined,
    { onprogress: (p) => progress.push(p), timeout: 60000 },
  );
  seen.command = { isError: command.isError, status: command.structuredContent?.status };
  seen.progress = progress;
  await client.close();
} catch (e) {
  seen.failure = e?.stack ?? String(e);
}
console.log("RESULT " + JSON.stringify(seen));
process.exit(0);

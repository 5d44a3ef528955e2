// The MCP TypeScript SDK's client, declaring elicitation, driving `odin mcp
// serve --mode edit` for tests/odin_mcp_servers_test.cc: two commands that
// need approval (an ask rule in the user's config); the client's form
// handler allows the first once and declines the second. Prints what it saw
// as one JSON object after "RESULT ".
//
// usage: node mcp_serve_elicit.mjs NODE_MODULES ODIN WORKSPACE
import { pathToFileURL } from "node:url";

const [modules, odin, workspace] = process.argv.slice(2);
if (!globalThis.crypto) globalThis.crypto = (await import("node:crypto")).webcrypto;
const sdk = `${modules}/@modelcontextprotocol/sdk/dist/esm`;
const { Client } = await import(pathToFileURL(`${sdk}/client/index.js`).href);
const { StdioClientTransport } = await import(pathToFileURL(`${sdk}/client/stdio.js`).href);
const { ElicitRequestSchema } = await import(pathToFileURL(`${sdk}/types.js`).href);

const seen = { asked: [] };
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
  const client = new Client({ name: "odin-test", version: "1" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    seen.asked.push({ message: request.params.message, schema: request.params.requestedSchema });
    return seen.asked.length === 1 ? { action: "accept", content: { decision: "once" } } : { action: "decline" };
  });
  await client.connect(transport);
  const run = async (command) => {
    const r = await client.callTool({ name: "ExecuteCommand", arguments: { command } }, undefined, { timeout: 60000 });
    return { isError: r.isError, status: r.structuredContent?.status, summary: r.structuredContent?.summary };
  };
  seen.first = await run("touch approved.txt");
  seen.second = await run("touch denied.txt");
  await client.close();
} catch (e) {
  seen.failure = e?.stack ?? String(e);
}
console.log("RESULT " + JSON.stringify(seen));
process.exit(0);

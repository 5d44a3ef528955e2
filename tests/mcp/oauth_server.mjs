// An OAuth-protected MCP server for tests/odin_mcp_oauth_test.cc, made of
// the MCP TypeScript SDK's own parts (installed with the reference servers
// by scripts/install-language-servers.sh): its authorization server router
// (metadata, dynamic client registration, /authorize, /token with PKCE
// checked by the SDK), its protected resource metadata router, and its
// Bearer middleware in front of a stateless streamable HTTP MCP server.
// The SDK's demo provider, extended: its tokens last TOKEN_SECONDS (default
// 3600) and come with a refresh token, rotated at each refresh; a code or a
// refresh for another resource than this server is refused. /authorize
// redirects at once (no human login).
//
// It also serves /other, another "MCP server" that always answers 401 and
// logs whether a request brought an Authorization header.
//
// usage: node oauth_server.mjs NODE_MODULES MCP_PORT AUTH_PORT LOG
// LOG gets one JSON line per event: {"event": "code"|"refresh"|"call"|"other", ...}.
import { appendFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { pathToFileURL } from "node:url";

const [modules, mcpPort, authPort, logPath] = process.argv.slice(2);
if (!globalThis.crypto) globalThis.crypto = (await import("node:crypto")).webcrypto;
const sdk = `${modules}/@modelcontextprotocol/sdk/dist/esm`;
const load = (p) => import(pathToFileURL(`${sdk}/${p}`).href);
const { DemoInMemoryAuthProvider } = await load("examples/server/demoInMemoryOAuthProvider.js");
const { mcpAuthRouter, mcpAuthMetadataRouter, getOAuthProtectedResourceMetadataUrl, createOAuthMetadata } =
  await load("server/auth/router.js");
const { requireBearerAuth } = await load("server/auth/middleware/bearerAuth.js");
const { InvalidGrantError, InvalidTokenError } = await load("server/auth/errors.js");
const { McpServer } = await load("server/mcp.js");
const { StreamableHTTPServerTransport } = await load("server/streamableHttp.js");
const { createMcpExpressApp } = await load("server/express.js");
const express = (await import(pathToFileURL(`${modules}/express/index.js`).href)).default;

const lifetime = parseInt(process.env.TOKEN_SECONDS || "3600", 10);
const mcpUrl = new URL(`http://localhost:${mcpPort}/mcp`);
const authUrl = new URL(`http://localhost:${authPort}`);
const log = (event) => appendFileSync(logPath, JSON.stringify(event) + "\n");

class Provider extends DemoInMemoryAuthProvider {
  constructor() {
    super();
    this.refreshTokens = new Map();
  }
  issue(clientId, resource) {
    if (String(resource) !== mcpUrl.href) throw new InvalidGrantError(`not this server's resource: ${resource}`);
    const token = randomUUID(), refresh = randomUUID();
    this.tokens.set(token, { token, clientId, scopes: [], expiresAt: Date.now() + lifetime * 1000, resource, type: "access" });
    this.refreshTokens.set(refresh, { clientId, resource });
    return { access_token: token, token_type: "bearer", expires_in: lifetime, refresh_token: refresh };
  }
  async exchangeAuthorizationCode(client, code) {
    const data = this.codes.get(code);
    if (!data || data.client.client_id !== client.client_id) throw new InvalidGrantError("unknown code");
    this.codes.delete(code);
    log({ event: "code", resource: String(data.params.resource) });
    return this.issue(client.client_id, data.params.resource);
  }
  // An unknown or expired token is a 401 (the demo's plain Error is a 500).
  async verifyAccessToken(token) {
    const data = this.tokens.get(token);
    if (!data || data.expiresAt < Date.now()) throw new InvalidTokenError("unknown or expired token");
    return { token, clientId: data.clientId, scopes: data.scopes, expiresAt: Math.floor(data.expiresAt / 1000),
             resource: data.resource };
  }
  async exchangeRefreshToken(client, refreshToken, _scopes, resource) {
    const data = this.refreshTokens.get(refreshToken);
    if (!data || data.clientId !== client.client_id) throw new InvalidGrantError("unknown refresh token");
    this.refreshTokens.delete(refreshToken);  // rotated: each is used once
    log({ event: "refresh", resource: String(resource) });
    return this.issue(client.client_id, resource ?? data.resource);
  }
}
const provider = new Provider();

const auth = express();
auth.use(mcpAuthRouter({ provider, issuerUrl: authUrl, scopesSupported: ["mcp:tools"] }));
// localhost is 127.0.0.1 and, where /etc/hosts says so (a pristine
// Debian), ::1 too: a client may try either first.
const listenLocal = (app, port) => {
  app.listen(port, "127.0.0.1");
  app.listen(port, "::1").on("error", () => {});  // no IPv6 here: 127.0.0.1 alone
};
listenLocal(auth, parseInt(authPort, 10));

const app = createMcpExpressApp();
app.use(mcpAuthMetadataRouter({
  oauthMetadata: createOAuthMetadata({ provider, issuerUrl: authUrl, scopesSupported: ["mcp:tools"] }),
  resourceServerUrl: mcpUrl,
  scopesSupported: ["mcp:tools"],
  resourceName: "Odin's OAuth test server",
}));
const bearer = requireBearerAuth({ verifier: provider, resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl) });
app.post("/mcp", bearer, async (req, res) => {
  const server = new McpServer({ name: "oauth-test", version: "1" });
  server.registerTool("whoami", { description: "Says which client the token was issued to" }, async (extra) => {
    log({ event: "call", client: extra.authInfo?.clientId });
    return { content: [{ type: "text", text: `authorized as ${extra.authInfo?.clientId}` }] };
  });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on("close", () => { transport.close(); server.close(); });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
});
app.get("/mcp", (req, res) => res.status(405).end());
app.delete("/mcp", (req, res) => res.status(405).end());
app.all("/other", (req, res) => {
  log({ event: "other", authorization: req.headers.authorization ?? null });
  res.set("WWW-Authenticate", `Bearer error="invalid_token"`).status(401).json({ error: "invalid_token" });
});
listenLocal(app, parseInt(mcpPort, 10));

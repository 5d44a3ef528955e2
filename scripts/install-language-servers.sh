#!/usr/bin/env bash
# Installs the language servers Odin's validation gate uses that Debian does
# not package (pyright, typescript-language-server with typescript), the
# MCP reference servers the tests run Odin's MCP client against, the ACP
# client SDK the tests drive odin acp with, and the generic gRPC clients
# (health, reflection) they drive odin serve with, from npm into PREFIX
# (default build/lsp). Odin finds them in <bin>/../lsp, i.e.
# build/lsp for build/bin/odin. Versions are pinned; typescript-language-server
# 4.4.x is the line that runs on Debian 12's Node 18, and so does the ACP
# SDK's 1.x. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix="${1:-build/lsp}"
packages=(pyright@1.1.414 typescript-language-server@4.4.1 typescript@5.9.3
          @modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/server-filesystem@2026.8.31
          @agentclientprotocol/sdk@1.9.0
          @grpc/grpc-js@1.14.7 grpc-health-check@2.1.0 grpc-js-reflection-client@1.4.2)
stamp="$prefix/.odin-installed"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${packages[*]}" ] &&
   [ -x "$prefix/node_modules/.bin/pyright-langserver" ] &&
   [ -x "$prefix/node_modules/.bin/typescript-language-server" ] &&
   [ -x "$prefix/node_modules/.bin/mcp-server-everything" ] &&
   [ -f "$prefix/node_modules/@agentclientprotocol/sdk/dist/acp.js" ] &&
   [ -d "$prefix/node_modules/grpc-js-reflection-client" ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "install-language-servers: npm is missing (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
mkdir -p "$prefix"
[ -f "$prefix/package.json" ] || echo '{"private": true}' > "$prefix/package.json"
npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "${packages[@]}"
echo "${packages[*]}" > "$stamp"

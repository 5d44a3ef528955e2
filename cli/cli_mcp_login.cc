// odin mcp login|logout NAME: OAuth 2.1 for an HTTP MCP server
// (docs/hooks-and-mcp.md, "OAuth"). login asks the server what it needs,
// registers Odin with its authorization server when it must (RFC 7591),
// opens the browser on the authorization URL (PKCE S256, a state checked by
// the redirect listener on 127.0.0.1), exchanges the code and stores the
// token in the user's state directory, keyed by the server's URL and
// issuer. logout removes every token of the server's URL and revokes them
// where the server offers it. Neither ever prints a token.

#include <strings.h>
#include <sys/wait.h>

#include <cstdio>
#include <iostream>

#include "base/file_util.h"
#include "base/ids.h"
#include "base/subprocess.h"
#include "cli/cli.h"
#include "cli/oauth_redirect.h"
#include "config/config_loader.h"
#include "config/mcp_token_store.h"
#include "session/mcp_oauth_client.h"
#include "workspace/workspace.h"

namespace odin {
namespace {

constexpr Duration kRequestTimeout = seconds(30);

int Fail(const std::string& message) {
  std::cerr << "odin mcp: " << message << "\n";
  return kError;
}

// The server named in the config in force, or why not.
StatusOr<McpServerSpec> FindServer(const GlobalFlags& g, const std::string& name) {
  ASSIGN_OR_RETURN(Workspace ws, FindWorkspace(g.dir));
  ASSIGN_OR_RETURN(LoadedConfig loaded, LoadConfig(ws, EnvironmentMap()));
  auto it = loaded.config.mcp_servers.find(name);
  if (it == loaded.config.mcp_servers.end()) {
    return Status::NotFound("no MCP server named " + name + " (odin mcp list shows them)");
  }
  return it->second;
}

// The browser, as a child of its own (never a shell): $BROWSER, else xdg-open.
void OpenBrowser(const std::string& url) {
  const char* browser = getenv("BROWSER");
  SpawnOptions o;
  o.argv = {browser != nullptr && browser[0] != '\0' ? browser : "xdg-open", url};
  o.env = CurrentEnvironment();
  StatusOr<pid_t> pid = Spawn(o);
  if (!pid.ok()) std::cerr << "odin mcp: no browser opened (" << pid.status().message() << "): open the URL yourself\n";
}

int ExpiresIn(int64_t expires_at_ms) {
  return static_cast<int>((expires_at_ms - RealClock::Get()->WallMillis()) / 60000);
}

}  // namespace

int RunMcpLogin(const GlobalFlags& g, const McpFlags& f) {
  StatusOr<McpServerSpec> spec = FindServer(g, f.name);
  if (!spec.ok()) return Fail(spec.status().message());
  if (spec->transport != McpServerSpec::Transport::kHttp) {
    return Fail(f.name + " is a stdio server: only HTTP servers log in");
  }
  std::vector<std::string> headers;
  for (const auto& [k, v] : spec->headers) {
    if (strcasecmp(k.c_str(), "authorization") == 0) {
      return Fail(f.name + " sends an Authorization header of its own (" + spec->source + "): remove it to log in");
    }
    headers.push_back(k + ": " + v);
  }
  printf("MCP server %s: %s (from %s)\n", f.name.c_str(), spec->url.c_str(), spec->source.c_str());
  if (spec->from_workspace) {
    printf("note: the workspace configures this server; the token will be for %s, whatever a config names it\n",
           spec->url.c_str());
  }
  StatusOr<McpOAuthDiscovery> d = DiscoverMcpOAuth(spec->url, headers, "", kRequestTimeout);
  if (!d.ok()) return Fail(f.name + ": " + d.status().message());
  if (!d->needs_authorization) {
    printf("%s needs no authorization\n", f.name.c_str());
    return 0;
  }
  McpTokenStore store(McpTokenStore::DefaultPath());
  // The port of the last login, if free: its registration is for it.
  int port = f.callback_port;
  StatusOr<std::vector<McpTokenEntry>> previous = store.Find(d->resource);
  if (!previous.ok()) return Fail(previous.status().message());
  if (port == 0 && !previous->empty()) {
    StatusOr<OAuthUrl> r = ParseOAuthUrl(previous->front().redirect_uri);
    if (r.ok()) port = r->port;
  }
  StatusOr<OAuthRedirectListener> listener = OAuthRedirectListener::Open(port);
  if (!listener.ok() && f.callback_port == 0 && port != 0) listener = OAuthRedirectListener::Open(0);
  if (!listener.ok()) return Fail(listener.status().message());
  std::string redirect = listener->redirect_uri();

  StatusOr<std::optional<OAuthClient>> known = store.FindClient(d->server.issuer, redirect);
  if (!known.ok()) return Fail(known.status().message());
  OAuthClient client;
  if (known->has_value()) {
    client = **known;
  } else {
    StatusOr<OAuthClient> registered = RegisterMcpClient(d->server, redirect, kRequestTimeout);
    if (!registered.ok()) return Fail(f.name + ": " + registered.status().message());
    client = *registered;
    if (Status s = store.PutClient(d->server.issuer, redirect, client); !s.ok()) return Fail(s.message());
  }

  // Whom the user is about to trust, before the browser opens.
  std::string scope = d->scope.empty() ? "" : " (scope: " + d->scope + ")";
  printf("authorization server: %s%s\n", d->server.issuer.c_str(), scope.c_str());
  std::string verifier = NewPkceVerifier(), state = RandomHex(16);
  std::string url = AuthorizationUrl(d->server, {.client_id = client.client_id,
                                                 .redirect_uri = redirect,
                                                 .challenge = PkceChallenge(verifier),
                                                 .state = state,
                                                 .resource = d->resource,
                                                 .scope = d->scope});
  printf("Log in at:\n  %s\nwaiting for the redirect to %s (%d s)\n", url.c_str(), redirect.c_str(), f.timeout_seconds);
  fflush(stdout);
  if (!f.no_browser) OpenBrowser(url);
  StatusOr<std::string> code = listener->Wait(state, std::chrono::steady_clock::now() + seconds(f.timeout_seconds));
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  if (!code.ok()) return Fail(f.name + ": " + code.status().message());
  StatusOr<TokenAnswer> token =
      ExchangeMcpCode(d->server.token_endpoint, client, *code, redirect, verifier, d->resource, kRequestTimeout);
  if (!token.ok()) return Fail(f.name + ": " + token.status().message());

  McpTokenEntry e;
  int64_t now = RealClock::Get()->WallMillis();
  e.resource = d->resource;
  e.issuer = d->server.issuer;
  e.server_name = f.name;
  e.client = client;
  e.redirect_uri = redirect;
  e.token_endpoint = d->server.token_endpoint;
  e.revocation_endpoint = d->server.revocation_endpoint;
  e.access_token = token->access_token;
  e.refresh_token = token->refresh_token;
  e.scope = token->scope.empty() ? d->scope : token->scope;
  e.expires_at_ms = token->expires_in > 0 ? now + token->expires_in * 1000 : 0;
  e.obtained_at_ms = now;
  if (Status s = store.Put(e); !s.ok()) return Fail(s.message());
  std::string expiry = e.expires_at_ms > 0 ? ", expires in " + std::to_string(ExpiresIn(e.expires_at_ms)) + " min" : "";
  printf("logged in to %s (%s%s%s)\n", f.name.c_str(), d->resource.c_str(), expiry.c_str(),
         e.refresh_token.empty() ? "" : ", refreshed as needed");
  return 0;
}

int RunMcpLogout(const GlobalFlags& g, const McpFlags& f) {
  // A server's name in the config in force, or its URL (a server since
  // removed from the config).
  std::string url = f.name;
  if (f.name.find("://") == std::string::npos) {
    StatusOr<McpServerSpec> spec = FindServer(g, f.name);
    if (!spec.ok()) return Fail(spec.status().message() + "; odin mcp logout URL removes a token by its server's URL");
    url = spec->url;
  }
  StatusOr<std::string> resource = CanonicalResource(url);
  if (!resource.ok()) return Fail(resource.status().message());
  McpTokenStore store(McpTokenStore::DefaultPath());
  StatusOr<std::vector<McpTokenEntry>> removed = store.Remove(*resource);
  if (!removed.ok()) return Fail(removed.status().message());
  if (removed->empty()) {
    printf("no token stored for %s\n", resource->c_str());
    return 0;
  }
  for (const McpTokenEntry& e : *removed) {
    RevokeMcpToken(e.revocation_endpoint, e.client, e.refresh_token.empty() ? e.access_token : e.refresh_token,
                   seconds(10));
  }
  printf("logged out of %s (%zu token%s removed)\n", resource->c_str(), removed->size(),
         removed->size() == 1 ? "" : "s");
  return 0;
}

std::string DescribeMcpLogin(const McpServerSpec& spec) {
  if (spec.transport != McpServerSpec::Transport::kHttp) return "";
  StatusOr<std::string> resource = CanonicalResource(spec.url);
  if (!resource.ok()) return "";
  StatusOr<std::vector<McpTokenEntry>> found = McpTokenStore(McpTokenStore::DefaultPath()).Find(*resource);
  if (!found.ok() || found->empty()) return "";
  const McpTokenEntry& e = found->front();
  if (e.expires_at_ms <= 0) return "oauth: logged in";
  int minutes = ExpiresIn(e.expires_at_ms);
  if (minutes < 0)
    return e.refresh_token.empty() ? "oauth: expired (odin mcp login)" : "oauth: logged in (refreshed when used)";
  return "oauth: logged in (expires in " + std::to_string(minutes) + " min)";
}

}  // namespace odin

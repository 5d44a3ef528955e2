#pragma once
// OAuth 2.1 for streamable HTTP MCP servers (the MCP authorization
// specification, 2025-06-18), the pieces that do no I/O: URLs and their
// canonical form, the server's Bearer challenge, the protected resource's
// metadata (RFC 9728) and its authorization server's (RFC 8414) with the
// identity checks, PKCE S256 (RFC 7636), the authorization URL, dynamic
// client registration (RFC 7591), the token endpoint's forms and answers,
// and the redirect that comes back to Odin's listener.
//
// Every string that comes from a server is bounded and checked here, so the
// callers (session/mcp_oauth_client.h, the login command) only move bytes.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace odin {

// An http or https URL, read strictly: no user name or password, no
// spaces, control or non-ASCII characters, no backslash; a host of letters,
// digits, '-', '_' and '.', or [IPv6]; a port of 1 to 65535.
struct OAuthUrl {
  std::string scheme;  // "http" or "https", lower case
  std::string host;    // lower case; IPv6 in brackets
  int port = 0;        // the scheme's default when the URL names none
  std::string path;    // "/" at least; dot segments removed
  std::string query;   // without '?'; "" for none
  // scheme://host[:port], the port only when not the default.
  std::string Origin() const;
};
StatusOr<OAuthUrl> ParseOAuthUrl(std::string_view url);

// The canonical form of an MCP server's URL: its resource indicator (RFC
// 8707) and the token store's key. Lower-case scheme and host, the default
// port dropped, no query or fragment (a query often carries a secret), no
// trailing '/', dot segments removed.
StatusOr<std::string> CanonicalResource(std::string_view url);

// Whether an endpoint may be used: https, or http to a loopback host
// (localhost, 127.0.0.1, [::1]). The error names what (e.g.
// "token_endpoint").
Status CheckEndpoint(std::string_view url, std::string_view what);

// A 401's WWW-Authenticate header, its Bearer challenge (RFC 6750 §3 and
// RFC 9728 §5.1): bearer is false when the header offers no Bearer scheme.
struct BearerChallenge {
  bool bearer = false;
  std::string resource_metadata;
  std::string scope;
  std::string error;
};
BearerChallenge ParseWwwAuthenticate(std::string_view header);

// Where the server's protected resource metadata may be, in order: the
// challenge's resource_metadata (only when it is the server's own origin),
// then the path-inserted and the root well-known URLs.
std::vector<std::string> ProtectedResourceMetadataUrls(const OAuthUrl& server, std::string_view from_challenge);

struct ProtectedResource {
  std::string resource;
  std::vector<std::string> authorization_servers;
  std::vector<std::string> scopes;
};
// The metadata, refused unless its resource is the server's canonical URL
// or a path prefix of it on the same origin, and it names an authorization
// server.
StatusOr<ProtectedResource> ParseProtectedResource(std::string_view body, std::string_view canonical_server);

// Where an issuer's metadata may be (RFC 8414 §3.1 and OpenID Connect
// Discovery, path-inserted first).
std::vector<std::string> AuthorizationServerMetadataUrls(std::string_view issuer);

struct AuthorizationServer {
  std::string issuer;
  std::string authorization_endpoint;
  std::string token_endpoint;
  std::string registration_endpoint;  // "" when it offers no registration
  std::string revocation_endpoint;    // "" when it offers no revocation
  std::vector<std::string> scopes;
};
// The metadata, refused unless its issuer is exactly the one asked for,
// it supports S256, and every endpoint passes CheckEndpoint.
StatusOr<AuthorizationServer> ParseAuthorizationServer(std::string_view body, std::string_view issuer);
// A server of the 2025-03-26 revision without metadata: its origin's
// /authorize, /token and /register.
AuthorizationServer DefaultAuthorizationServer(const OAuthUrl& server);

// base64url without padding (RFC 4648 §5).
std::string Base64Url(std::string_view bytes);
// The S256 challenge of a verifier: base64url(SHA-256(verifier)).
std::string PkceChallenge(std::string_view verifier);
// A new verifier: 64 characters of [0-9a-f] (RFC 7636 §4.1 allows 43 to 128).
std::string NewPkceVerifier();

// application/x-www-form-urlencoded.
std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& fields);

struct AuthorizationRequest {
  std::string client_id;
  std::string redirect_uri;
  std::string challenge;
  std::string state;
  std::string resource;  // the canonical server URL
  std::string scope;     // "" for none
};
// The URL the user's browser opens.
std::string AuthorizationUrl(const AuthorizationServer& as, const AuthorizationRequest& r);

// Dynamic client registration: the request's JSON, and what the answer
// gives (a public client: a client_secret only if the server insists).
std::string RegistrationRequest(std::string_view redirect_uri);
struct OAuthClient {
  std::string client_id;
  std::string client_secret;
};
StatusOr<OAuthClient> ParseRegistration(std::string_view body, int http_status);

// The token endpoint's forms.
std::string AuthorizationCodeForm(const OAuthClient& client, std::string_view code, std::string_view redirect_uri,
                                  std::string_view verifier, std::string_view resource);
std::string RefreshForm(const OAuthClient& client, std::string_view refresh_token, std::string_view resource);

struct TokenAnswer {
  std::string access_token;
  std::string refresh_token;  // "" when none was issued
  std::string scope;
  int64_t expires_in = 0;  // seconds; 0 when the server did not say
};
// The answer, refused unless it is a Bearer token; an OAuth error answer
// becomes one line with its error code and description.
StatusOr<TokenAnswer> ParseTokenAnswer(std::string_view body, int http_status);

// The request that reaches the redirect listener: its target ("/callback?
// code=...&state=..."). path_matches is false for any other path.
struct OAuthCallback {
  bool path_matches = false;
  std::string code;
  std::string state;
  std::string error;  // the authorization server's refusal, e.g. access_denied
  std::string error_description;
};
OAuthCallback ParseOAuthCallback(std::string_view target, std::string_view path);

}  // namespace odin

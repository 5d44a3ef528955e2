#pragma once
// OAuth 2.1 for an HTTP MCP server, the requests (mcp/mcp_oauth.h has the
// rules they follow): what the server asks for (its 401 and metadata, RFC
// 9728 and 8414), dynamic client registration (RFC 7591), the code's
// exchange and a token's refresh. Blocking, each within its deadline, on an
// HttpClient of its own: `odin mcp login` calls them, and McpTokens on a
// thread of its own. Redirects are not followed.

#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "mcp/mcp_oauth.h"

namespace odin {

struct McpOAuthDiscovery {
  bool needs_authorization = true;  // false: the server answered without a token
  std::string resource;             // the server's canonical URL
  AuthorizationServer server;
  std::string scope;  // to ask for ("" for none)
};

// Asks the server (an unauthenticated initialize, whose session, if it
// makes one, is deleted) and follows its challenge to the authorization
// server's metadata. headers: the entry's own ("Name: value"). issuer: the
// one to use when the server names several ("" for the first).
StatusOr<McpOAuthDiscovery> DiscoverMcpOAuth(const std::string& url, const std::vector<std::string>& headers,
                                             const std::string& issuer, Duration timeout);

StatusOr<OAuthClient> RegisterMcpClient(const AuthorizationServer& as, const std::string& redirect_uri,
                                        Duration timeout);

StatusOr<TokenAnswer> ExchangeMcpCode(const std::string& token_endpoint, const OAuthClient& client,
                                      const std::string& code, const std::string& redirect_uri,
                                      const std::string& verifier, const std::string& resource, Duration timeout);

StatusOr<TokenAnswer> RefreshMcpToken(const std::string& token_endpoint, const OAuthClient& client,
                                      const std::string& refresh_token, const std::string& resource, Duration timeout);

// RFC 7009, best effort: the answer is not looked at.
void RevokeMcpToken(const std::string& revocation_endpoint, const OAuthClient& client, const std::string& token,
                    Duration timeout);

}  // namespace odin

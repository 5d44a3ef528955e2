#pragma once
// The OAuth tokens of HTTP MCP servers (`odin mcp login`), in the user's
// state directory, never a workspace: $XDG_STATE_HOME/odin/auth/mcp-auth.json,
// default ~/.local/state/odin/auth/mcp-auth.json, a directory no sandbox
// sees (base/file_util.h OdinAuthDir) (0600, its directory 0700;
// locked, replaced atomically and read only when it is the user's own:
// config/private_store.h).
//
//   {"version": 1,
//    "tokens": {"<resource>\n<issuer>": {entry}, ...},
//    "clients": {"<issuer>\n<redirect_uri>": {"client_id", "client_secret"}}}
//
// A token is keyed by the server's canonical URL (mcp/mcp_oauth.h) and its
// issuer, never by the server's name: the name is kept for display only, so
// a workspace's .mcp.json that reuses a user's server name for another URL
// finds no token. Dynamic registrations are kept per issuer and redirect
// URI, so a second login reuses the client.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "mcp/mcp_oauth.h"

namespace odin {

struct McpTokenEntry {
  std::string resource;     // the canonical server URL
  std::string issuer;       // the authorization server
  std::string server_name;  // the name at login, for display only
  OAuthClient client;
  std::string redirect_uri;
  std::string token_endpoint;
  std::string revocation_endpoint;  // "" when the server offers none
  std::string access_token;
  std::string refresh_token;  // "" when none was issued
  std::string scope;
  int64_t expires_at_ms = 0;  // 0: unknown
  int64_t obtained_at_ms = 0;
};

class McpTokenStore {
 public:
  explicit McpTokenStore(std::string path, Duration lock_timeout = Duration::max())
      : path_(std::move(path)), lock_timeout_(lock_timeout) {}
  // mcp-auth.json in Odin's state directory.
  static std::string DefaultPath();
  const std::string& path() const { return path_; }

  // The entries for the resource (one per issuer; usually one).
  StatusOr<std::vector<McpTokenEntry>> Find(const std::string& resource) const;
  // Every entry.
  StatusOr<std::vector<McpTokenEntry>> List() const;
  // Adds or replaces the entry of (resource, issuer).
  Status Put(const McpTokenEntry& entry) const;
  // Changes the entry of (resource, issuer) under the lock: change sees
  // what is stored now (another odin may have refreshed it) and says
  // whether to write it back. NotFound when there is none.
  Status Update(const std::string& resource, const std::string& issuer,
                const std::function<StatusOr<bool>(McpTokenEntry*)>& change) const;
  // Removes every entry of the resource; returns them.
  StatusOr<std::vector<McpTokenEntry>> Remove(const std::string& resource) const;

  // A client registered with issuer for redirect_uri, if one was.
  StatusOr<std::optional<OAuthClient>> FindClient(const std::string& issuer, const std::string& redirect_uri) const;
  Status PutClient(const std::string& issuer, const std::string& redirect_uri, const OAuthClient& client) const;

 private:
  std::string path_;
  Duration lock_timeout_;  // how long a change waits for another odin's
};

}  // namespace odin

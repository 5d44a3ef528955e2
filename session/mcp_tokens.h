#pragma once
// A session's OAuth tokens for its HTTP MCP servers (`odin mcp login`
// stores them: config/mcp_token_store.h). A server gets a token only when it
// is HTTP, its entry brings no Authorization header of its own, and a token
// is stored for its canonical URL: the URL finds it, never the name.
//
// The coordinator hands the header to the server's worker with each request
// (McpAuthorizer); after the server answers 401 it asks for another, which
// is a refresh: on a thread of its own, under the store's lock, re-reading
// first (another odin may have refreshed already), rotating the refresh
// token when the server does. A token near its expiry (60 s) is refreshed
// in the background before anyone is refused. Every token, and each new
// one, is told to on_secret (the ledger's redactor): no token is ever
// recorded.
//
// Thread-safety: the coordinator's thread calls everything; the refreshes'
// threads only hand their results over.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "config/mcp_token_store.h"
#include "coordinator/mcp_servers.h"
#include "mcp/mcp_config.h"

namespace odin {

class McpTokens final : public McpAuthorizer {
 public:
  McpTokens(McpTokenStore store, const std::map<std::string, McpServerSpec>& servers);
  ~McpTokens() override;  // waits for the refreshes under way
  McpTokens(const McpTokens&) = delete;
  McpTokens& operator=(const McpTokens&) = delete;

  // Told of every token held (name, value), now and whenever one is new.
  void set_on_secret(std::function<void(const std::string& name, const std::string& value)> f);

  std::string Header(const std::string& server) override;
  void Refresh(const std::string& server, std::function<void(std::string header)> done) override;
  bool Poll() override;

 private:
  struct Server {
    std::string resource;  // the canonical URL
    std::optional<McpTokenEntry> entry;
    int64_t looked_at_ms = 0;  // when the store was last read for it
    int64_t failed_at_ms = 0;  // when a refresh last failed
    std::vector<std::function<void(std::string)>> waiting;
    std::unique_ptr<std::thread> refreshing;
  };
  struct Refreshed {
    std::string server;
    StatusOr<McpTokenEntry> entry;
  };
  // Reads the store for s's token (at most every few seconds when there is
  // none: the user may log in while the session runs).
  void Look(const std::string& name, Server& s, bool now);
  void StartRefresh(const std::string& name, Server& s);
  void Tell(const std::string& name, const McpTokenEntry& e);

  McpTokenStore store_;
  std::map<std::string, Server> servers_;
  std::function<void(const std::string&, const std::string&)> on_secret_;
  std::mutex mu_;
  std::vector<Refreshed> refreshed_;  // guarded by mu_
};

}  // namespace odin

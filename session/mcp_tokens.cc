#include "session/mcp_tokens.h"

#include <strings.h>

#include <algorithm>

#include <spdlog/spdlog.h>

#include "base/clock.h"
#include "session/mcp_oauth_client.h"

namespace odin {
namespace {

constexpr int64_t kEarlyMs = 60 * 1000;     // refreshed this long before it expires
constexpr int64_t kLookAgainMs = 5 * 1000;  // a server without a token: the store read again
constexpr Duration kRefreshTimeout = seconds(30);

int64_t WallMillis() { return RealClock::Get()->WallMillis(); }

bool HasOwnAuthorization(const McpServerSpec& spec) {
  for (const auto& [k, v] : spec.headers) {
    if (strcasecmp(k.c_str(), "authorization") == 0) return true;
  }
  return false;
}

}  // namespace

McpTokens::McpTokens(McpTokenStore store, const std::map<std::string, McpServerSpec>& servers)
    : store_(std::move(store)) {
  for (const auto& [name, spec] : servers) {
    if (spec.transport != McpServerSpec::Transport::kHttp || HasOwnAuthorization(spec)) continue;
    // Never over plain http to another machine.
    if (!CheckEndpoint(spec.url, "url").ok()) continue;
    StatusOr<std::string> resource = CanonicalResource(spec.url);
    if (!resource.ok()) continue;
    Server& s = servers_[name];
    s.resource = *resource;
    Look(name, s, /*now=*/true);
  }
}

McpTokens::~McpTokens() {
  for (auto& [name, s] : servers_) {
    if (s.refreshing && s.refreshing->joinable()) s.refreshing->join();
  }
}

void McpTokens::set_on_secret(std::function<void(const std::string&, const std::string&)> f) {
  on_secret_ = std::move(f);
  for (const auto& [name, s] : servers_) {
    if (s.entry) Tell(name, *s.entry);
  }
}

void McpTokens::Tell(const std::string& name, const McpTokenEntry& e) {
  if (!on_secret_) return;
  on_secret_("mcpServers." + name + ".oauth.access_token", e.access_token);
  if (!e.refresh_token.empty()) on_secret_("mcpServers." + name + ".oauth.refresh_token", e.refresh_token);
}

void McpTokens::Look(const std::string& name, Server& s, bool now) {
  int64_t t = WallMillis();
  if (!now && t - s.looked_at_ms < kLookAgainMs) return;
  s.looked_at_ms = t;
  StatusOr<std::vector<McpTokenEntry>> found = store_.Find(s.resource);
  if (!found.ok()) {
    spdlog::warn("MCP server {}: the token store cannot be read: {}", name, found.status().message());
    return;
  }
  if (found->empty()) return;
  // Several issuers: the latest login.
  const McpTokenEntry* latest = &(*found)[0];
  for (const McpTokenEntry& e : *found) {
    if (e.obtained_at_ms > latest->obtained_at_ms) latest = &e;
  }
  bool changed = !s.entry || s.entry->access_token != latest->access_token;
  s.entry = *latest;
  if (changed) Tell(name, *s.entry);
}

std::string McpTokens::Header(const std::string& server) {
  auto it = servers_.find(server);
  if (it == servers_.end()) return "";
  Server& s = it->second;
  if (!s.entry) Look(server, s, /*now=*/false);
  if (!s.entry) return "";
  const McpTokenEntry& e = *s.entry;
  // Refreshed a minute before it expires (half its life, for a short one).
  int64_t now = WallMillis();
  int64_t early = std::min(kEarlyMs, (e.expires_at_ms - e.obtained_at_ms) / 2);
  if (e.expires_at_ms > 0 && now >= e.expires_at_ms - early && !e.refresh_token.empty() && !s.refreshing &&
      now - s.failed_at_ms >= kLookAgainMs) {
    StartRefresh(server, s);
  }
  return "Bearer " + e.access_token;
}

void McpTokens::Refresh(const std::string& server, std::function<void(std::string)> done) {
  auto it = servers_.find(server);
  if (it == servers_.end()) return done("");
  Server& s = it->second;
  s.waiting.push_back(std::move(done));
  if (!s.refreshing) StartRefresh(server, s);
}

void McpTokens::StartRefresh(const std::string& name, Server& s) {
  // What was refused (or is about to expire): a stored token other than it
  // is another odin's refresh, or a new login, and is taken as it is.
  std::string refused = s.entry ? s.entry->access_token : "";
  std::string issuer = s.entry ? s.entry->issuer : "";
  std::string resource = s.resource;
  s.refreshing = std::make_unique<std::thread>([this, name, refused, issuer, resource] {
    StatusOr<McpTokenEntry> result = Status::NotFound(resource, "no token is stored for it");
    if (issuer.empty()) {
      StatusOr<std::vector<McpTokenEntry>> found = store_.Find(resource);
      if (found.ok() && !found->empty()) result = (*found)[0];
    } else {
      Status s = store_.Update(resource, issuer, [&](McpTokenEntry* e) -> StatusOr<bool> {
        if (e->access_token != refused) {
          result = *e;
          return false;
        }
        if (e->refresh_token.empty()) return Status::FailedPrecondition(resource, "its token cannot be refreshed");
        ASSIGN_OR_RETURN(TokenAnswer t,
                         RefreshMcpToken(e->token_endpoint, e->client, e->refresh_token, e->resource, kRefreshTimeout));
        int64_t now = WallMillis();
        e->access_token = t.access_token;
        if (!t.refresh_token.empty()) e->refresh_token = t.refresh_token;
        e->expires_at_ms = t.expires_in > 0 ? now + t.expires_in * 1000 : 0;
        e->obtained_at_ms = now;
        if (!t.scope.empty()) e->scope = t.scope;
        result = *e;
        return true;
      });
      if (!s.ok()) result = s;
    }
    std::lock_guard<std::mutex> lock(mu_);
    refreshed_.push_back({name, std::move(result)});
  });
}

bool McpTokens::Poll() {
  std::vector<Refreshed> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done.swap(refreshed_);
  }
  for (Refreshed& r : done) {
    Server& s = servers_[r.server];
    if (s.refreshing) {
      s.refreshing->join();
      s.refreshing.reset();
    }
    std::string header;
    if (r.entry.ok() && !r.entry->access_token.empty() &&
        (!s.entry || s.entry->access_token != r.entry->access_token)) {
      s.entry = *r.entry;
      Tell(r.server, *s.entry);
      header = "Bearer " + s.entry->access_token;
    } else if (!r.entry.ok()) {
      s.failed_at_ms = WallMillis();
      spdlog::warn("MCP server {}: the token's refresh failed: {}", r.server, r.entry.status().message());
    }
    std::vector<std::function<void(std::string)>> waiting;
    waiting.swap(s.waiting);
    for (auto& w : waiting) w(header);
  }
  for (const auto& [name, s] : servers_) {
    if (s.refreshing) return true;
  }
  return false;
}

}  // namespace odin

#include "config/mcp_token_store.h"

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/json_input.h"
#include "config/private_store.h"

namespace odin {
namespace {

using nlohmann::json;

constexpr uint64_t kMaxStoreBytes = 4 << 20;

StatusOr<json> ReadStore(const std::string& path) {
  ASSIGN_OR_RETURN(std::optional<std::string> text, ReadPrivateStore(path, kMaxStoreBytes));
  if (!text) return json({{"version", 1}, {"tokens", json::object()}, {"clients", json::object()}});
  json store = ParseJson(*text);
  bool ok = store.is_object() && store.value("version", json()) == 1 && store.contains("tokens") &&
            store["tokens"].is_object() && store.contains("clients") && store["clients"].is_object();
  for (const char* section : {"tokens", "clients"}) {
    for (const json& v : ok ? store[section] : json::object()) ok = ok && v.is_object();
  }
  if (!ok) {
    return Status::Corruption(path, "not a store of MCP tokens (expected {\"version\": 1, \"tokens\": {...}, ...})");
  }
  return store;
}

std::string Str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

int64_t Int(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

std::string Key(const std::string& a, const std::string& b) { return a + "\n" + b; }

McpTokenEntry FromJson(const json& j) {
  McpTokenEntry e;
  e.resource = Str(j, "resource");
  e.issuer = Str(j, "issuer");
  e.server_name = Str(j, "server_name_at_login");
  e.client = {Str(j, "client_id"), Str(j, "client_secret")};
  e.redirect_uri = Str(j, "redirect_uri");
  e.token_endpoint = Str(j, "token_endpoint");
  e.revocation_endpoint = Str(j, "revocation_endpoint");
  e.access_token = Str(j, "access_token");
  e.refresh_token = Str(j, "refresh_token");
  e.scope = Str(j, "scope");
  e.expires_at_ms = Int(j, "expires_at_ms");
  e.obtained_at_ms = Int(j, "obtained_at_ms");
  return e;
}

json ToJson(const McpTokenEntry& e) {
  json j = {{"resource", e.resource},
            {"issuer", e.issuer},
            {"server_name_at_login", e.server_name},
            {"client_id", e.client.client_id},
            {"redirect_uri", e.redirect_uri},
            {"token_endpoint", e.token_endpoint},
            {"access_token", e.access_token},
            {"scope", e.scope},
            {"expires_at_ms", e.expires_at_ms},
            {"obtained_at_ms", e.obtained_at_ms}};
  if (!e.client.client_secret.empty()) j["client_secret"] = e.client.client_secret;
  if (!e.revocation_endpoint.empty()) j["revocation_endpoint"] = e.revocation_endpoint;
  if (!e.refresh_token.empty()) j["refresh_token"] = e.refresh_token;
  return j;
}

Status Write(const std::string& path, const json& store) {
  return WritePrivateStore(path, store.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

}  // namespace

std::string McpTokenStore::DefaultPath() { return JoinPath(OdinAuthDir(), "mcp-auth.json"); }

StatusOr<std::vector<McpTokenEntry>> McpTokenStore::List() const {
  ASSIGN_OR_RETURN(json store, ReadStore(path_));
  std::vector<McpTokenEntry> out;
  for (const json& e : store["tokens"]) out.push_back(FromJson(e));
  return out;
}

StatusOr<std::vector<McpTokenEntry>> McpTokenStore::Find(const std::string& resource) const {
  ASSIGN_OR_RETURN(std::vector<McpTokenEntry> all, List());
  std::vector<McpTokenEntry> out;
  for (McpTokenEntry& e : all) {
    if (e.resource == resource && !e.access_token.empty()) out.push_back(std::move(e));
  }
  return out;
}

Status McpTokenStore::Put(const McpTokenEntry& entry) const {
  PrivateStoreLock lock;
  RETURN_IF_ERROR(lock.Acquire(path_, lock_timeout_));
  ASSIGN_OR_RETURN(json store, ReadStore(path_));
  store["tokens"][Key(entry.resource, entry.issuer)] = ToJson(entry);
  return Write(path_, store);
}

Status McpTokenStore::Update(const std::string& resource, const std::string& issuer,
                             const std::function<StatusOr<bool>(McpTokenEntry*)>& change) const {
  PrivateStoreLock lock;
  RETURN_IF_ERROR(lock.Acquire(path_, lock_timeout_));
  ASSIGN_OR_RETURN(json store, ReadStore(path_));
  auto it = store["tokens"].find(Key(resource, issuer));
  if (it == store["tokens"].end()) return Status::NotFound(resource, "no token is stored for it");
  McpTokenEntry entry = FromJson(*it);
  ASSIGN_OR_RETURN(bool write, change(&entry));
  if (!write) return Status::OK();
  *it = ToJson(entry);
  return Write(path_, store);
}

StatusOr<std::vector<McpTokenEntry>> McpTokenStore::Remove(const std::string& resource) const {
  PrivateStoreLock lock;
  RETURN_IF_ERROR(lock.Acquire(path_, lock_timeout_));
  ASSIGN_OR_RETURN(json store, ReadStore(path_));
  std::vector<McpTokenEntry> removed;
  json kept = json::object();
  for (auto it = store["tokens"].begin(); it != store["tokens"].end(); ++it) {
    McpTokenEntry e = FromJson(*it);
    if (e.resource == resource) {
      removed.push_back(std::move(e));
    } else {
      kept[it.key()] = *it;
    }
  }
  if (removed.empty()) return removed;
  store["tokens"] = std::move(kept);
  RETURN_IF_ERROR(Write(path_, store));
  return removed;
}

StatusOr<std::optional<OAuthClient>> McpTokenStore::FindClient(const std::string& issuer,
                                                               const std::string& redirect_uri) const {
  ASSIGN_OR_RETURN(json store, ReadStore(path_));
  auto it = store["clients"].find(Key(issuer, redirect_uri));
  if (it == store["clients"].end() || Str(*it, "client_id").empty()) return std::optional<OAuthClient>();
  return std::optional<OAuthClient>(OAuthClient{Str(*it, "client_id"), Str(*it, "client_secret")});
}

Status McpTokenStore::PutClient(const std::string& issuer, const std::string& redirect_uri,
                                const OAuthClient& client) const {
  PrivateStoreLock lock;
  RETURN_IF_ERROR(lock.Acquire(path_, lock_timeout_));
  ASSIGN_OR_RETURN(json store, ReadStore(path_));
  json c = {{"client_id", client.client_id}};
  if (!client.client_secret.empty()) c["client_secret"] = client.client_secret;
  store["clients"][Key(issuer, redirect_uri)] = std::move(c);
  return Write(path_, store);
}

}  // namespace odin

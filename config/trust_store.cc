#include "config/trust_store.h"

#include <nlohmann/json.hpp>

#include "base/canonical_json.h"
#include "base/file_util.h"
#include "base/json_input.h"
#include "config/private_store.h"

namespace odin {
namespace {

using nlohmann::json;

constexpr uint64_t kMaxStoreBytes = 16 << 20;

// The store as JSON: {"version": 1, "workspaces": {...}}; empty if absent.
StatusOr<json> ReadStore(const std::string& path) {
  ASSIGN_OR_RETURN(std::optional<std::string> text, ReadPrivateStore(path, kMaxStoreBytes));
  if (!text) return json({{"version", 1}, {"workspaces", json::object()}});
  json store = ParseJson(*text);
  if (store.is_discarded() || !store.is_object() || !store.contains("version") || store["version"] != 1 ||
      !store.contains("workspaces") || !store["workspaces"].is_object()) {
    return Status::Corruption(path, "not a trust store (expected {\"version\": 1, \"workspaces\": {...}})");
  }
  return store;
}

}  // namespace

StatusOr<std::optional<std::string>> TrustStore::Find(const std::string& root) const {
  ASSIGN_OR_RETURN(json store, ReadStore(path_));
  const json& workspaces = store["workspaces"];
  auto it = workspaces.find(root);
  if (it == workspaces.end() || !it->is_object() || !it->contains("sha256") || !(*it)["sha256"].is_string()) {
    return std::optional<std::string>();
  }
  return std::optional<std::string>((*it)["sha256"].get<std::string>());
}

Status TrustStore::Trust(const std::string& root, const std::string& sha256, int64_t now_ms) {
  if (!IsValidUtf8(root)) return Status::InvalidArgument(root, "a workspace's path must be valid UTF-8 to be trusted");
  PrivateStoreLock lock;
  RETURN_IF_ERROR(lock.Acquire(path_));
  ASSIGN_OR_RETURN(json store, ReadStore(path_));
  store["workspaces"][root] = {{"sha256", sha256}, {"trusted_at_ms", now_ms}};
  return WritePrivateStore(path_, store.dump(2) + "\n");
}

StatusOr<bool> TrustStore::Revoke(const std::string& root) {
  PrivateStoreLock lock;
  RETURN_IF_ERROR(lock.Acquire(path_));
  ASSIGN_OR_RETURN(json store, ReadStore(path_));
  if (store["workspaces"].erase(root) == 0) return false;
  RETURN_IF_ERROR(WritePrivateStore(path_, store.dump(2) + "\n"));
  return true;
}

}  // namespace odin

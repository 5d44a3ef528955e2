#include "config/approval_store.h"

#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

#include "base/canonical_json.h"
#include "base/file_util.h"
#include "base/json_input.h"
#include "config/config_loader.h"
#include "config/private_store.h"

namespace odin {
namespace {

using nlohmann::json;

constexpr uint64_t kMaxStoreBytes = 4 << 20;
constexpr size_t kMaxKeyBytes = 16 * 1024;

StatusOr<json> ReadStore(const std::string& path) {
  ASSIGN_OR_RETURN(std::optional<std::string> text, ReadPrivateStore(path, kMaxStoreBytes));
  if (!text) return json({{"version", 1}, {"approvals", json::array()}});
  json store = ParseJson(*text);
  bool ok = store.is_object() && store.contains("version") && store["version"] == 1 && store.contains("approvals") &&
            store["approvals"].is_array();
  for (const json& a : ok ? store["approvals"] : json::array()) {
    ok = ok && a.is_object() && a.contains("key") && a["key"].is_string() &&
         (!a.contains("workspace") || a["workspace"].is_string()) &&
         (!a.contains("saved_at_ms") || a["saved_at_ms"].is_number_integer());
  }
  if (!ok) {
    return Status::Corruption(path, "not a store of approvals (expected {\"version\": 1, \"approvals\": [...]})");
  }
  return store;
}

SavedApproval FromJson(const json& a) {
  return {a["key"].get<std::string>(), a.value("workspace", std::string()), a.value("saved_at_ms", int64_t{0})};
}

}  // namespace

std::string ApprovalStore::DefaultPath(const std::map<std::string, std::string>& env) {
  std::string dir = UserConfigDir(env);
  return dir.empty() ? "" : JoinPath(dir, "approvals.json");
}

StatusOr<std::vector<SavedApproval>> ApprovalStore::List() const {
  ASSIGN_OR_RETURN(json store, ReadStore(path_));
  std::vector<SavedApproval> out;
  for (const json& a : store["approvals"]) out.push_back(FromJson(a));
  return out;
}

StatusOr<std::vector<std::string>> ApprovalStore::KeysFor(const std::string& root) const {
  ASSIGN_OR_RETURN(std::vector<SavedApproval> all, List());
  std::vector<std::string> keys;
  for (const SavedApproval& a : all) {
    if (a.workspace.empty() || a.workspace == root) keys.push_back(a.key);
  }
  return keys;
}

Status ApprovalStore::Save(const std::vector<std::string>& keys, const std::string& workspace, int64_t now_ms) const {
  for (const std::string& k : keys) {
    if (k.empty() || k.size() > kMaxKeyBytes || !IsValidUtf8(k)) {
      return Status::InvalidArgument("approval", "a key to save must be valid UTF-8 of 1 to 16384 bytes");
    }
  }
  if (!IsValidUtf8(workspace)) return Status::InvalidArgument(workspace, "a workspace's path must be valid UTF-8");
  PrivateStoreLock lock;
  RETURN_IF_ERROR(lock.Acquire(path_));
  ASSIGN_OR_RETURN(json store, ReadStore(path_));
  json& list = store["approvals"];
  for (const std::string& k : keys) {
    bool saved = std::any_of(list.begin(), list.end(), [&](const json& a) {
      return a["key"] == k && a.value("workspace", std::string()) == workspace;
    });
    if (saved) continue;
    json entry = {{"key", k}, {"saved_at_ms", now_ms}};
    if (!workspace.empty()) entry["workspace"] = workspace;
    list.push_back(std::move(entry));
  }
  return WritePrivateStore(path_, store.dump(2) + "\n");
}

StatusOr<std::vector<SavedApproval>> ApprovalStore::Remove(const std::string& key) {
  PrivateStoreLock lock;
  RETURN_IF_ERROR(lock.Acquire(path_));
  ASSIGN_OR_RETURN(json store, ReadStore(path_));
  json& list = store["approvals"];
  size_t number = 0;
  if (!key.empty() && key.size() <= 9 && key.find_first_not_of("0123456789") == std::string::npos) {
    number = std::stoul(key);
  }
  std::vector<SavedApproval> removed;
  json kept = json::array();
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i]["key"] == key || i + 1 == number) {
      removed.push_back(FromJson(list[i]));
    } else {
      kept.push_back(list[i]);
    }
  }
  if (removed.empty()) return removed;
  list = std::move(kept);
  RETURN_IF_ERROR(WritePrivateStore(path_, store.dump(2) + "\n"));
  return removed;
}

std::string DescribeApprovalKey(const std::string& key) {
  auto after = [&key](const char* prefix) -> std::optional<std::string> {
    std::string p(prefix);
    if (key.rfind(p, 0) == 0) return key.substr(p.size());
    return std::nullopt;
  };
  if (auto v = after("command:")) return "the command `" + *v + "`";
  if (auto v = after("call:")) return "the call " + *v + ", exactly";
  if (auto v = after("rule:")) return "what the ask rule " + *v + " covers";
  if (auto v = after("read:")) return "reads in " + *v + " and below";
  if (auto v = after("webfetch:")) return "fetches from " + *v;
  if (auto v = after("network:")) return "commands' connections to " + *v;
  return key;
}

}  // namespace odin

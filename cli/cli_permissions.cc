// odin permissions: the approvals saved by an "always" answer
// (config/approval_store.h), listed and revoked. Listing shows every saved
// approval, this workspace's and every workspace's, numbered; `remove` takes
// a number or the key itself.

#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "base/terminal_text.h"
#include "cli/cli.h"
#include "config/approval_store.h"
#include "config/config_loader.h"
#include "workspace/workspace.h"

namespace odin {
namespace {

using nlohmann::json;

int Fail(const std::string& message) {
  std::cerr << "odin permissions: " << VisibleControls(message) << "\n";
  return kError;
}

json ApprovalJson(size_t number, const SavedApproval& a) {
  return {{"number", number},
          {"key", a.key},
          {"workspace", a.workspace.empty() ? json() : json(a.workspace)},
          {"saved_at_ms", a.saved_at_ms},
          {"allows", DescribeApprovalKey(a.key)}};
}

std::string Scope(const SavedApproval& a) { return a.workspace.empty() ? "every workspace" : a.workspace; }

}  // namespace

int RunPermissions(const GlobalFlags& g, const PermissionsFlags& f) {
  std::string path = ApprovalStore::DefaultPath(EnvironmentMap());
  if (path.empty()) return Fail("no config directory for saved approvals (set HOME or XDG_CONFIG_HOME)");
  ApprovalStore store(path);
  if (f.action == "remove") {
    if (f.key.empty()) return Fail("remove needs the number or the key of an approval (odin permissions list)");
    StatusOr<std::vector<SavedApproval>> removed = store.Remove(f.key);
    if (!removed.ok()) return Fail(removed.status().message());
    if (removed->empty()) return Fail("no saved approval is numbered or keyed '" + f.key + "'");
    json out = json::array();
    for (const SavedApproval& a : *removed) {
      out.push_back(ApprovalJson(0, a));
      if (!f.json) {
        printf("removed: %s (%s)\n", VisibleControls(DescribeApprovalKey(a.key)).c_str(),
               VisibleControls(Scope(a)).c_str());
      }
    }
    if (f.json) printf("%s\n", json({{"removed", out}}).dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    return 0;
  }
  StatusOr<std::vector<SavedApproval>> all = store.List();
  if (!all.ok()) return Fail(all.status().message());
  if (f.json) {
    json out = json::array();
    for (size_t i = 0; i < all->size(); ++i) out.push_back(ApprovalJson(i + 1, (*all)[i]));
    printf("%s\n",
           json({{"path", path}, {"approvals", out}}).dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    return 0;
  }
  if (all->empty()) {
    printf("no saved approvals (%s)\n", path.c_str());
    return 0;
  }
  StatusOr<Workspace> ws = FindWorkspace(g.dir);
  for (size_t i = 0; i < all->size(); ++i) {
    const SavedApproval& a = (*all)[i];
    bool here = a.workspace.empty() || (ws.ok() && ws->root == a.workspace);
    printf("%3zu. %s\n     %s%s\n", i + 1, VisibleControls(DescribeApprovalKey(a.key)).c_str(),
           VisibleControls(Scope(a)).c_str(), here ? "" : " (not this workspace)");
  }
  printf("(%s; odin permissions remove N revokes one)\n", path.c_str());
  return 0;
}

}  // namespace odin

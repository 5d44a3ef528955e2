// odin trust: the user's word that a workspace's odinconfig.json may do more
// than tighten (trust.h). What is trusted is shown, so the user sees what a
// repository asks for: the trusted-only settings with their values and the
// hash they are pinned to.

#include <cstdio>
#include <iostream>

#include "base/clock.h"
#include "base/file_util.h"
#include "cli/cli.h"
#include "config/config_loader.h"
#include "config/trust_store.h"
#include "workspace/workspace.h"

namespace odin {
namespace {

int Fail(const std::string& message) {
  std::cerr << "odin trust: " << message << "\n";
  return kError;
}

void PrintSettings(const LoadedConfig& l) {
  if (l.security.keys.empty()) {
    printf("  settings  none beyond what an untrusted workspace may set\n");
  }
  for (size_t i = 0; i < l.security.keys.size(); ++i) {
    printf("  %-8s  %s = %s\n", i == 0 ? "settings" : "", l.security.keys[i].c_str(), l.security.values[i].c_str());
  }
  printf("  sha256    %s\n", l.security.sha256.c_str());
}

}  // namespace

int RunTrust(const GlobalFlags& g, const TrustFlags& f) {
  StatusOr<Workspace> ws = FindWorkspace(g.dir);
  if (!ws.ok()) return Fail(ws.status().message());
  std::map<std::string, std::string> env = EnvironmentMap();
  std::string dir = UserConfigDir(env);
  if (dir.empty()) return Fail("no config directory for the trust store (set HOME or XDG_CONFIG_HOME)");
  TrustStore store(JoinPath(dir, "trusted.json"));

  if (f.revoke) {
    // Works whatever the workspace's file says, malformed or gone.
    StatusOr<bool> revoked = store.Revoke(ws->root);
    if (!revoked.ok()) return Fail(revoked.status().message());
    printf(*revoked ? "no longer trusted: %s\n" : "was not trusted: %s\n", ws->root.c_str());
    return 0;
  }
  // A malformed file is not trusted: the error names the file and the key.
  StatusOr<LoadedConfig> loaded = LoadConfig(*ws, env);
  if (!loaded.ok()) return Fail(loaded.status().message());
  if (loaded->trust == WorkspaceTrust::kNoConfig) {
    printf("nothing to trust: %s has no odinconfig.json\n", ws->root.c_str());
    return 0;
  }
  if (f.show) {
    printf("%s: %s\n", WorkspaceTrustName(loaded->trust), ws->root.c_str());
    PrintSettings(*loaded);
    return 0;
  }
  if (Status s = store.Trust(ws->root, loaded->security.sha256, RealClock::Get()->WallMillis()); !s.ok()) {
    return Fail(s.message());
  }
  printf("trusted: %s\n", ws->root.c_str());
  PrintSettings(*loaded);
  printf("  store     %s\n", store.path().c_str());
  return 0;
}

}  // namespace odin

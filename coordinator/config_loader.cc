#include "coordinator/config_loader.h"

#include <pwd.h>
#include <unistd.h>

#include <iostream>
#include <optional>

#include "base/file_util.h"
#include "coordinator/trust_store.h"

namespace odin {
namespace {

constexpr uint64_t kMaxConfigBytes = 1 << 20;

std::string Get(const std::map<std::string, std::string>& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

// The file's text, or nullopt if there is none. A FIFO or a device (a
// repository's symlink to /dev/zero) is an error, not a hang.
StatusOr<std::optional<std::string>> ReadConfigFile(const std::string& path) {
  if (!PathExists(path)) return std::optional<std::string>();
  ASSIGN_OR_RETURN(std::string text, ReadRegularFile(path, kMaxConfigBytes));
  return std::optional<std::string>(std::move(text));
}

std::string Joined(const std::vector<std::string>& keys) {
  std::string s;
  for (const std::string& k : keys) s += (s.empty() ? "" : ", ") + k;
  return s;
}

}  // namespace

const char* WorkspaceTrustName(WorkspaceTrust t) {
  switch (t) {
    case WorkspaceTrust::kNoConfig: return "no config";
    case WorkspaceTrust::kTrusted: return "trusted";
    case WorkspaceTrust::kUntrusted: return "untrusted";
    case WorkspaceTrust::kChanged: return "changed";
  }
  return "?";
}

std::string UserConfigDir(const std::map<std::string, std::string>& env) {
  std::string xdg = Get(env, "XDG_CONFIG_HOME");
  if (!xdg.empty() && xdg[0] == '/') return JoinPath(xdg, "odin");
  std::string home = Get(env, "HOME");
  if (home.empty() || home[0] != '/') {
    const passwd* pw = getpwuid(geteuid());
    home = pw != nullptr && pw->pw_dir != nullptr ? pw->pw_dir : "";
  }
  if (home.empty() || home[0] != '/') return "";
  return JoinPath(home, ".config/odin");
}

StatusOr<LoadedConfig> LoadConfig(const Workspace& ws, const std::map<std::string, std::string>& env) {
  LoadedConfig l;
  std::string dir = UserConfigDir(env);
  Config user;
  if (!dir.empty()) {
    l.user_config_path = JoinPath(dir, "odinconfig.json");
    l.trust_store_path = JoinPath(dir, "trusted.json");
    ASSIGN_OR_RETURN(std::optional<std::string> text, ReadConfigFile(l.user_config_path));
    if (text) {
      l.user_config_found = true;
      ASSIGN_OR_RETURN(user, ParseConfig(*text, l.user_config_path));
    }
  }
  ASSIGN_OR_RETURN(std::optional<std::string> text, ReadConfigFile(ws.config_path));
  if (!text) {
    l.config = user;
    return l;
  }
  // Every key is checked, whether it will apply or not.
  ASSIGN_OR_RETURN(Config whole, ParseConfig(*text, ws.config_path, user));
  // A repository's hook runs sandboxed, always: only the user's own config
  // may run one on the host.
  for (auto& [event, groups] : whole.hooks.events) {
    for (HookGroup& g : groups) {
      for (HookCommand& h : g.hooks) {
        if (h.source != ws.config_path) continue;
        h.from_workspace = true;
        if (!h.sandbox) {
          return Status::InvalidArgument(ws.config_path, std::string("hooks.") + HookEventName(event) +
                                                             ": \"sandbox\": false is for the user's own config; "
                                                             "a workspace's hooks always run sandboxed");
        }
      }
    }
  }
  l.security = TrustedOnlySettings(*text);
  std::optional<std::string> pinned;
  if (!l.trust_store_path.empty()) {
    StatusOr<std::optional<std::string>> found = TrustStore(l.trust_store_path).Find(ws.root);
    if (found.ok()) {
      pinned = *found;
    } else {
      l.trust_store_error = found.status().message();
      l.notices.push_back("trusting no workspace: " + l.trust_store_error);
    }
  }
  l.trust = !pinned                        ? WorkspaceTrust::kUntrusted
            : *pinned == l.security.sha256 ? WorkspaceTrust::kTrusted
                                           : WorkspaceTrust::kChanged;
  if (l.trust == WorkspaceTrust::kTrusted) {
    l.config = std::move(whole);
    return l;
  }
  UntrustedSplit split = SplitUntrusted(*text, user);
  ASSIGN_OR_RETURN(l.config, ParseConfig(split.applied_json, ws.config_path, user));
  l.ignored = std::move(split.ignored);
  if (!l.ignored.empty()) {
    l.notices.push_back(l.trust == WorkspaceTrust::kChanged
                            ? "untrusted workspace: its trusted settings changed since `odin trust`; ignoring " +
                                  Joined(l.ignored) + " in odinconfig.json (run `odin trust` to trust them)"
                            : "untrusted workspace: ignoring " + Joined(l.ignored) +
                                  " in odinconfig.json (run `odin trust` to trust it)");
  }
  return l;
}

void PrintConfigNotices(const LoadedConfig& loaded) {
  for (const std::string& n : loaded.notices) std::cerr << "odin: " << n << "\n";
}

}  // namespace odin

#pragma once
// TrustStore: the workspaces the user trusts, each pinned to the hash of its
// trusted-only settings (trust.h). It lives in the user's config directory,
// never in a workspace: $XDG_CONFIG_HOME/odin/trusted.json, default
// ~/.config/odin/trusted.json:
//
//   {"version": 1,
//    "workspaces": {"/abs/root": {"sha256": "<hex>", "trusted_at_ms": N}}}
//
// Writes take a lock (trusted.json.lock) around read, change and write, so
// two `odin trust` at once lose nothing, and replace the file atomically
// (0600, directory 0700). A store that does not exist trusts nothing; one that
// is malformed, not the user's or writable by others is an error naming it
// (the loader then trusts nothing).

#include <optional>
#include <string>

#include "base/status.h"

namespace odin {

class TrustStore {
 public:
  explicit TrustStore(std::string path) : path_(std::move(path)) {}

  const std::string& path() const { return path_; }

  // The hash root is trusted at, or nullopt if it is not trusted.
  StatusOr<std::optional<std::string>> Find(const std::string& root) const;
  // Trusts root at sha256 (replacing what it was trusted at before).
  Status Trust(const std::string& root, const std::string& sha256, int64_t now_ms);
  // Forgets root. Returns true iff it was trusted.
  StatusOr<bool> Revoke(const std::string& root);

 private:
  std::string path_;
};

}  // namespace odin

#include "config/trust_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <nlohmann/json.hpp>

#include "base/canonical_json.h"
#include "base/file_util.h"
#include "base/json_input.h"

namespace odin {
namespace {

using nlohmann::json;

constexpr uint64_t kMaxStoreBytes = 16 << 20;

// The store as JSON: {"version": 1, "workspaces": {...}}; empty if absent.
StatusOr<json> ReadStore(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return json({{"version", 1}, {"workspaces", json::object()}});
    return PosixError(path, errno);
  }
  // Whoever can write it decides what runs on this machine.
  if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
    return Status::PermissionDenied(path, "must be a regular file of yours that only you can write");
  }
  ASSIGN_OR_RETURN(std::string text, ReadRegularFile(path, kMaxStoreBytes));
  json store = ParseJson(text);
  if (store.is_discarded() || !store.is_object() || !store.contains("version") || store["version"] != 1 ||
      !store.contains("workspaces") || !store["workspaces"].is_object()) {
    return Status::Corruption(path, "not a trust store (expected {\"version\": 1, \"workspaces\": {...}})");
  }
  return store;
}

// Holds an exclusive lock on path + ".lock" while it lives.
class StoreLock {
 public:
  ~StoreLock() {
    if (fd_ >= 0) close(fd_);  // releases the lock
  }
  Status Acquire(const std::string& store_path) {
    RETURN_IF_ERROR(MakeDirs(DirName(store_path), 0700));
    std::string lock = store_path + ".lock";
    fd_ = open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd_ < 0) return PosixError(lock, errno);
    while (flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) return PosixError(lock, errno);
    }
    return Status::OK();
  }

 private:
  int fd_ = -1;
};

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
  StoreLock lock;
  RETURN_IF_ERROR(lock.Acquire(path_));
  ASSIGN_OR_RETURN(json store, ReadStore(path_));
  store["workspaces"][root] = {{"sha256", sha256}, {"trusted_at_ms", now_ms}};
  return WriteFileAtomic(path_, store.dump(2) + "\n");
}

StatusOr<bool> TrustStore::Revoke(const std::string& root) {
  StoreLock lock;
  RETURN_IF_ERROR(lock.Acquire(path_));
  ASSIGN_OR_RETURN(json store, ReadStore(path_));
  if (store["workspaces"].erase(root) == 0) return false;
  RETURN_IF_ERROR(WriteFileAtomic(path_, store.dump(2) + "\n"));
  return true;
}

}  // namespace odin

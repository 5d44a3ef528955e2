#include "pool/worker_transport.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/file_util.h"
#include "odin/v1/worker.pb.h"
#include "base/proc_info.h"

namespace odin {

namespace {

constexpr char kPrefix[] = "odin-sock";
constexpr char kOwnerFile[] = "owner";

// Whether the coordinator that made dir is still the process it was.
bool OwnerAlive(const std::string& dir) {
  StatusOr<std::string> owner = ReadFileToString(dir + "/" + kOwnerFile);
  if (!owner.ok()) return true;  // not ours to judge (or being made right now)
  pid_t pid = static_cast<pid_t>(atol(owner->c_str()));
  std::string started = owner->substr(owner->find(' ') == std::string::npos ? owner->size() : owner->find(' ') + 1);
  while (!started.empty() && started.back() == '\n') started.pop_back();
  if (pid <= 0) return true;
  if (kill(pid, 0) != 0 && errno == ESRCH) return false;
  std::string now = ProcessStartTime(pid);
  return now.empty() || now == started;
}

// Directories of earlier versions ("odin-XXXXXX" holding only w.sock, and no
// owner file): stale when nothing listens on the socket any more.
bool LegacyStale(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return false;
  bool only_socket = true, has_socket = false;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    if (n == "w.sock")
      has_socket = true;
    else
      only_socket = false;
  }
  closedir(d);
  if (!only_socket || !has_socket) return false;
  std::string path = dir + "/w.sock";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return false;
  memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool refused = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno == ECONNREFUSED;
  close(fd);
  return refused;
}

// Writes dir's owner file whole before it appears under its name (a sweep by
// another coordinator must never judge a half-written one), without the
// fsync of WriteFileAtomic: the directory is fresh and private, and lives
// in the temporary directory only as long as this process (~1-3 ms saved
// on every start).
Status WriteOwner(const std::string& dir, const std::string& text) {
  std::string tmp = dir + "/" + kOwnerFile + ".tmp", path = dir + "/" + kOwnerFile;
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return PosixError(tmp, errno);
  ssize_t n = write(fd, text.data(), text.size());
  bool ok = n == static_cast<ssize_t>(text.size());
  int err = n < 0 ? errno : EIO;
  if (close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    unlink(tmp.c_str());
    return PosixError(path, err);
  }
  return Status::OK();
}

}  // namespace

int ZmqWorkerTransport::SweepStale(const std::string& tmp_dir) {
  DIR* d = opendir(tmp_dir.c_str());
  if (d == nullptr) return 0;
  std::vector<std::string> stale;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    bool ours = name.compare(0, sizeof kPrefix - 1, kPrefix) == 0 && name.size() == sizeof kPrefix - 1 + 7;
    bool legacy = name.compare(0, 5, "odin-") == 0 && name.size() == 11;
    if (!ours && !legacy) continue;
    std::string dir = tmp_dir + "/" + name;
    struct stat st;
    if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) continue;
    if (ours ? !OwnerAlive(dir) : LegacyStale(dir)) stale.push_back(dir);
  }
  closedir(d);
  for (const std::string& dir : stale) RemoveTree(dir);
  return static_cast<int>(stale.size());
}

StatusOr<std::unique_ptr<ZmqWorkerTransport>> ZmqWorkerTransport::Create() {
  const char* tmp = getenv("TMPDIR");
  SweepStale(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp");
  // A short private path: ipc:// paths are limited to about 100 bytes, so the
  // sockets cannot live in a deep workspace.
  ASSIGN_OR_RETURN(std::string dir, MakeTempDir(kPrefix));
  std::string owner = std::to_string(getpid()) + " " + ProcessStartTime(getpid()) + "\n";
  Status wrote = WriteOwner(dir, owner);
  // A ROUTER with no endpoint yet: each worker gets its own (OpenEndpoint).
  StatusOr<std::unique_ptr<ZmqEndpoint>> router = ZmqEndpoint::CreateRouter();
  if (!wrote.ok() || !router.ok()) {
    RemoveTree(dir);
    return wrote.ok() ? router.status() : wrote;
  }
  return std::unique_ptr<ZmqWorkerTransport>(new ZmqWorkerTransport(dir, std::move(*router)));
}

ZmqWorkerTransport::~ZmqWorkerTransport() {
  router_.reset();
  RemoveTree(dir_);
}

void ZmqWorkerTransport::RemoveSocketDir() { RemoveTree(dir_); }

StatusOr<WorkerTransport::WorkerEndpoint> ZmqWorkerTransport::OpenEndpoint(int64_t owner_uid) {
  std::string path = dir_ + "/" + std::to_string(++next_socket_) + ".sock";
  std::string endpoint = "ipc://" + path;
  RETURN_IF_ERROR(router_->Bind(endpoint));
  // Only the worker's user may connect; root reaches it anyway.
  bool other_user = owner_uid >= 0 && owner_uid != geteuid();
  if ((other_user && chown(path.c_str(), static_cast<uid_t>(owner_uid), static_cast<gid_t>(-1)) != 0) ||
      chmod(path.c_str(), 0600) != 0) {
    Status s = PosixError("socket " + path, errno);
    router_->Unbind(endpoint);
    return s;
  }
  if (other_user && !opened_for_others_) {
    // Reachable to the worker's user, not listable: it knows its socket's name.
    if (chmod(dir_.c_str(), 0711) != 0) return PosixError("socket directory " + dir_, errno);
    opened_for_others_ = true;
  }
  return WorkerEndpoint{endpoint, path};
}

void ZmqWorkerTransport::CloseEndpoint(const std::string& endpoint) {
  router_->Unbind(endpoint);
  if (endpoint.compare(0, 6, "ipc://") == 0) unlink(endpoint.c_str() + 6);
}

Status ZmqWorkerTransport::Send(const std::string& worker_id, const v1::Envelope& env) {
  return router_->Send(worker_id, env.SerializeAsString());
}

Status ZmqWorkerTransport::Wait(Duration timeout, std::vector<PollFd>* fds) {
  StatusOr<bool> r = router_->Poll(timeout, fds);
  return r.status();
}

StatusOr<bool> ZmqWorkerTransport::Receive(std::string* worker_id, v1::Envelope* env) {
  std::string payload;
  ASSIGN_OR_RETURN(bool got, router_->TryReceive(worker_id, &payload));
  if (!got) return false;
  if (!env->ParseFromString(payload)) env->Clear();
  return true;
}

}  // namespace odin

#include "sandbox/cgroup.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <signal.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/file_util.h"

namespace odin {

namespace {

constexpr char kRoot[] = "/sys/fs/cgroup";
constexpr char kPrefix[] = "odin-sandbox-";

Status WriteValue(const std::string& path, const std::string& value) {
  FILE* f = fopen(path.c_str(), "w");
  if (f == nullptr) return PosixError(path, errno);
  bool ok = fputs(value.c_str(), f) >= 0;
  ok = (fclose(f) == 0) && ok;
  if (!ok) return PosixError(path, errno);
  return Status::OK();
}

// Our group in a hierarchy: the path after "N:controllers:" in
// /proc/self/cgroup whose controller list holds `controller` ("" for v2's).
std::string OwnGroup(const std::string& controller) {
  StatusOr<std::string> text = ReadFileToString("/proc/self/cgroup");
  if (!text.ok()) return "";
  size_t start = 0;
  while (start < text->size()) {
    size_t end = text->find('\n', start);
    if (end == std::string::npos) end = text->size();
    std::string line = text->substr(start, end - start);
    start = end + 1;
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string controllers = line.substr(a + 1, b - a - 1);
    bool match = controller.empty() ? controllers.empty() : ("," + controllers + ",").find("," + controller + ",") !=
                                                                 std::string::npos;
    if (match) return line.substr(b + 1);
  }
  return "";
}

// Removes the groups of launchers that were killed before they could: those
// named after a pid that is gone (and empty: rmdir refuses the others).
void SweepStale(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = readdir(d)) {
    if (strncmp(e->d_name, kPrefix, sizeof kPrefix - 1) != 0) continue;
    pid_t owner = static_cast<pid_t>(atol(e->d_name + sizeof kPrefix - 1));
    if (owner > 0 && kill(owner, 0) != 0 && errno == ESRCH) rmdir((dir + "/" + e->d_name).c_str());
  }
  closedir(d);
}

bool IsV2() { return PathExists(std::string(kRoot) + "/cgroup.controllers"); }

}  // namespace

StatusOr<std::unique_ptr<SandboxCgroup>> SandboxCgroup::Enter(const CgroupLimits& limits) {
  std::unique_ptr<SandboxCgroup> g(new SandboxCgroup());
  std::string pid = std::to_string(getpid());
  const std::string& name = pid;
  auto make = [&](const std::string& hierarchy, const std::string& own) -> StatusOr<std::string> {
    std::string parent = hierarchy + (own == "/" ? "" : own);
    if (!IsDirectory(parent)) return Status::FailedPrecondition("cgroup", parent + " is not there");
    SweepStale(parent);
    std::string dir = parent + "/" + kPrefix + name;
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return PosixError("cgroup: " + dir, errno);
    g->dirs_.push_back({dir, parent});
    return dir;
  };
  if (IsV2()) {
    std::string own = OwnGroup("");
    ASSIGN_OR_RETURN(std::string dir, make(kRoot, own.empty() ? "/" : own));
    if (limits.pids_max > 0) RETURN_IF_ERROR(WriteValue(dir + "/pids.max", std::to_string(limits.pids_max)));
    if (limits.memory_max_bytes > 0) {
      RETURN_IF_ERROR(WriteValue(dir + "/memory.max", std::to_string(limits.memory_max_bytes)));
    }
    RETURN_IF_ERROR(WriteValue(dir + "/cgroup.procs", pid));
    g->description_ = "cgroup v2";
  } else {
    std::vector<std::string> used;
    if (limits.pids_max > 0) {
      std::string own = OwnGroup("pids");
      if (own.empty()) return Status::FailedPrecondition("cgroup", "no pids controller (cgroup v1)");
      ASSIGN_OR_RETURN(std::string dir, make(std::string(kRoot) + "/pids", own));
      RETURN_IF_ERROR(WriteValue(dir + "/pids.max", std::to_string(limits.pids_max)));
      RETURN_IF_ERROR(WriteValue(dir + "/cgroup.procs", pid));
      used.push_back("pids");
    }
    if (limits.memory_max_bytes > 0) {
      std::string own = OwnGroup("memory");
      if (own.empty()) return Status::FailedPrecondition("cgroup", "no memory controller (cgroup v1)");
      ASSIGN_OR_RETURN(std::string dir, make(std::string(kRoot) + "/memory", own));
      RETURN_IF_ERROR(WriteValue(dir + "/memory.limit_in_bytes", std::to_string(limits.memory_max_bytes)));
      RETURN_IF_ERROR(WriteValue(dir + "/cgroup.procs", pid));
      used.push_back("memory");
    }
    std::string list;
    for (const std::string& u : used) list += (list.empty() ? "" : ", ") + u;
    g->description_ = "cgroup v1 (" + list + ")";
  }
  return g;
}

Status SandboxCgroup::Probe(std::string* how) {
  CgroupLimits probe{1 << 20, uint64_t{1} << 50};
  StatusOr<std::unique_ptr<SandboxCgroup>> g = Enter(probe);
  if (!g.ok()) return g.status();
  *how = (*g)->description();
  (*g)->Leave();
  return Status::OK();
}

void SandboxCgroup::Leave() {
  if (left_) return;
  left_ = true;
  std::string pid = std::to_string(getpid());
  for (const Dir& d : dirs_) {
    (void)WriteValue(d.parent + "/cgroup.procs", pid);
    // The processes inside are gone (or going): a few tries.
    for (int i = 0; i < 50 && rmdir(d.path.c_str()) != 0 && errno == EBUSY; ++i) usleep(2000);
  }
}

SandboxCgroup::~SandboxCgroup() { Leave(); }

}  // namespace odin

#include "sandbox/cgroup.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>
#include <vector>

#include "base/file_util.h"

namespace odin {

namespace {

constexpr char kPrefix[] = "odin-sandbox-";

Status WriteValue(const std::string& path, const std::string& value) {
  FILE* f = fopen(path.c_str(), "w");
  if (f == nullptr) return PosixError(path, errno);
  bool ok = fputs(value.c_str(), f) >= 0;
  ok = (fclose(f) == 0) && ok;
  if (!ok) return PosixError(path, errno);
  return Status::OK();
}

std::string ReadValue(const std::string& path) {
  StatusOr<std::string> text = ReadFileToString(path);
  return text.ok() ? *text : "";
}

std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Our group in a hierarchy: the path after "N:controllers:" in
// /proc/self/cgroup whose controller list holds `controller` ("" for v2's).
std::string OwnGroup(const std::string& self_cgroup, const std::string& controller) {
  std::istringstream in(self_cgroup);
  std::string line;
  while (std::getline(in, line)) {
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string controllers = line.substr(a + 1, b - a - 1);
    bool match = controller.empty() ? controllers.empty() && line.compare(0, a, "0") == 0
                                    : ("," + controllers + ",").find("," + controller + ",") != std::string::npos;
    if (match) return line.substr(b + 1);
  }
  return "";
}

std::string Join(const std::string& root, const std::string& group) {
  return group == "/" || group.empty() ? root : root + group;
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

std::string ListOf(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

CgroupHost Resolve(CgroupHost host) {
  if (host.self_cgroup.empty()) host.self_cgroup = ReadValue("/proc/self/cgroup");
  if (host.pid == 0) host.pid = getpid();
  if (host.uid < 0) host.uid = geteuid();
  return host;
}

}  // namespace

CgroupHost CgroupHost::Real() { return Resolve(CgroupHost{}); }

bool IsCgroupV2(const std::string& root) { return PathExists(root + "/cgroup.controllers"); }

CgroupV2Plan PlanCgroupV2(const CgroupHost& given, const CgroupLimits& limits) {
  CgroupHost host = Resolve(given);
  CgroupV2Plan plan;
  if (limits.pids_max > 0) plan.controllers.push_back("pids");
  if (limits.memory_max_bytes > 0) plan.controllers.push_back("memory");
  auto fail = [&](std::string why) {
    plan.possible = false;
    plan.reason = std::move(why);
    return plan;
  };
  if (plan.controllers.empty()) return fail("no limits asked for");
  if (!IsCgroupV2(host.root)) return fail("no cgroup v2 hierarchy at " + host.root);
  std::string own = OwnGroup(host.self_cgroup, "");
  if (own.empty()) return fail("this process is in no cgroup v2 group (/proc/self/cgroup)");
  std::string group = Join(host.root, own);
  auto has_all = [&](const std::string& file) {
    std::vector<std::string> have = Words(ReadValue(file));
    return std::all_of(plan.controllers.begin(), plan.controllers.end(),
                       [&](const std::string& c) { return Contains(have, c); });
  };
  std::string wanted = ListOf(plan.controllers);
  // 1. Already delegated below our group (the root group, which may hold
  //    processes and delegate at once).
  if (has_all(group + "/cgroup.subtree_control")) {
    plan.possible = true;
    plan.parent = group;
    plan.description = "cgroup v2 (" + wanted + ") below " + own;
    return plan;
  }
  // 2. Ours to delegate, and we are alone in it: move into a leaf first.
  bool available = has_all(group + "/cgroup.controllers");
  bool writable = access((group + "/cgroup.subtree_control").c_str(), W_OK) == 0 && access(group.c_str(), W_OK) == 0;
  std::vector<std::string> procs = Words(ReadValue(group + "/cgroup.procs"));
  procs.erase(std::remove(procs.begin(), procs.end(), std::to_string(host.pid)), procs.end());
  std::string why;
  if (available && writable && procs.empty()) {
    plan.possible = true;
    plan.parent = group;
    plan.move_self_to = group + "/odin-leaf-" + std::to_string(host.pid);
    plan.enable = true;
    plan.description = "cgroup v2 (" + wanted + ") below " + own + " (odin moves into a leaf of it)";
    return plan;
  }
  if (!available) {
    why = own + " has not been delegated " + wanted;
  } else if (!writable) {
    why = own + " is not writable by uid " + std::to_string(host.uid);
  } else {
    why = own + " holds " + std::to_string(procs.size()) +
          " other process(es), so its controllers cannot be delegated (no internal processes in cgroup v2)";
  }
  // 3. Root: a group of Odin's own at the top, where the controllers are.
  if (host.uid == 0 && has_all(host.root + "/cgroup.subtree_control")) {
    plan.possible = true;
    plan.parent = host.root + "/odin";
    plan.make_parent = plan.parent;
    plan.enable = true;
    plan.description = "cgroup v2 (" + wanted + ") below /odin (" + why + ")";
    return plan;
  }
  return fail(why +
              "; run odin in a group of its own with the controllers delegated, e.g. `systemd-run --user "
              "--scope -p Delegate=yes odin ...`");
}

Status ApplyCgroupV2Plan(const CgroupV2Plan& plan, const CgroupHost& given) {
  CgroupHost host = Resolve(given);
  if (!plan.possible) return Status::FailedPrecondition("cgroup", plan.reason);
  if (!plan.make_parent.empty() && mkdir(plan.make_parent.c_str(), 0755) != 0 && errno != EEXIST) {
    return PosixError("cgroup: " + plan.make_parent, errno);
  }
  if (!plan.move_self_to.empty()) {
    if (mkdir(plan.move_self_to.c_str(), 0755) != 0 && errno != EEXIST) {
      return PosixError("cgroup: " + plan.move_self_to, errno);
    }
    RETURN_IF_ERROR(WriteValue(plan.move_self_to + "/cgroup.procs", std::to_string(host.pid)));
  }
  if (plan.enable) {
    std::string enable;
    for (const std::string& c : plan.controllers) enable += (enable.empty() ? "+" : " +") + c;
    RETURN_IF_ERROR(WriteValue(plan.parent + "/cgroup.subtree_control", enable));
  }
  return Status::OK();
}

StatusOr<std::unique_ptr<SandboxCgroup>> SandboxCgroup::Enter(const CgroupLimits& limits, const std::string& parent,
                                                              const CgroupHost& given) {
  CgroupHost host = Resolve(given);
  ASSIGN_OR_RETURN(std::unique_ptr<SandboxCgroup> g, Create(limits, parent, host));
  RETURN_IF_ERROR(g->Add(host.pid));  // else the group goes with g
  return g;
}

StatusOr<std::unique_ptr<SandboxCgroup>> SandboxCgroup::Create(const CgroupLimits& limits, const std::string& parent,
                                                               const CgroupHost& given) {
  CgroupHost host = Resolve(given);
  std::unique_ptr<SandboxCgroup> g(new SandboxCgroup());
  g->pid_ = host.pid;
  std::string pid = std::to_string(host.pid);
  // Makes parent/odin-sandbox-<pid> and remembers where to go back to.
  auto make = [&](const std::string& under, const std::string& back) -> StatusOr<std::string> {
    if (!IsDirectory(under)) return Status::FailedPrecondition("cgroup", under + " is not there");
    SweepStale(under);
    std::string dir = under + "/" + kPrefix + pid;
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return PosixError("cgroup: " + dir, errno);
    g->dirs_.push_back({dir, back});
    return dir;
  };
  if (IsCgroupV2(host.root)) {
    std::string own = OwnGroup(host.self_cgroup, "");
    std::string back = Join(host.root, own);
    ASSIGN_OR_RETURN(std::string dir, make(parent.empty() ? back : parent, back));
    if (limits.pids_max > 0) {
      Status s = WriteValue(dir + "/pids.max", std::to_string(limits.pids_max));
      if (!s.ok()) return Status::FailedPrecondition("cgroup v2", "pids not delegated here: " + s.message());
    }
    if (limits.memory_max_bytes > 0) {
      Status s = WriteValue(dir + "/memory.max", std::to_string(limits.memory_max_bytes));
      if (!s.ok()) return Status::FailedPrecondition("cgroup v2", "memory not delegated here: " + s.message());
    }
    g->description_ = "cgroup v2";
    return g;
  }
  std::vector<std::string> used;
  if (limits.pids_max > 0) {
    std::string own = OwnGroup(host.self_cgroup, "pids");
    if (own.empty()) return Status::FailedPrecondition("cgroup", "no pids controller (cgroup v1)");
    std::string back = Join(host.root + "/pids", own);
    ASSIGN_OR_RETURN(std::string dir, make(back, back));
    RETURN_IF_ERROR(WriteValue(dir + "/pids.max", std::to_string(limits.pids_max)));
    used.push_back("pids");
  }
  if (limits.memory_max_bytes > 0) {
    std::string own = OwnGroup(host.self_cgroup, "memory");
    if (own.empty()) return Status::FailedPrecondition("cgroup", "no memory controller (cgroup v1)");
    std::string back = Join(host.root + "/memory", own);
    ASSIGN_OR_RETURN(std::string dir, make(back, back));
    RETURN_IF_ERROR(WriteValue(dir + "/memory.limit_in_bytes", std::to_string(limits.memory_max_bytes)));
    used.push_back("memory");
  }
  g->description_ = "cgroup v1 (" + ListOf(used) + ")";
  return g;
}

Status SandboxCgroup::Probe(std::string* how) {
  CgroupLimits probe{1 << 20, uint64_t{1} << 50};
  CgroupHost host = CgroupHost::Real();
  if (IsCgroupV2(host.root)) {
    // What the coordinator would prepare; nothing is moved to find out.
    CgroupV2Plan plan = PlanCgroupV2(host, probe);
    if (!plan.possible) return Status::FailedPrecondition("cgroup v2", plan.reason);
    *how = plan.description;
    return Status::OK();
  }
  StatusOr<std::unique_ptr<SandboxCgroup>> g = Enter(probe, "", host);
  if (!g.ok()) return g.status();
  *how = (*g)->description();
  (*g)->Leave();
  return Status::OK();
}

Status SandboxCgroup::Add(pid_t pid) {
  for (const Dir& d : dirs_) RETURN_IF_ERROR(WriteValue(d.path + "/cgroup.procs", std::to_string(pid)));
  if (pid == pid_) self_added_ = true;
  return Status::OK();
}

void SandboxCgroup::MoveBack() {
  if (!self_added_) return;
  self_added_ = false;
  std::string pid = std::to_string(pid_);
  for (const Dir& d : dirs_) (void)WriteValue(d.back + "/cgroup.procs", pid);
}

void SandboxCgroup::Leave() {
  if (left_) return;
  left_ = true;
  MoveBack();
  // The processes inside are gone (or going): the kernel unlinks a task that
  // was reaped from its group a little later, usually within 1-2 ms (cgroup
  // v1 has no event to wait for). Short tries, 100 ms at most in all.
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  for (const Dir& d : dirs_) {
    while (rmdir(d.path.c_str()) != 0 && errno == EBUSY && std::chrono::steady_clock::now() < until) usleep(200);
  }
}

SandboxCgroup::~SandboxCgroup() { Leave(); }

}  // namespace odin

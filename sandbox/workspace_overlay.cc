#include "sandbox/workspace_overlay.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_util.h"
#include "workspace/workspace_files.h"
#include "sandbox/read_only_binds.h"
#include "sandbox/seccomp_filter.h"

namespace odin {

namespace {

// Writes text to a /proc file; 0 or an errno. System calls only.
int WriteProc(const char* path, const std::string& text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  ssize_t n = write(fd, text.data(), text.size());
  int err = n == static_cast<ssize_t>(text.size()) ? 0 : (n < 0 ? errno : EIO);
  close(fd);
  return err;
}

}  // namespace

bool ReadOnlyViewKeepsMasks(const std::string& workspace, const std::string& mounts) {
  const std::string state = workspace + "/.odin";
  size_t start = 0;
  while (start < mounts.size()) {
    size_t end = mounts.find('\n', start);
    if (end == std::string::npos) end = mounts.size();
    std::string_view line(mounts.data() + start, end - start);
    start = end + 1;
    if (line.starts_with("mask ") && line.substr(5) != state && PathIsBelow(line.substr(5), workspace)) {
      return false;
    }
  }
  return true;
}

bool ValidOverlayId(const std::string& id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  }
  return true;
}

std::string OverlayMountList(const std::string& workspace, const std::vector<std::string>& writable,
                             const std::vector<std::string>& readonly, const std::vector<std::string>& masked,
                             const std::vector<std::string>& hidden) {
  std::string list;
  auto add = [&](const char* kind, const std::vector<std::string>& paths) {
    for (const std::string& p : paths) {
      if (PathIsBelow(p, workspace) && p.find('\n') == std::string::npos) list += std::string(kind) + " " + p + "\n";
    }
  };
  add("rw", writable);
  add("ro", readonly);
  add("mask", masked);
  add("mask", hidden);
  return list;
}

namespace {

// The plan's user namespaces' maps and the sandbox's mounts inside the
// workspace (mounts: ODIN_OVERLAY's value), as both an overlay and the
// read-only view need them.
void MapIdsAndMounts(const std::string& workspace, const std::string& mounts, WorkspaceOverlayPlan* out) {
  WorkspaceOverlayPlan& plan = *out;
  plan.lower = std::string(kOverlayMountDir) + "/lower";
  // The command runs as the sandbox's root where the worker stands in for
  // root (kOverlayRootStandIn), else as the worker's own ids.
  uid_t uid = getuid(), gid = getgid();
  std::string inner_uid = uid == kOverlayRootStandIn ? "0" : std::to_string(uid);
  std::string inner_gid = gid == kOverlayRootStandIn ? "0" : std::to_string(gid);
  plan.uid_map = "0 " + std::to_string(uid) + " 1\n";
  plan.gid_map = "0 " + std::to_string(gid) + " 1\n";
  plan.inner_uid_map = inner_uid + " 0 1\n";
  plan.inner_gid_map = inner_gid + " 0 1\n";
  size_t start = 0;
  while (start < mounts.size()) {
    size_t end = mounts.find('\n', start);
    if (end == std::string::npos) end = mounts.size();
    std::string line = mounts.substr(start, end - start);
    start = end + 1;
    size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    std::string kind = line.substr(0, space), p = line.substr(space + 1);
    if (!PathIsBelow(p, workspace)) continue;
    struct stat st;
    // Only what the sandbox mounted there, as it shows now (a mask: an
    // empty directory, or /dev/null).
    if (lstat(p.c_str(), &st) != 0) {
      if (kind == "mask") plan.absent_masks.push_back(p);
      continue;
    }
    if (kind == "rw") {
      plan.rw_binds.push_back(p);
    } else if (kind == "ro") {
      plan.ro_binds.push_back(p);
    } else if (kind == "mask") {
      (S_ISDIR(st.st_mode) ? plan.mask_dirs : plan.mask_files).push_back(p);
    }
  }
}

}  // namespace

StatusOr<WorkspaceOverlayPlan> PlanWorkspaceOverlay(const std::string& workspace, const std::string& id,
                                                    const std::string& mounts) {
  if (!ValidOverlayId(id)) return Status::InvalidArgument("overlay", "an execution id of letters, digits, _ and -");
  const std::string base = std::string(kOverlayMountDir) + "/upper/" + id;
  WorkspaceOverlayPlan plan;
  plan.workspace = workspace;
  plan.upper = base + "/u";
  plan.work = base + "/w";
  if (mkdir(base.c_str(), 0700) != 0) return PosixError("overlay: mkdir " + base, errno);
  // Before anything goes in it: a sweep that locked it first removes it.
  StatusOr<UniqueFd> lock = LockOverlayDir(base, /*exclusive=*/false);
  if (!lock.ok()) {
    rmdir(base.c_str());  // empty (a sweep that holds it may have removed it already)
    return lock.status();
  }
  plan.lock = std::move(*lock);
  if (mkdir(plan.upper.c_str(), 0755) != 0 || mkdir(plan.work.c_str(), 0700) != 0) {
    int err = errno;
    RemoveTree(base);
    return PosixError("overlay: mkdir in " + base, err);
  }
  // The paths are Odin's own (a fixed prefix and a checked id): nothing in
  // them needs escaping for the mount's options. volatile: otherwise the
  // overlay's unmount, as the command's last process exits, syncs the whole
  // file system the workspace is on, which another process writing to it
  // makes tens of milliseconds. The price: a command's fsync does not wait
  // for the disk; its files get there by the kernel's writeback
  // (docs/validation.md).
  plan.mount_data = std::string("lowerdir=") + kOverlayMountDir + "/lower,upperdir=" + plan.upper +
                    ",workdir=" + plan.work + ",userxattr,volatile";
  MapIdsAndMounts(workspace, mounts, &plan);
  return plan;
}

namespace {

// Runs fn(arg) in a child that borrows our memory until it exits (clone
// with CLONE_VM | CLONE_VFORK, and flags), every signal blocked across it
// as Spawn does, so none of our handlers runs in it. fn makes system calls
// only and returns 0 or an errno; what names the errors.
Status RunOnOurMemory(int (*fn)(void*), void* arg, int flags, const char* what) {
  // Its stack, with a page below it that faults rather than letting an
  // overflow write into whatever was mapped there.
  constexpr size_t kGuardBytes = 4096, kStackBytes = 64 * 1024;
  void* map = mmap(nullptr, kGuardBytes + kStackBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (map == MAP_FAILED) return PosixError(std::string(what) + ": mmap", errno);
  char* stack = static_cast<char*>(map) + kGuardBytes;
  if (mprotect(stack, kStackBytes, PROT_READ | PROT_WRITE) != 0) {
    int err = errno;
    munmap(map, kGuardBytes + kStackBytes);
    return PosixError(std::string(what) + ": mprotect", err);
  }
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  pid_t pid = clone(fn, stack + kStackBytes, CLONE_VM | CLONE_VFORK | flags | SIGCHLD, arg);
  int clone_errno = errno;
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  int status = 0;
  pid_t waited = -1;
  int wait_errno = 0;
  if (pid > 0) {
    do {
      waited = waitpid(pid, &status, 0);
    } while (waited < 0 && errno == EINTR);
    wait_errno = errno;
  }
  munmap(map, kGuardBytes + kStackBytes);
  if (pid < 0) return PosixError(std::string(what) + ": clone", clone_errno);
  // (Someone else reaping it would leave us no status to trust.)
  if (waited != pid) return PosixError(std::string(what) + ": waitpid", wait_errno);
  if (!WIFEXITED(status)) return Status::Internal(std::string(what) + ": the child ended by a signal");
  if (int err = WEXITSTATUS(status); err != 0) return PosixError(what, err);
  return Status::OK();
}

}  // namespace

StatusOr<UniqueFd> LockOverlayDir(const std::string& dir, bool exclusive) {
  UniqueFd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return PosixError("overlay: open " + dir, errno);
  if (flock(fd.get(), (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
    return PosixError("overlay: lock " + dir, errno);
  }
  return fd;
}

Status ProbeWorkspaceOverlay(const std::string& workspace, const std::string& mounts) {
  // Workers in pid namespaces of their own share the directory: the id is
  // random, not a pid.
  uint64_t nonce = 0;
  if (getrandom(&nonce, sizeof nonce, 0) != sizeof nonce) return PosixError("overlay probe: getrandom", errno);
  char id[32];
  snprintf(id, sizeof id, "probe-%016llx", static_cast<unsigned long long>(nonce));
  StatusOr<WorkspaceOverlayPlan> plan = PlanWorkspaceOverlay(workspace, id, mounts);
  if (!plan.ok()) return plan.status();
  Status probed = RunOnOurMemory([](void* p) { return EnterWorkspaceOverlay(p) & 0xff; }, &*plan, 0, "overlay probe");
  RemoveWorkspaceOverlayDirs(DirName(plan->upper));
  return probed;
}

void RemoveWorkspaceOverlayDirs(const std::string& dir) {
  // Through the safe file layer: nothing below is followed, not even to
  // open up what overlayfs left mode 000 (work, incompat/volatile, a
  // copy-up cut short), so a symlink planted there (.odin/overlay/next-x/w
  // -> /some/dir) is removed, never chmodded through (security review 3,
  // finding 5).
  StatusOr<WorkspaceFiles> parent = WorkspaceFiles::Open(DirName(dir));
  if (parent.ok()) (void)parent->RemoveTree(dir.substr(dir.rfind('/') + 1));
}

int SweepWorkspaceOverlayDirs(const std::string& root) {
  std::vector<std::string> names;
  DIR* d = opendir(root.c_str());
  if (d == nullptr) return 0;
  while (dirent* e = readdir(d)) {
    std::string_view name = e->d_name;
    if (name.starts_with("next-") || name.starts_with("probe-")) names.emplace_back(name);
  }
  closedir(d);
  int removed = 0;
  for (const std::string& name : names) {
    std::string dir = root + "/" + name;
    // What holds it shared is alive. Removed while locked.
    if (StatusOr<UniqueFd> lock = LockOverlayDir(dir, /*exclusive=*/true); lock.ok()) {
      RemoveWorkspaceOverlayDirs(dir);
      ++removed;
    }
  }
  return removed;
}

int SweepUnheldDirs(const std::string& dir, std::string_view prefix) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return 0;
  while (dirent* e = readdir(d)) {
    struct stat st;
    if (std::string_view(e->d_name).starts_with(prefix) &&
        fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
        st.st_mtime < time(nullptr) - 60) {  // not one made a moment ago, not yet held
      names.emplace_back(e->d_name);
    }
  }
  closedir(d);
  int removed = 0;
  for (const std::string& name : names) {
    std::string path = JoinPath(dir, name);
    if (StatusOr<UniqueFd> lock = LockOverlayDir(path, /*exclusive=*/true); lock.ok()) {
      RemoveWorkspaceOverlayDirs(path);
      ++removed;
    }
  }
  return removed;
}

int DropAllCapabilitiesRaw() {
  for (int cap = 0; cap <= 63; ++cap) {
    if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) < 0) break;  // past the kernel's last capability
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) return errno;
  }
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capset, &header, data) != 0) return errno;
  return 0;
}

int InstallNoMountFilter() {
  constexpr uint32_t kNamespaceFlags =
      CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET;
  constexpr uint32_t kDeny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
#define ODIN_DENY(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, kDeny)
  sock_filter prog[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      // A foreign ABI: the worker's filter kills those already.
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      ODIN_DENY(__NR_mount),
      ODIN_DENY(__NR_umount2),
      ODIN_DENY(__NR_unshare),
      ODIN_DENY(__NR_setns),
      ODIN_DENY(__NR_pivot_root),
      ODIN_DENY(__NR_chroot),
      ODIN_DENY(__NR_open_tree),
      ODIN_DENY(__NR_move_mount),
      ODIN_DENY(__NR_fsopen),
      ODIN_DENY(__NR_fsconfig),
      ODIN_DENY(__NR_fsmount),
      ODIN_DENY(__NR_fspick),
      ODIN_DENY(__NR_mount_setattr),
      // clone with a namespace flag (clone3 answers ENOSYS in the worker's
      // filter already, so the C library uses clone).
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, kNamespaceFlags, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, kDeny),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
#undef ODIN_DENY
  sock_fprog fprog{static_cast<unsigned short>(sizeof prog / sizeof prog[0]), prog};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0) return errno;
  return 0;
}

int DenyMountsBeforeExec(const void* /*unused*/) { return InstallNoMountFilter(); }

namespace {

// Steps 1 to 3: the user and mount namespace, the overlay, the sandbox's
// mounts again on top. System calls only.
int MountWorkspaceOverlay(const WorkspaceOverlayPlan& p) {
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return errno;
  if (int err = WriteProc("/proc/self/setgroups", "deny"); err != 0) return err;
  if (int err = WriteProc("/proc/self/uid_map", p.uid_map); err != 0) return err;
  if (int err = WriteProc("/proc/self/gid_map", p.gid_map); err != 0) return err;
  // Nothing mounted here may travel back to the worker's namespace.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return errno;
  if (p.read_only_view) {
    // The workspace bound plainly and read-only (by the sandbox, a lock the
    // user namespace keeps) over its own path. Everything inside it is
    // read-only with it: .git and the protected files need no binds of
    // their own, only the masks do.
    if (mount(p.lower.c_str(), p.workspace.c_str(), nullptr, MS_BIND, nullptr) != 0) return errno;
    struct statfs fs;
    if (statfs(p.workspace.c_str(), &fs) != 0) return errno;
    if ((fs.f_flags & ST_RDONLY) == 0) return EROFS;  // not read-only: no view at all
  } else {
    if (mount("overlay", p.workspace.c_str(), "overlay", MS_NOSUID | MS_NODEV, p.mount_data.c_str()) != 0) {
      return errno;
    }
  }
  // (The vectors are only read: a child on our memory allocates nothing.)
  for (const std::string& b : p.rw_binds) {
    if (mount(b.c_str(), b.c_str(), nullptr, MS_BIND, nullptr) != 0) return errno;
  }
  for (const std::string& b : p.ro_binds) {
    if (mount(b.c_str(), b.c_str(), nullptr, MS_BIND, nullptr) != 0) return errno;
    if (mount(nullptr, b.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) != 0) return errno;
  }
  for (const std::string& d : p.mask_dirs) {
    if (mount("tmpfs", d.c_str(), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555") != 0) {
      return errno;
    }
  }
  for (const std::string& f : p.mask_files) {
    if (mount("/dev/null", f.c_str(), nullptr, MS_BIND, nullptr) != 0) return errno;
    // Read-only (the sandbox's /dev/null is already, where odin runs as
    // root), repeating the flags the user namespace locks.
    if (int err = RemountReadOnly(f.c_str()); err != 0) return err;
  }
  if (mount("tmpfs", p.hide.c_str(), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555") != 0) {
    return errno;
  }
  return 0;
}

// Step 4: the second user namespace, with the worker's own ids.
int EnterInnerUserNamespace(const WorkspaceOverlayPlan& p) {
  if (unshare(CLONE_NEWUSER) != 0) return errno;
  if (int err = WriteProc("/proc/self/setgroups", "deny"); err != 0) return err;
  if (int err = WriteProc("/proc/self/uid_map", p.inner_uid_map); err != 0) return err;
  return WriteProc("/proc/self/gid_map", p.inner_gid_map);
}

// Step 5.
int SealCommand() {
  if (int err = InstallNoMountFilter(); err != 0) return err;
  return DropAllCapabilitiesRaw();
}

}  // namespace

int EnterWorkspaceOverlay(const void* arg) {
  const auto& p = *static_cast<const WorkspaceOverlayPlan*>(arg);
  if (int err = MountWorkspaceOverlay(p); err != 0) return err;
  if (int err = EnterInnerUserNamespace(p); err != 0) return err;
  return SealCommand();
}

namespace {

struct PrepareArgs {
  const WorkspaceOverlayPlan* plan;
  int outer_user = -1, mount = -1, inner_user = -1;
};

// The preparing child: it shares our memory and fd table (CLONE_VM,
// CLONE_FILES), so the namespaces' fds it opens are ours once it exits.
int PrepareChild(void* arg) {
  auto* a = static_cast<PrepareArgs*>(arg);
  if (int err = MountWorkspaceOverlay(*a->plan); err != 0) return err;
  a->outer_user = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
  a->mount = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
  if (a->outer_user < 0 || a->mount < 0) return errno;
  if (int err = EnterInnerUserNamespace(*a->plan); err != 0) return err;
  a->inner_user = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
  if (a->inner_user < 0) return errno;
  return 0;
}

}  // namespace

StatusOr<std::unique_ptr<PreparedOverlay>> PreparedOverlay::Make(const std::string& workspace,
                                                                 const std::string& mounts) {
  // Workers in pid namespaces of their own share the directory: the name
  // is random, not a pid.
  uint64_t nonce = 0;
  if (getrandom(&nonce, sizeof nonce, 0) != sizeof nonce) return PosixError("overlay: getrandom", errno);
  char id[32];
  snprintf(id, sizeof id, "next-%016llx", static_cast<unsigned long long>(nonce));
  ASSIGN_OR_RETURN(WorkspaceOverlayPlan plan, PlanWorkspaceOverlay(workspace, id, mounts));
  std::unique_ptr<PreparedOverlay> prepared(new PreparedOverlay);
  prepared->lock_ = std::move(plan.lock);
  prepared->dir_ = DirName(plan.upper);
  prepared->Pin(plan);
  RETURN_IF_ERROR(prepared->Enter(plan));
  return prepared;
}

StatusOr<std::unique_ptr<PreparedOverlay>> PreparedOverlay::MakeReadOnlyView(const std::string& workspace,
                                                                             const std::string& mounts) {
  WorkspaceOverlayPlan plan;
  plan.workspace = workspace;
  plan.read_only_view = true;
  MapIdsAndMounts(workspace, mounts, &plan);
  plan.rw_binds.clear();
  plan.ro_binds.clear();
  std::unique_ptr<PreparedOverlay> view(new PreparedOverlay);
  view->Pin(plan);
  RETURN_IF_ERROR(view->Enter(plan));
  return view;
}

void PreparedOverlay::Pin(const WorkspaceOverlayPlan& plan) {
  // The directories above every mount made again on top, and the bound
  // files: mounting looks those up, so the namespace holds them as they are
  // now, and one replaced before a command joins (a command before it ran
  // `rm -rf sub; mkdir sub`) would show it the old one. The view's masks
  // sit on the workspace's own files, not on an overlay's: one replaced
  // takes its mask away (the kernel detaches a mount whose place is
  // unlinked), so there the masked paths are pinned too. And a masked path
  // not there yet has no mask: its absence is pinned.
  std::set<std::string> pinned;  // relative: "/sub/.env"
  for (const std::vector<std::string>* paths : {&plan.rw_binds, &plan.ro_binds, &plan.mask_dirs, &plan.mask_files}) {
    bool mask = paths == &plan.mask_dirs || paths == &plan.mask_files;
    for (const std::string& path : *paths) {
      std::string rel = path.substr(plan.workspace.size());
      if (!mask || plan.read_only_view) pinned.insert(rel);
      for (size_t slash = rel.find('/', 1); slash != std::string::npos; slash = rel.find('/', slash + 1)) {
        pinned.insert(rel.substr(0, slash));
      }
    }
  }
  for (const std::string& path : plan.absent_masks) pinned.insert(path.substr(plan.workspace.size()));
  for (const std::string& rel : pinned) pinned_.push_back(Look(plan.lower + rel));
}

Status PreparedOverlay::Enter(const WorkspaceOverlayPlan& plan) {
  PrepareArgs args{&plan};
  // CLONE_FILES: the fds it opens are ours.
  Status made = RunOnOurMemory(PrepareChild, &args, CLONE_FILES, "overlay");
  // Whatever it opened is ours to close, also on failure.
  outer_user_ = args.outer_user;
  mount_ = args.mount;
  inner_user_ = args.inner_user;
  if (!made.ok()) return made;
  if (args.outer_user < 0 || args.mount < 0 || args.inner_user < 0) {
    return Status::Internal("overlay: the preparing child left no namespaces");
  }
  return Status::OK();
}

PreparedOverlay::~PreparedOverlay() {
  for (int fd : {outer_user_, mount_, inner_user_}) {
    if (fd >= 0) close(fd);
  }
  // The overlay went with its mount namespace, just now.
  if (!claimed_ && !dir_.empty()) RemoveWorkspaceOverlayDirs(dir_);
}

PreparedOverlay::Pinned PreparedOverlay::Look(const std::string& lower) {
  Pinned p;
  p.lower = lower;
  struct stat st;
  // Followed, as mounting follows it: a symlink's target replaced is the
  // file replaced.
  if (stat(lower.c_str(), &st) == 0) {
    p.present = true;
    p.dev = st.st_dev;
    p.ino = st.st_ino;
  }
  return p;
}

Status PreparedOverlay::Unchanged() const {
  for (const Pinned& was : pinned_) {
    Pinned now = Look(was.lower);
    if (now.present != was.present || now.dev != was.dev || now.ino != was.ino) {
      return Status::FailedPrecondition(was.lower, "replaced since the overlay was prepared");
    }
  }
  return Status::OK();
}

Status PreparedOverlay::Claim(const std::string& id) {
  if (claimed_ || dir_.empty()) return Status::FailedPrecondition("overlay", "already claimed, or a read-only view");
  RETURN_IF_ERROR(Unchanged());
  if (!ValidOverlayId(id)) return Status::InvalidArgument("overlay", "an execution id of letters, digits, _ and -");
  // The overlay holds its directories, not their names. RENAME_NOREPLACE:
  // never onto another command's.
  const std::string target = std::string(kOverlayMountDir) + "/upper/" + id;
  if (renameat2(AT_FDCWD, dir_.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) != 0) {
    return PosixError("overlay: rename " + dir_, errno);
  }
  dir_ = target;
  claimed_ = true;
  return Status::OK();
}

Status PreparedOverlay::Check() const {
  // Its fd table is its own copy (no CLONE_FILES): Join's closing is its own.
  return RunOnOurMemory([](void* p) { return Join(p) & 0xff; }, const_cast<PreparedOverlay*>(this), 0, "overlay: join");
}

int PreparedOverlay::Join(const void* arg) {
  const auto& p = *static_cast<const PreparedOverlay*>(arg);
  // The outer user namespace first: there we hold every capability, which
  // joining its mount namespace and then the inner one takes.
  if (setns(p.outer_user_, CLONE_NEWUSER) != 0) return errno;
  if (setns(p.mount_, CLONE_NEWNS) != 0) return errno;
  if (setns(p.inner_user_, CLONE_NEWUSER) != 0) return errno;
  // Kept across the spawn's closing of fds for us; not the command's.
  close(p.outer_user_);
  close(p.mount_);
  close(p.inner_user_);
  return SealCommand();
}

}  // namespace odin

// Long file: the safe file layer is one chokepoint on purpose: every
// host-side read and write of the workspace, each the same descent with no
// symlink followed, kept where one review sees them all.
#include "workspace/workspace_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <deque>

#include "base/file_util.h"

namespace odin {

namespace {

#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

// Whether openat2 works here: unknown (-1) until first tried, then 1 or 0.
// Old kernels say ENOSYS; some container filters say EPERM.
std::atomic<int> g_openat2{-1};
std::atomic<bool> g_no_openat2_for_testing{false};
std::function<void(std::string_view, std::string_view)>* g_race_hook = nullptr;

void RaceHook(std::string_view op, std::string_view rel) {
  if (g_race_hook != nullptr && *g_race_hook) (*g_race_hook)(op, rel);
}

constexpr int kMaxSymlinks = 40;  // as the kernel's own resolution
// The mode bits the layer ever sets: never setuid or setgid.
constexpr mode_t kModeBits = 01777;
constexpr int kMaxTreeDepth = 256;

// openat2, or -1 with errno ENOSYS where it is unavailable (remembered).
int OpenAt2(int dir_fd, const std::string& path, uint64_t flags, uint64_t resolve) {
  if (g_no_openat2_for_testing.load() || g_openat2.load() == 0) {
    errno = ENOSYS;
    return -1;
  }
  open_how how{};
  how.flags = flags | O_CLOEXEC;
  how.resolve = resolve;
  int fd;
  do {
    fd = static_cast<int>(syscall(SYS_openat2, dir_fd, path.c_str(), &how, sizeof how));
  } while (fd < 0 && (errno == EINTR || errno == EAGAIN));
  if (fd < 0 && (errno == ENOSYS || errno == EPERM || errno == E2BIG)) {
    g_openat2.store(0);
    errno = ENOSYS;
    return -1;
  }
  if (fd >= 0) g_openat2.store(1);
  return fd;
}

std::vector<std::string> Components(std::string_view rel) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= rel.size()) {
    size_t end = rel.find('/', start);
    if (end == std::string_view::npos) end = rel.size();
    if (end > start) parts.emplace_back(rel.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

FileEntry::Type TypeOf(mode_t mode) {
  if (S_ISREG(mode)) return FileEntry::Type::kFile;
  if (S_ISDIR(mode)) return FileEntry::Type::kDirectory;
  if (S_ISLNK(mode)) return FileEntry::Type::kSymlink;
  return FileEntry::Type::kOther;
}

FileEntry EntryOf(const struct stat& st) {
  FileEntry e;
  e.type = TypeOf(st.st_mode);
  e.mode = st.st_mode;
  e.size = static_cast<uint64_t>(st.st_size);
  e.dev = st.st_dev;
  e.ino = st.st_ino;
  e.nlink = st.st_nlink;
  e.uid = st.st_uid;
  e.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  e.ctime_ns = int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec;
  return e;
}

std::string KindName(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symlink";
  return "not a regular file";
}

// A name for a new entry beside others in a directory: never one a user
// would have.
std::string TempName(const char* what) {
  uint64_t r = 0;
  if (getrandom(&r, sizeof r, 0) != sizeof r) r = static_cast<uint64_t>(getpid()) * 0x9e3779b97f4a7c15ull;
  char buf[64];
  snprintf(buf, sizeof buf, ".odin-%s-%016llx", what, static_cast<unsigned long long>(r));
  return buf;
}

Status Refused(std::string_view rel, std::string_view why) {
  return Status::PermissionDenied(rel.empty() ? "." : rel, why);
}

// The system's answer about a path on the way, as the layer says it.
Status OnTheWay(const std::string& rel, int err) {
  if (err == ELOOP) return Refused(rel, "a symlink is on its way: nothing is written or opened through one");
  if (err == ENOTDIR) return Refused(rel, "something that is not a directory is on its way");
  if (err == EXDEV) return Refused(rel, "it leads outside the workspace");
  return PosixError(rel.empty() ? "." : rel, err);
}

}  // namespace

void WorkspaceFiles::GiveToParentsOwner(int dir_fd, int fd) const {
  if (ownership_ != Ownership::kParents || geteuid() != 0) return;
  struct stat dir;
  if (fstat(dir_fd, &dir) != 0 || dir.st_uid == 0) return;
  // Through the fd: the entry made, whatever its name holds by now.
  (void)fchownat(fd, "", dir.st_uid, dir.st_gid, AT_EMPTY_PATH);
}

bool ExistsBelow(const std::string& root, std::string_view rel) {
  StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(root);
  return files.ok() && files->Look(rel).exists();
}

void WorkspaceFiles::SetRaceHookForTesting(std::function<void(std::string_view, std::string_view)> hook) {
  delete g_race_hook;
  g_race_hook = hook ? new std::function<void(std::string_view, std::string_view)>(std::move(hook)) : nullptr;
}

void WorkspaceFiles::SetNoOpenat2ForTesting(bool no_openat2) { g_no_openat2_for_testing.store(no_openat2); }

StatusOr<WorkspaceFiles> WorkspaceFiles::Open(const std::string& root, Ownership ownership) {
  if (root.empty() || root[0] != '/') return Status::InvalidArgument(root, "not an absolute path");
  std::string r = root;
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  UniqueFd fd(open(r.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return PosixError(r, errno);
  return WorkspaceFiles(std::move(r), std::move(fd), ownership);
}

StatusOr<std::string> WorkspaceFiles::Relative(std::string_view path) const {
  std::string_view rest = path;
  if (!path.empty() && path[0] == '/') {
    if (path == root_) return std::string();
    std::string_view root = root_ == "/" ? std::string_view() : std::string_view(root_);
    if (!path.starts_with(root) || path.size() <= root.size() || path[root.size()] != '/') {
      return Status::InvalidArgument(path, "not inside " + root_);
    }
    rest = path.substr(root.size() + 1);
  }
  std::string out;
  for (const std::string& part : Components(rest)) {
    if (part == ".") continue;
    if (part == "..") return Status::InvalidArgument(path, "'..' is not allowed in a workspace path");
    if (!out.empty()) out += '/';
    out += part;
  }
  return out;
}

std::string WorkspaceFiles::Absolute(std::string_view rel) const {
  if (!rel.empty() && rel[0] == '/') return std::string(rel);
  if (rel.empty()) return root_;
  return root_ == "/" ? "/" + std::string(rel) : root_ + "/" + std::string(rel);
}

StatusOr<UniqueFd> WorkspaceFiles::OpenNoFollow(const std::string& rel, int flags) const {
  if (rel.empty()) {
    UniqueFd fd(openat(root_fd_.get(), ".", flags | O_CLOEXEC));
    if (!fd.valid()) return PosixError(".", errno);
    return fd;
  }
  int fd = OpenAt2(root_fd_.get(), rel, static_cast<uint64_t>(flags | O_NOFOLLOW),
                   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  if (fd >= 0) return UniqueFd(fd);
  // ENOTDIR and ELOOP are told apart below (a symlink opened O_PATH |
  // O_NOFOLLOW is not a directory): the walk fails too, naming which.
  if (errno != ENOSYS && errno != ENOTDIR && errno != ELOOP) return OnTheWay(rel, errno);
  // One component at a time, none followed.
  std::vector<std::string> parts = Components(rel);
  UniqueFd dir(openat(root_fd_.get(), ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return PosixError(".", errno);
  for (size_t i = 0; i < parts.size(); ++i) {
    bool last = i + 1 == parts.size();
    int f = last ? flags | O_NOFOLLOW : O_PATH | O_DIRECTORY | O_NOFOLLOW;
    UniqueFd next(openat(dir.get(), parts[i].c_str(), f | O_CLOEXEC));
    if (!next.valid()) {
      int err = errno;
      // O_NOFOLLOW | O_PATH opens a symlink itself; O_DIRECTORY then says
      // ENOTDIR. Name it for what it is.
      struct stat st;
      if ((err == ENOTDIR || err == ELOOP) && fstatat(dir.get(), parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISLNK(st.st_mode)) {
        err = ELOOP;
      }
      return OnTheWay(rel, err);
    }
    dir = std::move(next);
  }
  return dir;
}

StatusOr<WorkspaceFiles::Parent> WorkspaceFiles::OpenParent(std::string_view path, std::string_view op) const {
  ASSIGN_OR_RETURN(std::string rel, Relative(path));
  if (rel.empty()) return Refused(".", std::string(op) + " of the root itself");
  size_t slash = rel.rfind('/');
  std::string dir = slash == std::string::npos ? "" : rel.substr(0, slash);
  Parent p;
  p.name = slash == std::string::npos ? rel : rel.substr(slash + 1);
  StatusOr<UniqueFd> fd = OpenNoFollow(dir, O_PATH | O_DIRECTORY);
  if (!fd.ok()) {
    if (fd.status().code() == StatusCode::kPermissionDenied) return Refused(rel, fd.status().message());
    return fd.status();
  }
  p.fd = std::move(*fd);
  p.rel = std::move(rel);
  return p;
}

StatusOr<UniqueFd> WorkspaceFiles::OpenForRead(const std::string& rel) const {
  constexpr int kFlags = O_PATH | O_CLOEXEC;
  if (rel.empty()) return Refused(".", "the root is a directory");
  int fd = OpenAt2(root_fd_.get(), rel, kFlags, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
  if (fd >= 0) return UniqueFd(fd);
  if (errno != ENOSYS) {
    if (errno == EXDEV) return Refused(rel, "a symlink on its way leads outside the workspace");
    if (errno == ELOOP) return Refused(rel, "too many symlinks on its way");
    return PosixError(rel, errno);
  }
  // By hand: a stack of the directories walked (".." pops, never past the
  // root), symlinks spliced into what is left to walk.
  std::vector<UniqueFd> dirs;
  dirs.emplace_back(openat(root_fd_.get(), ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dirs.back().valid()) return PosixError(".", errno);
  std::deque<std::string> left;
  for (std::string& p : Components(rel)) left.push_back(std::move(p));
  int links = 0;
  while (!left.empty()) {
    std::string part = std::move(left.front());
    left.pop_front();
    if (part == ".") continue;
    if (part == "..") {
      if (dirs.size() == 1) return Refused(rel, "a symlink on its way leads outside the workspace");
      dirs.pop_back();
      continue;
    }
    int at = dirs.back().get();
    struct stat st;
    if (fstatat(at, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return PosixError(rel, errno);
    if (S_ISLNK(st.st_mode)) {
      if (++links > kMaxSymlinks) return Refused(rel, "too many symlinks on its way");
      char target[4096];
      ssize_t n = readlinkat(at, part.c_str(), target, sizeof target);
      if (n < 0) return PosixError(rel, errno);
      if (n == 0 || static_cast<size_t>(n) == sizeof target) return Refused(rel, "a symlink on its way is unreadable");
      std::string_view t(target, static_cast<size_t>(n));
      if (t[0] == '/') return Refused(rel, "a symlink on its way leads outside the workspace (absolute)");
      std::vector<std::string> spliced = Components(t);
      left.insert(left.begin(), spliced.begin(), spliced.end());
      continue;
    }
    if (left.empty()) {
      UniqueFd file(openat(at, part.c_str(), kFlags | O_NOFOLLOW));
      if (!file.valid()) {
        if (errno == ELOOP) return Refused(rel, "it became a symlink while it was opened");
        return PosixError(rel, errno);
      }
      return file;
    }
    UniqueFd next(openat(at, part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) return OnTheWay(rel, errno);
    dirs.push_back(std::move(next));
  }
  return Refused(rel, "it resolves to a directory");
}

FileEntry WorkspaceFiles::LookAt(int dir_fd, const std::string& name) {
  struct stat st;
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") return FileEntry();
  return fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 ? EntryOf(st) : FileEntry();
}

FileEntry WorkspaceFiles::Look(std::string_view path) const {
  StatusOr<std::string> rel = Relative(path);
  if (!rel.ok()) return FileEntry();
  struct stat st;
  if (rel->empty()) return fstat(root_fd_.get(), &st) == 0 ? EntryOf(st) : FileEntry();
  StatusOr<Parent> p = OpenParent(*rel, "look");
  if (!p.ok()) return FileEntry();
  if (fstatat(p->fd.get(), p->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return FileEntry();
  return EntryOf(st);
}

Status WorkspaceFiles::ReadInPieces(std::string_view path, uint64_t max_bytes,
                                    const std::function<void(std::string_view)>& take, Links links) const {
  ASSIGN_OR_RETURN(std::string rel, Relative(path));
  if (rel.empty()) return Refused(".", "the root is a directory");
  // Looked at before it is opened to read: a device is never opened (some
  // act on open; on a nodev mount the open fails without saying why).
  ASSIGN_OR_RETURN(UniqueFd found, links == Links::kNone ? OpenNoFollow(rel, O_PATH) : OpenForRead(rel));
  struct stat st;
  if (fstat(found.get(), &st) != 0) return PosixError(rel, errno);
  if (!S_ISREG(st.st_mode)) return Refused(rel, KindName(st.st_mode) + ", not a regular file: not read");
  StatusOr<UniqueFd> opened = ReopenFd(found.get(), O_RDONLY | O_NOCTTY);
  if (!opened.ok()) return Status(opened.status().code(), rel, opened.status().message());
  UniqueFd fd = std::move(*opened);
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return Status::InvalidArgument(rel, "larger than " + std::to_string(max_bytes) + " bytes");
  }
  RaceHook("read", rel);
  char buf[65536];
  uint64_t total = 0;
  for (;;) {
    ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return PosixError(rel, errno);
    if (n == 0) break;
    total += static_cast<uint64_t>(n);
    if (total > max_bytes) return Status::InvalidArgument(rel, "larger than " + std::to_string(max_bytes) + " bytes");
    take(std::string_view(buf, static_cast<size_t>(n)));
  }
  return Status::OK();
}

StatusOr<std::string> WorkspaceFiles::ReadFile(std::string_view path, uint64_t max_bytes, Links links) const {
  std::string out;
  RETURN_IF_ERROR(ReadInPieces(
      path, max_bytes, [&out](std::string_view piece) { out.append(piece); }, links));
  return out;
}

StatusOr<std::string> WorkspaceFiles::ReadLink(std::string_view path) const {
  ASSIGN_OR_RETURN(Parent p, OpenParent(path, "readlink"));
  char target[4096];
  ssize_t n = readlinkat(p.fd.get(), p.name.c_str(), target, sizeof target);
  if (n < 0) return PosixError(p.rel, errno);
  if (static_cast<size_t>(n) == sizeof target) return Status::InvalidArgument(p.rel, "symlink target too long");
  return std::string(target, static_cast<size_t>(n));
}

StatusOr<UniqueFd> WorkspaceFiles::OpenDirectory(std::string_view path) const {
  ASSIGN_OR_RETURN(std::string rel, Relative(path));
  return OpenNoFollow(rel, O_RDONLY | O_DIRECTORY);
}

StatusOr<std::vector<std::string>> WorkspaceFiles::List(std::string_view path) const {
  ASSIGN_OR_RETURN(std::vector<Entry> entries, ListEntries(path));
  std::vector<std::string> names;
  for (Entry& e : entries) names.push_back(std::move(e.name));
  return names;
}

StatusOr<std::vector<WorkspaceFiles::Entry>> WorkspaceFiles::ListEntries(std::string_view path) const {
  ASSIGN_OR_RETURN(UniqueFd fd, OpenDirectory(path));
  DIR* d = fdopendir(fd.release());
  if (d == nullptr) return PosixError(std::string(path), errno);
  std::vector<Entry> entries;
  while (dirent* e = readdir(d)) {
    std::string_view n = e->d_name;
    if (n == "." || n == "..") continue;
    bool is_dir = e->d_type == DT_DIR, is_link = e->d_type == DT_LNK;
    if (struct stat st; e->d_type == DT_UNKNOWN && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
      is_dir = S_ISDIR(st.st_mode);
      is_link = S_ISLNK(st.st_mode);
    }
    entries.push_back({std::string(n), is_dir, is_link});
  }
  closedir(d);
  return entries;
}

Status WorkspaceFiles::WriteFile(std::string_view path, std::string_view contents, mode_t mode) const {
  ASSIGN_OR_RETURN(Parent p, OpenParent(path, "write"));
  struct stat old;
  bool replacing = fstatat(p.fd.get(), p.name.c_str(), &old, AT_SYMLINK_NOFOLLOW) == 0;
  if (replacing && S_ISDIR(old.st_mode)) return Status::FailedPrecondition(p.rel, "a directory is there");
  std::string tmp = TempName("tmp");
  UniqueFd fd(openat(p.fd.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return PosixError(p.rel, errno);
  auto fail = [&](Status s) {
    unlinkat(p.fd.get(), tmp.c_str(), 0);
    return s;
  };
  if (Status s = WriteAll(fd.get(), contents, p.rel); !s.ok()) return fail(s);
  // The replaced file's owner is kept where we may give it (root); a new
  // one is its directory owner's where the ownership says so.
  if (replacing && S_ISREG(old.st_mode) && geteuid() == 0) {
    (void)!fchown(fd.get(), old.st_uid, old.st_gid);
  } else {
    GiveToParentsOwner(p.fd.get(), fd.get());
  }
  if (fchmod(fd.get(), mode & kModeBits) != 0 || fsync(fd.get()) != 0) return fail(PosixError(p.rel, errno));
  fd.reset();
  RaceHook("write", p.rel);
  if (renameat(p.fd.get(), tmp.c_str(), p.fd.get(), p.name.c_str()) != 0) return fail(PosixError(p.rel, errno));
  return Status::OK();
}

Status WorkspaceFiles::MakeDirs(std::string_view path, mode_t mode) const {
  ASSIGN_OR_RETURN(std::string rel, Relative(path));
  UniqueFd dir(openat(root_fd_.get(), ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return PosixError(".", errno);
  std::string done;
  for (const std::string& part : Components(rel)) {
    done += (done.empty() ? "" : "/") + part;
    UniqueFd next(openat(dir.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid() && errno == ENOENT) {
      RaceHook("mkdir", done);
      bool made = mkdirat(dir.get(), part.c_str(), mode & kModeBits) == 0;
      if (!made && errno != EEXIST) return PosixError(done, errno);
      next.reset(openat(dir.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (made && next.valid()) GiveToParentsOwner(dir.get(), next.get());
    }
    if (!next.valid()) {
      int err = errno;
      struct stat st;
      if (fstatat(dir.get(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) err = ELOOP;
      return OnTheWay(done, err);
    }
    dir = std::move(next);
  }
  return Status::OK();
}

Status WorkspaceFiles::Remove(std::string_view path) const {
  ASSIGN_OR_RETURN(Parent p, OpenParent(path, "remove"));
  RaceHook("remove", p.rel);
  if (unlinkat(p.fd.get(), p.name.c_str(), 0) != 0 && errno != ENOENT) {
    if (errno == EISDIR) return Status::FailedPrecondition(p.rel, "a directory is there");
    return PosixError(p.rel, errno);
  }
  return Status::OK();
}

Status WorkspaceFiles::RemoveDirectory(std::string_view path) const {
  ASSIGN_OR_RETURN(Parent p, OpenParent(path, "remove"));
  RaceHook("rmdir", p.rel);
  if (unlinkat(p.fd.get(), p.name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) return PosixError(p.rel, errno);
  return Status::OK();
}

Status WorkspaceFiles::RemoveBelow(int dir_fd, const std::string& name, const std::string& rel, int depth) const {
  struct stat st;
  if (fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno == ENOENT ? Status::OK() : PosixError(rel, errno);
  }
  if (S_ISDIR(st.st_mode)) {
    if (depth > kMaxTreeDepth) return Status::FailedPrecondition(rel, "nested too deep to remove");
    UniqueFd fd(openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid() && errno == EACCES) {
      // A directory of ours we may not read (overlayfs leaves its work
      // directories 000): opened up through an fd of it, not its name.
      UniqueFd path_fd(openat(dir_fd, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      std::string proc = path_fd.valid() ? "/proc/self/fd/" + std::to_string(path_fd.get()) : "";
      if (path_fd.valid() && chmod(proc.c_str(), 0700) == 0) {
        fd.reset(openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      }
    }
    if (!fd.valid()) return OnTheWay(rel, errno);
    // The directory opened is the one looked at (not swapped between).
    struct stat opened;
    if (fstat(fd.get(), &opened) != 0 || opened.st_ino != st.st_ino || opened.st_dev != st.st_dev) {
      return Refused(rel, "it was replaced while it was removed");
    }
    if ((opened.st_mode & 0700) != 0700) (void)fchmod(fd.get(), 0700);
    std::vector<std::string> names;
    if (DIR* d = fdopendir(dup(fd.get()))) {
      while (dirent* e = readdir(d)) {
        std::string_view n = e->d_name;
        if (n != "." && n != "..") names.emplace_back(n);
      }
      closedir(d);
    }
    Status first;
    for (const std::string& n : names) {
      Status s = RemoveBelow(fd.get(), n, rel + "/" + n, depth + 1);
      if (first.ok() && !s.ok()) first = s;
    }
    RETURN_IF_ERROR(first);
    RaceHook("rmdir", rel);
    if (unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) return PosixError(rel, errno);
    return Status::OK();
  }
  RaceHook("remove", rel);
  if (unlinkat(dir_fd, name.c_str(), 0) != 0 && errno != ENOENT) return PosixError(rel, errno);
  return Status::OK();
}

Status WorkspaceFiles::RemoveTree(std::string_view path) const {
  ASSIGN_OR_RETURN(Parent p, OpenParent(path, "remove"));
  return RemoveBelow(p.fd.get(), p.name, p.rel, 0);
}

Status WorkspaceFiles::Symlink(std::string_view target, std::string_view path) const {
  ASSIGN_OR_RETURN(Parent p, OpenParent(path, "symlink"));
  struct stat old;
  if (fstatat(p.fd.get(), p.name.c_str(), &old, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(old.st_mode)) {
    return Status::FailedPrecondition(p.rel, "a directory is there");
  }
  std::string tmp = TempName("link");
  if (symlinkat(std::string(target).c_str(), p.fd.get(), tmp.c_str()) != 0) return PosixError(p.rel, errno);
  if (UniqueFd link(openat(p.fd.get(), tmp.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC)); link.valid()) {
    GiveToParentsOwner(p.fd.get(), link.get());
  }
  RaceHook("symlink", p.rel);
  if (renameat(p.fd.get(), tmp.c_str(), p.fd.get(), p.name.c_str()) != 0) {
    int err = errno;
    unlinkat(p.fd.get(), tmp.c_str(), 0);
    return PosixError(p.rel, err);
  }
  return Status::OK();
}

Status WorkspaceFiles::Chmod(std::string_view path, mode_t mode) const {
  ASSIGN_OR_RETURN(Parent p, OpenParent(path, "chmod"));
  UniqueFd fd(openat(p.fd.get(), p.name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return PosixError(p.rel, errno);
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return PosixError(p.rel, errno);
  if (S_ISLNK(st.st_mode)) return Refused(p.rel, "a symlink: its mode is not changed through it");
  if (!S_ISDIR(st.st_mode) && st.st_nlink > 1) {
    return Refused(p.rel, "it has more than one link: its mode would change under every name");
  }
  RaceHook("chmod", p.rel);
  // Through the fd: the inode looked at, whatever its name holds now.
  if (syscall(SYS_fchmodat2, fd.get(), "", mode & kModeBits, AT_EMPTY_PATH) == 0) return Status::OK();
  if (errno != ENOSYS && errno != EINVAL) return PosixError(p.rel, errno);
  std::string proc = "/proc/self/fd/" + std::to_string(fd.get());
  if (chmod(proc.c_str(), mode & kModeBits) == 0) return Status::OK();
  if (errno != ENOENT) return PosixError(p.rel, errno);
  // No /proc: an fd that can fchmod, checked to be the same inode.
  UniqueFd rw(openat(
      p.fd.get(), p.name.c_str(),
      (S_ISDIR(st.st_mode) ? O_RDONLY | O_DIRECTORY : O_RDONLY | O_NONBLOCK | O_NOCTTY) | O_NOFOLLOW | O_CLOEXEC));
  struct stat again;
  if (!rw.valid() || fstat(rw.get(), &again) != 0) return PosixError(p.rel, errno);
  if (again.st_ino != st.st_ino || again.st_dev != st.st_dev) return Refused(p.rel, "it was replaced meanwhile");
  if (fchmod(rw.get(), mode & kModeBits) != 0) return PosixError(p.rel, errno);
  return Status::OK();
}

StatusOr<UniqueFd> WorkspaceFiles::OpenAppend(std::string_view path, mode_t mode, uint64_t truncate_over) const {
  ASSIGN_OR_RETURN(Parent p, OpenParent(path, "append"));
  // O_NONBLOCK: a FIFO put there is refused below, not waited on.
  UniqueFd fd(
      openat(p.fd.get(), p.name.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode));
  if (!fd.valid())
    return errno == ELOOP ? Refused(p.rel, "a symlink: nothing is written through one") : PosixError(p.rel, errno);
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return PosixError(p.rel, errno);
  if (!S_ISREG(st.st_mode)) return Refused(p.rel, KindName(st.st_mode) + ", not a regular file: not written");
  if (st.st_nlink > 1) return Refused(p.rel, "it has more than one link: it is not written in place");
  int flags = fcntl(fd.get(), F_GETFL);
  if (flags >= 0) fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  if (static_cast<uint64_t>(st.st_size) > truncate_over && ftruncate(fd.get(), 0) != 0) {
    return PosixError(p.rel, errno);
  }
  return fd;
}

Status WorkspaceFiles::Rename(std::string_view from, std::string_view to, bool no_replace) const {
  ASSIGN_OR_RETURN(Parent f, OpenParent(from, "rename"));
  ASSIGN_OR_RETURN(Parent t, OpenParent(to, "rename"));
  RaceHook("rename", f.rel);
  unsigned flags = no_replace ? RENAME_NOREPLACE : 0;
  if (renameat2(f.fd.get(), f.name.c_str(), t.fd.get(), t.name.c_str(), flags) != 0) {
    if (errno == EEXIST) return Status::AlreadyExists(t.rel, "already there");
    return PosixError(f.rel + " -> " + t.rel, errno);
  }
  return Status::OK();
}

Status WorkspaceFiles::MoveTo(std::string_view path, const WorkspaceFiles& to, std::string_view to_rel) const {
  ASSIGN_OR_RETURN(Parent f, OpenParent(path, "move"));
  ASSIGN_OR_RETURN(std::string dest, to.Relative(to_rel));
  size_t slash = dest.rfind('/');
  if (slash != std::string::npos) RETURN_IF_ERROR(to.MakeDirs(dest.substr(0, slash), 0700));
  ASSIGN_OR_RETURN(Parent t, to.OpenParent(dest, "move"));
  RaceHook("move", f.rel);
  if (renameat2(f.fd.get(), f.name.c_str(), t.fd.get(), t.name.c_str(), RENAME_NOREPLACE) != 0) {
    return PosixError(f.rel + " -> " + to.Absolute(t.rel), errno);
  }
  return Status::OK();
}

}  // namespace odin

#include "workspace/workspace.h"

#include <fcntl.h>
#include <unistd.h>

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cctype>
#include <cstdio>
#include <iostream>

#include "base/file_util.h"
#include "base/sha256.h"
#include "ledger/ledger_anchor.h"
#include "workspace/workspace_files.h"

namespace odin {

namespace {

// What Odin writes in the marker of a state directory: the directory's own
// inode and birth time. A copy of the directory (a repository that ships
// one, a tarball, a clone) is a new directory, so a marker copied with it
// names another: it cannot be made ahead of time. (The device number is
// left out: it may change across reboots.)
std::string MarkerText(const WorkspaceFiles& root, const std::string& dir) {
  StatusOr<UniqueFd> fd = root.OpenDirectory(dir);
  if (!fd.ok()) return "";
  struct statx stx {};
  if (statx(fd->get(), "", AT_EMPTY_PATH, STATX_INO | STATX_BTIME, &stx) != 0) return "";
  std::string birth = (stx.stx_mask & STATX_BTIME) != 0
                          ? std::to_string(stx.stx_btime.tv_sec) + "." + std::to_string(stx.stx_btime.tv_nsec)
                          : "-";
  return "odin-state 1 " + std::to_string(stx.stx_ino) + " " + birth + "\n";
}

// Why root/.odin is not Odin's state, or "" when it is (or is absent, to
// be made).
std::string WhyNotOurs(const WorkspaceFiles& root_files, const std::string& root) {
  FileEntry e = root_files.Look(".odin");
  if (!e.exists()) return "";
  if (e.is_link()) return "is a symlink";
  if (!e.is_dir()) return "is not a directory";
  if (e.uid != geteuid()) return "belongs to another user";
  if ((e.mode & 0777) != 0700) {
    char mode[8];
    snprintf(mode, sizeof mode, "%04o", e.mode & 0777);
    return std::string("has mode ") + mode + ", not 0700";
  }
  std::string marker = std::string(".odin/") + kStateMarkerFile;
  FileEntry m = root_files.Look(marker);
  if (m.is_file() && m.uid == geteuid()) {
    StatusOr<std::string> text = root_files.ReadFile(marker, 4096, WorkspaceFiles::Links::kNone);
    std::string expected = MarkerText(root_files, ".odin");
    if (text.ok() && !expected.empty() && *text == expected) return "";
    return "holds a marker Odin did not make for it (a copy from elsewhere, or tracked by git)";
  }
  // Made by an Odin before markers: its ledger has an anchor in this
  // user's state directory, which no repository can ship.
  if (!m.exists() && root_files.Look(".odin/odin.db").is_file()) {
    StatusOr<std::string> anchors = LedgerAnchor::DefaultDir();
    if (anchors.ok()) {
      LedgerAnchor anchor(*anchors, root + "/.odin/odin.db");
      struct stat st;
      if (lstat(anchor.path().c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid()) return "";
    }
  }
  return "has no marker of Odin's (Odin did not make it)";
}

// Why a workspace without .odin cannot have one made (a read-only
// checkout, a directory of another's), or "". (One that has it keeps it:
// its ledger is read there, read-only or not.)
std::string WhyCannotHold(const std::string& root) {
  if (access(JoinPath(root, ".odin").c_str(), F_OK) == 0) return "";
  struct statvfs vfs;
  if (statvfs(root.c_str(), &vfs) == 0 && (vfs.f_flag & ST_RDONLY) != 0) return "is on a read-only file system";
  if (access(root.c_str(), W_OK) != 0) return "is not writable by you";
  return "";
}

}  // namespace

std::string StateDirElsewhere(const std::string& root) {
  std::string dir = OdinStateDir();
  if (dir.empty()) return "";
  std::string name = root.substr(root.rfind('/') + 1);
  std::string safe;
  for (char c : name.substr(0, 40)) safe += (isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return JoinPath(dir,
                  "workspaces/" + (safe.empty() ? std::string("root") : safe) + "-" + Sha256Hex(root).substr(0, 16));
}

StatusOr<Workspace> FindWorkspace(const std::string& dir) {
  std::string start = dir.empty() ? "." : dir;
  StatusOr<std::string> real = RealPath(start);
  if (!real.ok()) return real.status();
  if (!IsDirectory(*real)) return Status::NotFound(start, "not a directory");
  Workspace ws;
  ws.cwd = *real;
  ws.root = *real;
  for (std::string d = *real;; d = DirName(d)) {
    struct stat st;
    if (lstat(JoinPath(d, ".git").c_str(), &st) == 0) {
      ws.root = d;
      break;
    }
    if (d == "/") break;
  }
  ws.state_dir = JoinPath(ws.root, ".odin");
  if (StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(ws.root); files.ok()) {
    std::string why = WhyNotOurs(*files, ws.root);
    std::string elsewhere = why.empty() ? "" : StateDirElsewhere(ws.root);
    if (!why.empty() && !elsewhere.empty()) {
      ws.state_dir = elsewhere;
      ws.state_elsewhere = ws.root + "/.odin " + why + ": Odin never keeps its state there; it is kept in " +
                           elsewhere + " (remove .odin to keep it in the workspace)";
    } else if (!why.empty()) {
      ws.state_elsewhere = ws.root + "/.odin " + why;  // and nowhere else to go: PrepareStateDir refuses
    } else if (std::string cannot = WhyCannotHold(ws.root); !cannot.empty()) {
      std::string state = StateDirElsewhere(ws.root);
      if (!state.empty()) {
        ws.state_dir = state;
        ws.state_elsewhere = ws.root + " " + cannot + ": Odin's state is kept in " + state;
      }
    }
  }
  ws.ledger_path = JoinPath(ws.state_dir, "odin.db");
  ws.config_path = JoinPath(ws.root, "odinconfig.json");
  return ws;
}

std::string TooBroadForAWorkspace(const Workspace& ws) {
  if (ws.root == "/") return "/ is the root directory";
  const char* home = getenv("HOME");
  if (home != nullptr && *home == '/') {
    StatusOr<std::string> real = RealPath(home);
    if (real.ok() && *real == ws.root) return ws.root + " is your home directory";
  }
  return "";
}

std::string TooBroadRefusal(const Workspace& ws, bool named) {
  std::string broad = named ? "" : TooBroadForAWorkspace(ws);
  if (broad.empty()) return "";
  return broad + ", not a project: run odin in a project's directory (or name this one with -C " + ws.root + ")";
}

Status PrepareStateDir(const Workspace& ws) {
  // A view's state is its workspace's, prepared before the view was made.
  if (!ws.view.empty()) return Status::OK();
  bool in_workspace = ws.state_dir == JoinPath(ws.root, ".odin");
  if (in_workspace && !ws.state_elsewhere.empty()) {
    return Status::FailedPrecondition(ws.state_elsewhere,
                                      "and there is no state directory of the user's to keep Odin's state in "
                                      "(set XDG_STATE_HOME or HOME, or remove .odin)");
  }
  if (in_workspace) {
    // Made through the layer: nothing followed on the way. Made whole under
    // a name of its own, then renamed into place, so that odin processes
    // started together never see it without its marker.
    ASSIGN_OR_RETURN(WorkspaceFiles root, WorkspaceFiles::Open(ws.root));
    if (!root.Look(".odin").exists()) {
      // (Of this process and thread: threads of one odin make it at once,
      // parallel attempts.)
      std::string tmp = ".odin-new-" + std::to_string(getpid()) + "-" + std::to_string(gettid());
      Status made = root.MakeDirs(tmp, 0700);
      if (made.ok()) made = root.Chmod(tmp, 0700);  // whatever the umask said
      if (made.ok()) made = root.WriteFile(tmp + "/.gitignore", "*\n", 0600);
      if (made.ok()) {
        std::string marker = MarkerText(root, tmp);
        made = marker.empty() ? Status::Internal(tmp, "cannot read its inode")
                              : root.WriteFile(tmp + "/" + kStateMarkerFile, marker, 0600);
      }
      if (made.ok()) made = root.Rename(tmp, ".odin", /*no_replace=*/true);
      if (!made.ok()) (void)root.RemoveTree(tmp);
      // Another odin made it first: theirs is as good.
      if (!made.ok() && made.code() != StatusCode::kAlreadyExists) {
        return made.WithContext("cannot create the state directory " + ws.state_dir);
      }
    } else if (!root.Look(std::string(".odin/") + kStateMarkerFile).exists()) {
      // One an Odin made before markers (WhyNotOurs took it): marked now.
      (void)root.WriteFile(std::string(".odin/") + kStateMarkerFile, MarkerText(root, ".odin"), 0600);
    }
    if (std::string why = WhyNotOurs(root, ws.root); !why.empty()) {
      return Status::FailedPrecondition(ws.state_dir, why + " (it changed while odin started)");
    }
  } else {
    std::cerr << "odin: " << ws.state_elsewhere << "\n";
    Status s = MakeDirs(ws.state_dir, 0700);
    if (!s.ok()) return s.WithContext("cannot create the state directory");
  }
  if (access(ws.state_dir.c_str(), W_OK) != 0) {
    return PosixError("state directory " + ws.state_dir + " is not writable", errno);
  }
  // Nothing in it is a symlink: Odin writes its state only to files of its
  // own.
  ASSIGN_OR_RETURN(WorkspaceFiles state, WorkspaceFiles::Open(ws.state_dir));
  ASSIGN_OR_RETURN(std::vector<std::string> names, state.List(""));
  for (const std::string& n : names) {
    if (state.Look(n).is_link()) {
      return Status::FailedPrecondition(ws.state_dir + "/" + n,
                                        "is a symlink: Odin writes its state only to files of its own (remove it)");
    }
  }
  return Status::OK();
}

}  // namespace odin

#include "workers/cargo_mirror.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <vector>

#include "base/file_util.h"

namespace odin {

namespace {

bool DeclaresWorkspace(const std::string& manifest) {
  StatusOr<std::string> text = ReadRegularFile(manifest, 1 << 20);
  if (!text.ok()) return false;
  for (size_t pos = 0; pos < text->size();) {
    size_t end = text->find('\n', pos);
    if (end == std::string::npos) end = text->size();
    std::string_view line(text->data() + pos, end - pos);
    size_t first = line.find_first_not_of(" \t");
    if (first != std::string_view::npos && line.substr(first).starts_with("[workspace]")) return true;
    pos = end + 1;
  }
  return false;
}

bool Skipped(const std::filesystem::directory_entry& dir) {
  std::string name = dir.path().filename().string();
  if (name == ".git" || name == ".hg" || name == ".svn" || name == ".odin" || name == "node_modules") return true;
  return PathExists(JoinPath(dir.path().string(), "CACHEDIR.TAG"));
}

// The directories rustc writes dep-info (*.d) in under a cargo target
// directory: debug/deps, and <triple>/debug/deps where a target is named.
std::vector<std::filesystem::path> DepInfoDirs(const std::string& target_dir) {
  namespace fs = std::filesystem;
  std::vector<fs::path> dirs = {fs::path(target_dir) / "debug" / "deps"};
  std::error_code ec;
  for (fs::directory_iterator t(target_dir, ec), end; !ec && t != end; t.increment(ec)) {
    std::error_code dir_ec;
    if (t->is_directory(dir_ec) && fs::is_directory(t->path() / "debug" / "deps", dir_ec)) {
      dirs.push_back(t->path() / "debug" / "deps");
    }
  }
  return dirs;
}

// Writes a scratch copy (no fsync: the copy is rebuilt if lost), never
// through a symlink.
Status WriteCopy(const std::string& path, const std::string& content) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return PosixError(path, errno);
  Status written = WriteAll(fd, content, path);
  if (close(fd) != 0 && written.ok()) written = PosixError(path, errno);
  return written;
}

// Makes way for an entry of the given kind (S_IFDIR, S_IFREG, S_IFLNK) at
// path in the copy: what is there of another kind (the disk's file became
// a directory, a symlink became a file) goes, so nothing is ever written
// through an old symlink. True when an entry of that kind is there now.
bool MakeWay(const std::string& path, mode_t kind) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return false;
  if ((st.st_mode & S_IFMT) == kind) return true;
  if (S_ISDIR(st.st_mode)) {
    RemoveTree(path);
  } else {
    unlink(path.c_str());
  }
  return false;
}

}  // namespace

std::string StrayCargoConfig(const std::string& dir) {
  for (std::string d = DirName(dir);; d = DirName(d)) {
    for (const char* name : {".cargo/config.toml", ".cargo/config", "rust-toolchain.toml", "rust-toolchain"}) {
      std::string p = JoinPath(d, name);
      struct stat st;
      if (lstat(p.c_str(), &st) == 0) {
        return p + " would apply to the copy of the crate that cargo check runs in, so Rust is not checked here";
      }
    }
    if (d == "/" || d.empty() || d == ".") break;
  }
  return "";
}

std::string CargoRoot(const std::string& workspace, const std::string& file) {
  // As cargo finds a package's workspace: the nearest manifest above it
  // that declares one (cargo-fuzz's fuzz/ declares its own).
  std::string package;
  for (std::string dir = DirName(file); dir == workspace || PathIsBelow(dir, workspace); dir = DirName(dir)) {
    std::string manifest = JoinPath(dir, "Cargo.toml");
    struct stat st;
    if (stat(manifest.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      if (DeclaresWorkspace(manifest)) return dir;
      if (package.empty()) package = dir;
    }
    if (dir == workspace || dir == "/") break;
  }
  return package;
}

CargoMirror::CargoMirror(std::string source, std::string mirror, CargoMirrorLimits limits)
    : source_(std::move(source)), mirror_(std::move(mirror)), limits_(limits) {}

Status CargoMirror::Sync() {
  RETURN_IF_ERROR(MakeDirs(mirror_, 0700));
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::recursive_directory_iterator it(source_, fs::directory_options::skip_permission_denied, ec);
  if (ec) return Status::Unavailable("cargo check", "cannot read " + source_ + ": " + ec.message());
  std::set<std::string> seen;
  size_t entries = 0;
  uint64_t bytes = 0;
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::directory_entry& e = *it;
    std::string rel = e.path().lexically_relative(source_).string();
    std::string copy = JoinPath(mirror_, rel);
    struct stat st;
    if (lstat(e.path().c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode) && Skipped(e)) {
      it.disable_recursion_pending();
      continue;
    }
    if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) continue;  // devices, fifos
    if (++entries > limits_.max_files) {
      return Status::ResourceExhausted("cargo check", source_ + " holds more than " +
                                                          std::to_string(limits_.max_files) +
                                                          " files and directories, too many to copy for cargo check");
    }
    if (S_ISDIR(st.st_mode)) {
      if (!MakeWay(copy, S_IFDIR) && mkdir(copy.c_str(), 0700) != 0) {
        return PosixError("cargo check: cannot create " + copy, errno);
      }
      continue;
    }
    seen.insert(rel);
    bytes += static_cast<uint64_t>(st.st_size);
    if (bytes > limits_.max_bytes) {
      return Status::ResourceExhausted("cargo check", source_ + " holds more than " +
                                                          std::to_string(limits_.max_bytes >> 20) +
                                                          " MiB, too much to copy for cargo check");
    }
    Copied now{static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
               static_cast<int64_t>(st.st_size), static_cast<uint64_t>(st.st_ino)};
    auto was = copied_.find(rel);
    mode_t kind = S_ISLNK(st.st_mode) ? S_IFLNK : S_IFREG;
    if (was != copied_.end() && was->second.mtime_ns == now.mtime_ns && was->second.size == now.size &&
        was->second.inode == now.inode && MakeWay(copy, kind)) {
      continue;
    }
    MakeWay(copy, kind);
    unlink(copy.c_str());
    if (S_ISLNK(st.st_mode)) {
      StatusOr<std::string> target = ReadSymlink(e.path().string());
      if (!target.ok()) continue;
      // A relative link that leaves the crate would lead elsewhere from the
      // copy: it leads where it leads on disk.
      std::string link = *target;
      if (!link.empty() && link[0] != '/') {
        std::string real = (e.path().parent_path() / link).lexically_normal().string();
        if (real != source_ && !PathIsBelow(real, source_)) link = real;
      }
      if (symlink(link.c_str(), copy.c_str()) != 0) continue;
    } else {
      StatusOr<std::string> text = ReadRegularFile(e.path().string(), limits_.max_bytes);
      if (!text.ok()) continue;  // unreadable: cargo says what it misses
      RETURN_IF_ERROR(WriteCopy(copy, *text));
    }
    copied_[rel] = now;
  }
  if (ec) return Status::Unavailable("cargo check", "cannot read " + source_ + ": " + ec.message());
  for (auto c = copied_.begin(); c != copied_.end();) {
    if (seen.count(c->first) != 0) {
      ++c;
      continue;
    }
    std::string copy = JoinPath(mirror_, c->first);
    struct stat st;
    if (lstat(copy.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) unlink(copy.c_str());
    c = copied_.erase(c);
  }
  return Status::OK();
}

Status CargoMirror::Put(const std::string& file, const std::string& content) {
  if (!PathIsBelow(file, source_)) {
    return Status::InvalidArgument("cargo check", file + " is not below " + source_);
  }
  std::string rel = file.substr(source_.size() + 1);
  // Every directory on the way is a directory of the copy's own, never a
  // symlink the crate put there (it would lead the write elsewhere).
  std::string dir = mirror_;
  for (size_t start = 0, slash; (slash = rel.find('/', start)) != std::string::npos; start = slash + 1) {
    dir = JoinPath(dir, rel.substr(start, slash - start));
    if (!MakeWay(dir, S_IFDIR) && mkdir(dir.c_str(), 0700) != 0) {
      return PosixError("cargo check: cannot create " + dir, errno);
    }
  }
  std::string copy = JoinPath(mirror_, rel);
  MakeWay(copy, S_IFREG);
  unlink(copy.c_str());  // a fresh file: a new mtime, and no link written through
  RETURN_IF_ERROR(WriteCopy(copy, content));
  copied_[rel] = Copied{};  // not the disk's: the next Sync copies it again
  return Status::OK();
}

void CargoMirror::ForgetDepInfo() const {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const fs::path& dir : DepInfoDirs(target_dir())) {
    for (fs::directory_iterator d(dir, ec), end; !ec && d != end; d.increment(ec)) {
      if (d->path().extension() == ".d") unlink(d->path().c_str());
    }
  }
}

bool CargoMirror::Compiled(const std::string& file) const {
  if (!PathIsBelow(file, source_)) return false;
  std::string rel = file.substr(source_.size() + 1);
  namespace fs = std::filesystem;
  auto needle = [](const std::string& file) {
    std::string escaped = "\n";  // dep-info escapes spaces
    for (char c : file) {
      if (c == ' ') escaped += '\\';
      escaped += c;
    }
    return escaped + ":";
  };
  std::string absolute = needle(JoinPath(mirror_, rel)), relative = needle(rel);
  std::error_code ec;
  int read = 0;
  for (const fs::path& dir : DepInfoDirs(target_dir())) {
    for (fs::directory_iterator d(dir, ec), end; !ec && d != end && read < 5000; d.increment(ec)) {
      if (d->path().extension() != ".d") continue;
      ++read;
      StatusOr<std::string> text = ReadRegularFile(d->path().string(), 4 << 20);
      if (text.ok() && (text->find(absolute) != std::string::npos || text->find(relative) != std::string::npos)) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace odin

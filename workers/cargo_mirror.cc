#include "workers/cargo_mirror.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>

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

}  // namespace

std::string CargoRoot(const std::string& workspace, const std::string& file) {
  std::string root;
  for (std::string dir = DirName(file); dir == workspace || PathIsBelow(dir, workspace); dir = DirName(dir)) {
    std::string manifest = JoinPath(dir, "Cargo.toml");
    struct stat st;
    if (stat(manifest.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      if (root.empty() || DeclaresWorkspace(manifest)) root = dir;
    }
    if (dir == workspace || dir == "/") break;
  }
  return root;
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
  uint64_t bytes = 0;
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::directory_entry& e = *it;
    std::string rel = e.path().lexically_relative(source_).string();
    std::string copy = JoinPath(mirror_, rel);
    struct stat st;
    if (lstat(e.path().c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      if (Skipped(e)) {
        it.disable_recursion_pending();
        continue;
      }
      RETURN_IF_ERROR(MakeDirs(copy, 0700));
      continue;
    }
    if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) continue;  // devices, sockets, fifos
    seen.insert(rel);
    if (seen.size() > limits_.max_files) {
      return Status::ResourceExhausted("cargo check", source_ + " holds more than " +
                                                          std::to_string(limits_.max_files) +
                                                          " files, too many to copy for cargo check");
    }
    bytes += static_cast<uint64_t>(st.st_size);
    if (bytes > limits_.max_bytes) {
      return Status::ResourceExhausted("cargo check", source_ + " holds more than " +
                                                          std::to_string(limits_.max_bytes >> 20) +
                                                          " MiB, too much to copy for cargo check");
    }
    Copied now{static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
               static_cast<int64_t>(st.st_size), static_cast<uint64_t>(st.st_ino)};
    auto was = copied_.find(rel);
    if (was != copied_.end() && was->second.mtime_ns == now.mtime_ns && was->second.size == now.size &&
        was->second.inode == now.inode) {
      continue;
    }
    unlink(copy.c_str());
    if (S_ISLNK(st.st_mode)) {
      StatusOr<std::string> target = ReadSymlink(e.path().string());
      if (!target.ok() || symlink(target->c_str(), copy.c_str()) != 0) continue;
    } else {
      StatusOr<std::string> text = ReadRegularFile(e.path().string(), limits_.max_bytes);
      if (!text.ok()) continue;  // unreadable: cargo says what it misses
      RETURN_IF_ERROR(WriteFileAtomic(copy, *text));
    }
    copied_[rel] = now;
  }
  if (ec) return Status::Unavailable("cargo check", "cannot read " + source_ + ": " + ec.message());
  for (auto c = copied_.begin(); c != copied_.end();) {
    if (seen.count(c->first) != 0) {
      ++c;
      continue;
    }
    unlink(JoinPath(mirror_, c->first).c_str());
    c = copied_.erase(c);
  }
  return Status::OK();
}

Status CargoMirror::Put(const std::string& file, const std::string& content) {
  if (!PathIsBelow(file, source_)) {
    return Status::InvalidArgument("cargo check", file + " is not below " + source_);
  }
  std::string rel = file.substr(source_.size() + 1);
  std::string copy = JoinPath(mirror_, rel);
  RETURN_IF_ERROR(MakeDirs(DirName(copy), 0700));
  unlink(copy.c_str());  // a symlink is replaced, never written through
  RETURN_IF_ERROR(WriteFileAtomic(copy, content));
  copied_[rel] = Copied{};  // not the disk's: the next Sync copies it again
  return Status::OK();
}

}  // namespace odin

#pragma once
// A private copy of a Rust crate (or cargo workspace) that `cargo check`
// runs in, the lsp host's validator for .rs files where no rust-analyzer
// runs (Debian 12 ships none).
//
// cargo checks a whole crate, not a file: the copy holds the crate as it is
// on disk with the one file being validated replaced by the content asked
// about (its baseline, then the change). The workspace itself is never
// written (the lsp host sees it read-only) and its target/ is not touched:
// cargo's output goes to a target directory of the copy's own, kept warm
// between checks. Sync copies only what changed on disk since the last
// sync, so cargo's mtime fingerprints rebuild only what they must.

#include <cstdint>
#include <map>
#include <string>

#include "base/status.h"

namespace odin {

// The directory cargo runs in for file: the nearest directory from file's up
// to workspace that holds a Cargo.toml, or the outermost one above it whose
// Cargo.toml declares a [workspace] (cargo then prints paths relative to it).
// Empty when no Cargo.toml is at or below workspace above the file.
std::string CargoRoot(const std::string& workspace, const std::string& file);

// A cargo configuration or toolchain file above dir, which cargo and rustup
// would apply to a crate copied there (outside a sandbox /tmp is shared:
// anyone's /tmp/.cargo/config.toml could name a rustc wrapper): why cargo
// check cannot run there, or "" if none.
std::string StrayCargoConfig(const std::string& dir);

struct CargoMirrorLimits {
  size_t max_files = 20000;
  uint64_t max_bytes = 256ull << 20;
};

class CargoMirror {
 public:
  // Mirrors source (a directory) at mirror (made if missing).
  CargoMirror(std::string source, std::string mirror, CargoMirrorLimits limits = {});

  const std::string& source() const { return source_; }
  const std::string& mirror() const { return mirror_; }
  // cargo's target directory for the copy (CARGO_TARGET_DIR), beside it.
  std::string target_dir() const { return mirror_ + "-target"; }

  // Brings the copy up to the disk: copies files that are new or changed
  // (by size, mtime and inode) or that Put overwrote, removes those gone.
  // Skips version control and Odin's state, node_modules and build output
  // (a directory with a CACHEDIR.TAG, which cargo writes in target/). Fails,
  // naming why, past the limits or when the copy cannot be written.
  Status Sync();
  // Writes content as the copy of file (a path below source), in place of
  // what is on disk; the next Sync puts the disk's back.
  Status Put(const std::string& file, const std::string& content);

  // Removes the dep-info (*.d) of earlier checks, before a check: cargo's
  // freshness lives in its .fingerprint/, not in these, so what is there
  // after the check is the check's own.
  void ForgetDepInfo() const;
  // Whether a dep-info file in the target directory names file (a path
  // below source): whether what cargo built read it. rustc writes dep-info
  // even when type checking fails, with the workspace's own files relative
  // to the directory cargo ran in.
  bool Compiled(const std::string& file) const;

 private:
  struct Copied {
    int64_t mtime_ns = 0;
    int64_t size = -1;
    uint64_t inode = 0;
  };
  std::string source_;
  std::string mirror_;
  CargoMirrorLimits limits_;
  std::map<std::string, Copied> copied_;  // by path relative to source
};

}  // namespace odin

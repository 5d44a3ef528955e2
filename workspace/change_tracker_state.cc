// ChangeTracker's entries as states (the table keeps stat's word, the side
// tables the few hashes and link targets), and the before-images git's
// index holds for a look's changes, read in one pass.

#include <utility>
#include <vector>

#include "base/sha256.h"
#include "workspace/change_tracker.h"
#include "workspace/git_ignore.h"

namespace odin {

EntryState ChangeTracker::StateOf(uint32_t id) const {
  const EntryTable::Meta& m = table_.meta(id);
  EntryState s;
  s.type = static_cast<EntryType>(m.type);
  s.size = m.size;
  s.mode = m.mode;
  s.mtime_ns = m.mtime_ns;
  s.ctime_ns = m.ctime_ns;
  s.ino = m.ino;
  if (auto it = sha256_.find(id); it != sha256_.end()) s.sha256 = it->second;
  if (auto it = link_target_.find(id); it != link_target_.end()) s.link_target = it->second;
  return s;
}

void ChangeTracker::ForgetEntry(uint32_t id) {
  sha256_.erase(id);
  link_target_.erase(id);
  unscanned_.erase(id);
}

void ChangeTracker::SetState(uint32_t id, const EntryState& s) {
  EntryTable::Meta& m = table_.meta(id);
  m.type = static_cast<uint8_t>(s.type);
  m.size = s.size;
  m.mode = static_cast<uint16_t>(s.mode);
  m.mtime_ns = s.mtime_ns;
  m.ctime_ns = s.ctime_ns;
  m.ino = s.ino;
  if (s.sha256.empty()) {
    sha256_.erase(id);
  } else {
    sha256_[id] = s.sha256;
  }
  if (s.link_target.empty()) {
    link_target_.erase(id);
  } else {
    link_target_[id] = s.link_target;
  }
}

void ChangeTracker::FromIndex(ChangeSet* out) {
  if (from_index_.empty()) return;
  // One pass over git's index for all of them (a checkout of thousands of
  // files must not read it thousands of times): a file's bytes before are
  // the index's when git's recorded stat says the file was what git
  // committed or staged.
  std::vector<std::pair<std::string, GitIgnore::IndexedStat>> files;
  for (size_t i : from_index_) {
    const EntryState& b = *out->changes[i].before;
    files.push_back({out->changes[i].path, {b.size, b.mode, b.mtime_ns, b.ctime_ns, b.ino}});
  }
  std::vector<std::optional<std::string>> blobs = ignore_->IndexedContents(files, o_.image_cap_bytes);
  std::vector<bool> touched(out->changes.size(), false);
  for (size_t k = 0; k < from_index_.size(); ++k) {
    if (!blobs[k]) continue;
    PathChange& change = out->changes[from_index_[k]];
    std::string sha = Sha256Hex(*blobs[k]);
    if (!change.before->sha256.empty() && change.before->sha256 != sha) continue;
    change.before->sha256 = sha;
    change.before_content = std::move(blobs[k]);
    // Touched, not changed.
    touched[from_index_[k]] = change.kind == ChangeKind::kModified && change.after && change.after->sha256 == sha &&
                              change.after->mode == change.before->mode;
  }
  from_index_.clear();
  size_t kept = 0;
  for (size_t i = 0; i < out->changes.size(); ++i) {
    if (touched[i]) continue;
    if (kept != i) out->changes[kept] = std::move(out->changes[i]);
    ++kept;
  }
  out->changes.resize(kept);
}

}  // namespace odin

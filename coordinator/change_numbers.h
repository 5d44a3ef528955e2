#pragma once
// Every change the coordinator records, of any source (a command's change
// set, a file tool's write, an external change), numbered in order: a
// path's last change, an ignored directory's (under one, the tracker knows
// only which directory changed), a tree that landed whole (counted, not
// listed). Commands over overlays run side by side: one asks what changed
// after it started (the number then, Call::start_change), which is a
// conflict for it.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace odin {

class ChangeNumbers {
 public:
  // The number of the last change (0: none yet).
  uint64_t now() const { return count_; }
  // Paths are relative to the workspace.
  void Path(const std::string& relative) { paths_[relative] = ++count_; }
  void IgnoredDir(const std::string& relative) { ignored_dirs_[relative] = ++count_; }
  void Tree(const std::string& relative) { trees_[relative] = ++count_; }

  // Whether the path's last change came after start (a deletion counts).
  bool PathSince(const std::string& relative, uint64_t start) const;
  // Whether the path changed after start: itself, a tree above it that
  // landed whole, or an ignored directory it is in.
  bool ChangedSince(const std::string& relative, uint64_t start) const;

  // Forgets the numbers at or before oldest (no command can ask about them
  // any more: one asks only of those after its start, and one not
  // dispatched yet starts after all), once there are more than `many`: a
  // long session's numbers do not grow without end.
  void ForgetUpTo(uint64_t oldest, size_t many = 4096);
  size_t size() const { return paths_.size() + ignored_dirs_.size() + trees_.size(); }

 private:
  uint64_t count_ = 0;
  std::map<std::string, uint64_t> paths_, ignored_dirs_, trees_;
};

}  // namespace odin

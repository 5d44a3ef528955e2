#pragma once
// ChangeDigest: one value that stands for the workspace's content, kept from
// the changes the coordinator records (a command's change set, a file
// tool's write, a hook's, what changed by no call), never by looking at the
// tree. The stall detector compares it before and after a turn: "the same
// call again after a real change" is not a loop.
//
// Each path named adds (what it holds now) minus (what it held before its
// first change seen), so a file rewritten with the same bytes, or put back
// as it was, changes nothing; the value is "" while everything is as it was.
// A change whose content before or after is not known counts as a change,
// and so does one no path names (a change set cut short, changes not
// tracked): a spurious "change" at most, never a missed one. Changes under
// directories git ignores are left out by the caller: a test run rewrites
// its caches every time, which is no progress.
//
// Not a security boundary: 64 bits that tell states of one workspace apart.
//
// Thread-safety: none.

#include <cstdint>
#include <string>
#include <unordered_map>

namespace odin {

class ChangeDigest {
 public:
  // What a path holds, as a token: a regular file's hex SHA-256 ("" when not
  // known), kAbsent when nothing is there, or another type's description.
  static constexpr const char* kAbsent =
      "\x01"
      "absent";

  // path (relative to the workspace) went from before to after.
  void Note(const std::string& path, const std::string& before, const std::string& after);
  // Something changed that no path with its content names.
  void NoteUnknown() { ++unknown_; }
  // "" while nothing differs from the start; else 16 hex digits and a count.
  std::string Value() const;
  size_t paths() const { return paths_.size(); }

 private:
  uint64_t Token(const std::string& path, const std::string& content);

  struct Seen {
    uint64_t base = 0;  // before its first change seen
    uint64_t now = 0;
  };
  std::unordered_map<std::string, Seen> paths_;
  uint64_t sum_ = 0;      // of now - base over paths_ (mod 2^64)
  uint64_t unknown_ = 0;  // changes of unknown content
};

}  // namespace odin

#pragma once
// LedgerAnchor: the head of a ledger's hash chain, kept outside the workspace.
//
// The chain alone cannot tell a ledger whose newest records were deleted (or
// which was truncated, or removed) from a ledger that is simply short: every
// prefix of a valid chain is valid. So after each commit the ledger's writer
// also records its newest record (sequence number and hash) in the user's
// state directory, where the workspace and its sandboxes do not reach:
//
//   $XDG_STATE_HOME/odin/ledgers/<hash of the ledger's path>.anchor
//   (default ~/.local/state/odin/ledgers/), holding that path too.
//
// A ledger that ends before its anchor, or whose record at the anchor has
// another hash, has lost records; Ledger refuses to open it (it is never
// silently replaced) and Verify() names what is missing.
//
// Several processes append to one ledger (the daemon's sessions, odin -p
// beside it). The anchor only moves forward: Advance() holds an exclusive
// flock on the anchor file, reads it, and writes the new head only if it is
// past the old one (readers take a shared flock). Deliberately starting over
// (odin ledger reset) starts a new generation; a writer still holding the
// old ledger open cannot move the new generation's anchor.
//
// The file is written in place, never replaced: it holds two slots, each a
// checksummed line, written alternately, so a write torn by a crash leaves
// the other slot (one commit older) to read. (Replacing the file by rename
// costs ~0.8 ms per commit on ext4, which flushes a file renamed over
// another; a write in place costs microseconds.) The anchor is not fsynced
// (neither is each ledger commit, see ledger.cc): both survive a crash of
// the process, not necessarily of the machine.
//
// Thread-safety: none; one LedgerAnchor belongs to one Ledger.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace odin {

// One deliberate reset (odin ledger reset).
struct AnchorReset {
  int64_t at_ms = 0;         // when, wall clock
  int64_t anchored_seq = 0;  // the old chain's anchored head
  std::string anchored_hash;
  int64_t found_seq = 0;  // the old ledger's own head when it was moved (-1: unreadable, 0: none)
  std::string moved_to;   // where the old ledger file went; "" if there was none
};

struct AnchorState {
  std::string ledger;               // the ledger's absolute path
  int64_t generation = 0;           // resets so far
  int64_t seq = 0;                  // the newest anchored record; 0: none yet
  std::string hash;                 // its hash ("" when seq is 0)
  std::vector<AnchorReset> resets;  // oldest first; the last kKeptResets
};

// How many resets an anchor remembers.
constexpr size_t kKeptResets = 8;

class LedgerAnchor {
 public:
  // $XDG_STATE_HOME/odin/ledgers if XDG_STATE_HOME is an absolute path, else
  // $HOME/.local/state/odin/ledgers. NotFound if neither is set.
  static StatusOr<std::string> DefaultDir();

  // The anchor of the ledger at ledger_path (absolute) in dir. Nothing is
  // created until a write.
  LedgerAnchor(std::string dir, std::string ledger_path);
  ~LedgerAnchor();
  LedgerAnchor(const LedgerAnchor&) = delete;
  LedgerAnchor& operator=(const LedgerAnchor&) = delete;

  const std::string& path() const { return path_; }

  // Creates the directory (0700) and opens (creates, 0600) the anchor file,
  // so that a writer learns at once whether it can keep the anchor.
  Status Prepare();

  // The anchor as stored; nullopt if there is none yet. Corruption naming the
  // file if it cannot be parsed or belongs to another ledger.
  StatusOr<std::optional<AnchorState>> Read() const;

  // Moves the anchor to (seq, hash) of the given generation, creating the
  // directory (0700) and the anchor if needed. Does nothing if the anchor
  // already holds seq or a later record of that generation. Returns
  // FailedPrecondition if the anchor is of a later generation (the ledger was
  // reset after this writer opened it), and Corruption if it holds another
  // hash for the same record (the ledger was shortened and written again).
  Status Advance(int64_t generation, int64_t seq, const std::string& hash);

  // Runs fn with the anchor's lock held and the anchor as stored; if fn
  // returns a state, it replaces the anchor. For odin ledger reset.
  Status Update(const std::function<StatusOr<std::optional<AnchorState>>(const std::optional<AnchorState>&)>& fn);

 private:
  Status Lock();
  void Unlock();

  std::string dir_;
  std::string ledger_;
  std::string path_;
  int fd_ = -1;          // read-write, opened by Prepare and kept
  uint64_t writes_ = 0;  // the newest slot's write counter, as last read under the lock
};

}  // namespace odin

#pragma once
// Taking a session up again (--resume ID, --continue): which session, whether
// it may be resumed, and what a crash left behind.
//
// A session is resumable when it is an agent session of this workspace's
// ledger, the ledger's hash chain verifies, and no live odin process owns it
// (each process records itself as the owner, with its pid, the kernel's boot
// id and the process's start time, so a reused pid is not mistaken for it).
// Calls the previous process started and never ended (it was killed, the
// machine lost power) get an `interrupted` end record: appended, never an
// edit of a row.

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace odin {

class Ledger;
struct ConversationEntry;

// The session to resume: `id` (a full id or a unique prefix), or with
// newest, the workspace's newest agent session. Errors name the problem in
// one line: no such session, not an agent session, a broken chain, a live
// owner.
StatusOr<std::string> PickResumableSession(const std::string& ledger_path, const std::string& id, bool newest);

// Appends an `interrupted` end for each call of the session that started and
// never ended. Returns their ids.
StatusOr<std::vector<std::string>> EndInterruptedCalls(Ledger* ledger, const std::string& session_id, int64_t now_ms);

// The pid of the odin process that owns the session and runs now, as its
// conversation's newest "owner" entry says (same boot, same process start
// time: a reused pid is not it); 0 when none does.
int64_t RunningOwner(const std::vector<ConversationEntry>& entries);

// This process as the owner of a session: the content of an "owner" entry
// of the conversation's record.
std::string SessionOwnerJson();

// Whether a session of this kind (SessionRecord::kind) can be taken up:
// an agent's, not odin exec's.
bool ResumableKind(const std::string& kind);

// Whether the session's last owner ran since the machine last started (its
// boot id is this boot's), as its conversation's record (entries) says;
// true when no owner was recorded.
bool LastRanOnThisBoot(const std::vector<ConversationEntry>& entries);

// Why a resume leaves in its overlay what a command a crash cut off wrote,
// or "" when a resume applies it: one rule for the resume and for doctor's
// account of it. kind is the session's (SessionRecord::kind); call_ended
// whether the call has an end record (an earlier resume closed it);
// same_boot as LastRanOnThisBoot; may_hold whether a workflow or a reviewer
// that can hold is on (their holds went with the process).
std::string WhyAResumeLeavesWrites(const std::string& kind, bool call_ended, bool same_boot, bool may_hold);

}  // namespace odin

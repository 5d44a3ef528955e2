#pragma once
// Rewind and fork, as Claude Code offers them: a session taken back to
// before one of its messages, or continued as a copy under a new id.
//
// A rewind puts back what the message's calls and every later call of its
// session changed (the files, through odin undo: workspace/undo.h) and takes
// the conversation back to before the message (a "rewind" entry of the
// ledger's conversation record; planner/conversation_log.h). It is all or
// nothing: when a file changed since outside those calls (a conflict) or a
// change cannot be undone, nothing is rewound and the files are named.
// Either half alone: code only, conversation only. A gate event "rewind"
// records it, with the calls it took back: their reads leave the agent's
// file cache, as a compaction's masked calls do.
//
// A fork copies a session's messages and its main agent's conversation to a
// new session, which a resume then takes up; the original is left as it
// was. The fork's first record, a gate event "session_forked" with
// {"from_session", "forked_at_ms"}, names the original and when it was
// copied: a resume of the fork (Coordinator::ResumeSession) replays what
// the original did up to then (its file cache, todo list, the files' last
// verdicts: a blocked session's fork is blocked too).
//
// Neither touches a session a live process runs (session/resume.h).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"

namespace odin {

class Ledger;

struct RewindRequest {
  std::string message_id;    // a user message's id or unique prefix
  std::string session_id;    // when not empty: the message must be of this session
  bool code = true;          // put the files back
  bool conversation = true;  // take the conversation back
};

struct RewindOutcome {
  std::string message_id;  // in full
  std::string session_id;
  std::string agent_id;
  std::string undo_execution;         // "" when no file was put back
  std::vector<std::string> calls;     // the calls taken back, oldest first
  std::vector<std::string> paths;     // display paths put back
  std::vector<std::string> warnings;  // git's HEAD moved since, ...
  std::string gate_detail_json;       // what the "rewind" gate event records
};

// Rewinds. record_gate_event records the gate event once the files are
// back (a live coordinator's, so its cache forgets; or the ledger's), then
// conversation_rewind does the conversation's half (a live agent's
// Agent::Rewind, which the caller has checked is idle, or
// RewindRecordedConversation). Checks everything before changing anything;
// FailedPrecondition naming the conflicts when the undo refuses. The calls
// taken back are those made since the message started, in its session and,
// for a message a fork copied, in the session it was copied from until
// the copy.
StatusOr<RewindOutcome> RewindSession(Ledger* ledger, const std::string& workspace_root, const RewindRequest& request,
                                      const std::function<Status(const std::string& message_id)>& conversation_rewind,
                                      const std::function<Status(const RewindOutcome&)>& record_gate_event,
                                      int64_t now_ms);

// The conversation's half for a session no process runs: a "rewind" entry
// appended to its agent's record, checked first (CanRewindTo).
Status RewindRecordedConversation(Ledger* ledger, const std::string& session_id, const std::string& agent_id,
                                  const std::string& message_id, int64_t now_ms);

// Copies the session (its full id) to a new one; returns the new id.
// Refused for a session that is not an agent's.
StatusOr<std::string> ForkSession(Ledger* ledger, const std::string& session_id, int64_t now_ms);

}  // namespace odin

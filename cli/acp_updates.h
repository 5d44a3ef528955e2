#pragma once
// What an ACP client (an editor driving `odin acp`: docs/acp.md) hears of
// an Odin session: the session's events (session/session_events.h) as the
// Agent Client Protocol's `session/update` payloads, its approvals as
// `session/request_permission`, a message's end as a stop reason.
//
// Everything here is built from the events, which the coordinator made:
// what an editor shows is what the ledger records, never the model's word.
// Paths go out absolute (ACP's rule), joined to the workspace's root.
//
// Thread-safety: an AcpUpdates belongs to one session's event reader.

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"
#include "llm/llm.h"
#include "odin/v1/coordinator.pb.h"
#include "tools/tool_catalog.h"

namespace odin {

class AcpUpdates {
 public:
  explicit AcpUpdates(std::string workspace_root) : root_(std::move(workspace_root)) {}

  // The `update` objects (JSON text) the event makes, in order; none for
  // what an editor has no place for (model calls, gate records).
  std::vector<std::string> Of(const v1::SessionEvent& e);

 private:
  std::string root_;
  std::map<std::string, std::string> tools_;  // a running call's execution id -> its tool
};

// session/request_permission's params for an approval the coordinator
// waits on. "Always allow" is offered only where the approval may be
// saved (the request names a saved_key).
std::string AcpPermissionParams(const std::string& session_id, const v1::ApprovalRequested& a);
// The answer (HostedSession::Approve's) that the option the client chose
// gives: "once", "workspace" or, for anything else, "deny".
std::string AcpApprovalAnswer(const std::string& option_id);
// session/prompt's stopReason for a message's final status (run_outcome's):
// cancelled is "cancelled", a spent budget "max_turn_requests", the rest
// "end_turn" (the status itself goes in the response's _meta).
std::string AcpStopReason(const std::string& status);

// The session's modes as ACP's SessionModeState (JSON text): ask, plan and
// edit, current the one named.
std::string AcpModes(Mode current);

// The message a prompt's content blocks make: text as written; a file the
// editor links, by its path; an embedded resource's text (an editor's
// buffer, as the user sees it) quoted with its name. InvalidArgument for
// anything else (images, audio) or an empty message.
StatusOr<std::string> AcpPromptText(const nlohmann::json& blocks);

// session/load's replay of a conversation (as the model last saw it): the
// user's and the model's words as chunks, each call as a tool call and its
// end, by name and status (JSON texts of `update` objects).
std::vector<std::string> AcpReplayUpdates(const std::vector<ChatMessage>& history);

// The old and new text of each hunk of a unified diff of one file, for
// ACP's "diff" content (whole files are never sent; a hunk is its lines
// with their context). new_file: the diff creates the file.
struct AcpHunk {
  std::string old_text;
  std::string new_text;
  bool new_file = false;
};
std::vector<AcpHunk> HunksOfDiff(const std::string& unified_diff);

}  // namespace odin

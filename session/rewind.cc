#include "session/rewind.h"

#include "workspace/isolated_views.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include <nlohmann/json.hpp>

#include "base/ids.h"
#include "base/json_input.h"
#include "ledger/forks.h"
#include "ledger/ledger.h"
#include "planner/conversation_log.h"
#include "session/resume.h"
#include "tools/workspace_path.h"
#include "workspace/undo.h"

namespace odin {

using nlohmann::json;

namespace {

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string Joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : "; ") + s;
  return out;
}

// The calls made since since_ms in the session and, for a fork, in the
// sessions it was copied from until the copy (a message copied by a fork
// had its calls there), oldest first. Refused for a message copied into a
// fork that works in a view.
StatusOr<std::vector<std::string>> CallsSince(Ledger* ledger, std::string session, int64_t since_ms) {
  std::vector<std::string> calls;
  int64_t until = INT64_MAX;
  for (int depth = 0; depth < 64 && !session.empty(); ++depth) {
    ASSIGN_OR_RETURN(std::vector<std::string> own, CallsBetween(ledger, session, since_ms, until));
    calls.insert(calls.begin(), own.begin(), own.end());
    ASSIGN_OR_RETURN(std::vector<GateEvent> events, ledger->ListGateEvents(session));
    std::optional<ForkOrigin> origin;
    bool in_view = false;
    for (const GateEvent& e : events) {
      if (!origin) origin = ForkOriginIn(e);
      in_view = in_view || e.kind == kIsolatedViewEvent;
    }
    if (!origin || since_ms > origin->at_ms) break;
    // A fork isolated in a view works on a copy made at the fork: what the
    // session it was copied from did is the view's base, not its change,
    // and cannot be taken back there.
    if (in_view) {
      return Status::FailedPrecondition(
          "rewind", "that message was copied from session " + origin->session_id +
                        " before this session's view was made: the view starts after it; rewind to a message "
                        "sent in this session");
    }
    session = origin->session_id;
    until = std::min(until, origin->at_ms);
  }
  return calls;
}

}  // namespace

StatusOr<RewindOutcome> RewindSession(Ledger* ledger, const std::string& workspace_root, const RewindRequest& request,
                                      const std::function<Status(const std::string& message_id)>& conversation_rewind,
                                      const std::function<Status(const RewindOutcome&)>& record_gate_event,
                                      int64_t now_ms) {
  if (!request.code && !request.conversation) {
    return Status::InvalidArgument("rewind", "nothing to rewind: neither the files nor the conversation");
  }
  ASSIGN_OR_RETURN(MessageRecord message, ledger->FindMessage(request.message_id));
  if (message.role != "user") {
    return Status::InvalidArgument("message " + message.id, "is the agent's answer: rewind to one of your messages");
  }
  if (!request.session_id.empty() && message.session_id != request.session_id) {
    return Status::InvalidArgument("message " + message.id, "is of another session (" + message.session_id + ")");
  }
  if (message.agent_id != "main") {
    return Status::InvalidArgument("message " + message.id, "is a subagent's task: rewind to one of your messages");
  }
  RewindOutcome out;
  out.message_id = message.id;
  out.session_id = message.session_id;
  out.agent_id = message.agent_id;
  // Everything is checked before anything changes.
  ASSIGN_OR_RETURN(std::vector<ConversationEntry> entries,
                   ledger->ListConversation(message.session_id, message.agent_id));
  if (request.conversation) RETURN_IF_ERROR(CanRewindTo(entries, message.id));
  // From when the message started, not when it was sent: one typed while
  // another ran waited its turn, and that one's later calls are not its.
  int64_t since = message.created_at_ms;
  for (const ConversationEntry& e : entries) {
    if (e.kind != "message_start") continue;
    json j = ParseJson(e.content_json);
    if (j.is_object() && j.value("message_id", json()) == json(message.id)) since = e.created_at_ms;
  }
  ASSIGN_OR_RETURN(out.calls, CallsSince(ledger, message.session_id, since));
  if (request.code && !out.calls.empty()) {
    ASSIGN_OR_RETURN(UndoPlan plan, PlanUndo(ledger, workspace_root, out.calls));
    std::vector<std::string> refused = plan.conflicts;
    refused.insert(refused.end(), plan.not_undoable.begin(), plan.not_undoable.end());
    if (!refused.empty()) {
      return Status::FailedPrecondition("rewind",
                                        "nothing was rewound: the files cannot be put back as they were "
                                        "before message " +
                                            message.id + ": " + Joined(refused));
    }
    out.warnings = plan.warnings;
    if (!plan.steps.empty()) {
      ASSIGN_OR_RETURN(out.undo_execution, ApplyUndo(ledger, workspace_root, plan, /*force=*/false, now_ms));
      for (const UndoStep& step : plan.steps) out.paths.push_back(DisplayPath(step.path, workspace_root));
    }
  }
  // "masked" and "files" as a compaction's: the model no longer sees what
  // those calls read, and the files put back changed under its cache.
  // Recorded before the conversation goes back: should that fail, the
  // cache has forgotten reads the conversation still holds (the model reads
  // again), never the other way round.
  out.gate_detail_json = Dump({{"message_id", message.id},
                               {"code", request.code},
                               {"conversation", request.conversation},
                               {"undo", out.undo_execution},
                               {"calls", out.calls},
                               {"masked", request.conversation ? out.calls : std::vector<std::string>{}},
                               {"files", out.paths}});
  RETURN_IF_ERROR(record_gate_event(out));
  if (request.conversation) RETURN_IF_ERROR(conversation_rewind(message.id));
  return out;
}

Status RewindRecordedConversation(Ledger* ledger, const std::string& session_id, const std::string& agent_id,
                                  const std::string& message_id, int64_t now_ms) {
  ASSIGN_OR_RETURN(std::vector<ConversationEntry> entries, ledger->ListConversation(session_id, agent_id));
  RETURN_IF_ERROR(CanRewindTo(entries, message_id));
  return ledger->AddConversation(
      {{NewId("conv"), session_id, agent_id, "rewind", Dump({{"message_id", message_id}}), now_ms}});
}

StatusOr<std::string> ForkSession(Ledger* ledger, const std::string& session_id, int64_t now_ms) {
  ASSIGN_OR_RETURN(SessionRecord from, ledger->FindSession(session_id));
  if (!ResumableKind(from.kind)) {
    return Status::InvalidArgument("session " + from.id,
                                   "is an `odin " + from.kind + "` session, not an agent's: nothing to fork");
  }
  // A copy would run in the workspace itself, not in the view.
  ASSIGN_OR_RETURN(std::vector<GateEvent> events, ledger->ListGateEvents(from.id));
  for (const GateEvent& e : events) {
    if (e.kind == kIsolatedViewEvent) {
      return Status::InvalidArgument("session " + from.id,
                                     "ran in an isolated view: it cannot be copied (odin apply or discard it)");
    }
  }
  ASSIGN_OR_RETURN(std::vector<MessageRecord> messages, ledger->ListMessages(from.id));
  ASSIGN_OR_RETURN(std::vector<ConversationEntry> entries, ledger->ListConversation(from.id, "main"));
  // The session's own record comes last: until it is written, what was
  // copied belongs to no session anyone lists or resumes.
  std::string id = NewId("ses");
  RETURN_IF_ERROR(ledger->AddGateEvent(ForkRecord(id, {from.id, now_ms})));
  // The copies get ids of their own (a message id names one message of one
  // session), and the conversation's entries name the copies.
  std::map<std::string, std::string> renamed;
  for (MessageRecord m : messages) {
    std::string copy = NewId("msg");
    renamed[m.id] = copy;
    m.id = copy;
    m.session_id = id;
    RETURN_IF_ERROR(ledger->AddMessage(m));
  }
  std::vector<ConversationEntry> copies;
  for (ConversationEntry e : entries) {
    if (e.kind == "owner") continue;  // the fork's owner is whoever takes it up
    json content = ParseJson(e.content_json);
    if (content.is_object() && content.contains("message_id") && content["message_id"].is_string()) {
      auto it = renamed.find(content["message_id"].get<std::string>());
      if (it != renamed.end()) {
        content["message_id"] = it->second;
        e.content_json = Dump(content);
      }
    }
    e.id = NewId("conv");
    e.session_id = id;
    copies.push_back(std::move(e));
  }
  RETURN_IF_ERROR(ledger->AddConversation(copies));
  RETURN_IF_ERROR(ledger->AddSession({id, from.kind, from.workspace, now_ms}));
  return id;
}

}  // namespace odin

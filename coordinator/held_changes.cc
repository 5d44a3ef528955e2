// Changes held back: what a command changed that a rule does not allow is
// put back as it was before anything records it. The strict profile's
// evidence rule (HoldToEvidence) and the reviewers' and workflows' mutation
// holds (CheckHold, HoldCommand: planner/tool_host.h's MutationHold).

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "workspace/workspace_files.h"
#include "coordinator/coordinator.h"
#include "odin/v1/worker.pb.h"
#include "planner/workflows.h"
#include "tools/tool_catalog.h"
#include "tools/workspace_path.h"

namespace odin {

using nlohmann::json;

namespace {

// Puts a file a command changed back as it was, through the safe file
// layer: nothing is made or written through a symlink the command may have
// put on the way (it swapped a directory for one).
Status PutBack(const WorkspaceFiles* ws, const PathChange& change) {
  if (ws == nullptr) return Status::Unavailable(change.path, "the workspace cannot be opened");
  size_t slash = change.path.rfind('/');
  if (slash != std::string::npos) RETURN_IF_ERROR(ws->MakeDirs(change.path.substr(0, slash)));
  return ws->WriteFile(change.path, *change.before_content, static_cast<mode_t>(change.before->mode & 07777));
}

// Tells the model, at the end of the command's output, why its changes were
// put back and which.
void TellPutBack(std::string note, const std::vector<std::string>& put_back, const json& kept, v1::ToolResult* result) {
  if (!put_back.empty()) {
    note += " Put back as they were:";
    for (const std::string& p : put_back) note += " " + p;
    note += ".";
  }
  if (!kept.empty()) {
    note += " Could not be put back:";
    for (const auto& [p, why] : kept.items()) note += " " + p + " (" + why.get<std::string>() + ")";
    note += ".";
  }
  note += "\n";
  result->set_output_tail(result->output_tail() + note);
  result->set_output_total_bytes(result->output_total_bytes() + note.size());
}

// Removes a file a command created (not a directory; not through a symlink).
Status TakeAway(const WorkspaceFiles* ws, const PathChange& change) {
  if (ws == nullptr) return Status::Unavailable(change.path, "the workspace cannot be opened");
  if (ws->Look(change.path).is_dir()) return Status::FailedPrecondition(change.path, "a directory is there now");
  return ws->Remove(change.path);
}

struct PutBackOutcome {
  std::vector<std::string> put_back;
  json kept = json::object();  // path -> why it could not be put back
  std::string first_reason;    // of the first change refused
};

// Puts back each change `refuse` gives a reason for (an existing file as it
// was; with take_away, one the command created is removed), through the
// safe file layer, and takes it out of the change set; the tracker hears
// that it is as it was.
PutBackOutcome PutBackRefused(ChangeSet* changes, const std::function<Status(const PathChange&)>& refuse,
                              bool take_away, const WorkspaceFiles* ws, ChangeTracker* tracker) {
  PutBackOutcome out;
  for (auto it = changes->changes.begin(); it != changes->changes.end();) {
    const PathChange& pc = *it;
    Status refused = refuse(pc);
    if (refused.ok()) {
      ++it;
      continue;
    }
    if (out.first_reason.empty()) out.first_reason = refused.ToString();
    Status put = !pc.before && take_away ? TakeAway(ws, pc)
                 : pc.before_content     ? PutBack(ws, pc)
                                         : Status::FailedPrecondition(pc.path, "its content before was not kept");
    if (!put.ok()) {
      out.kept[pc.path] = put.message();
      ++it;
      continue;
    }
    if (pc.before && tracker) tracker->NoteWrite(pc.path, pc.before->sha256, &*pc.before_content);
    out.put_back.push_back(pc.path);
    it = changes->changes.erase(it);
  }
  return out;
}

}  // namespace

void Coordinator::HoldToEvidence(const Call& c, ChangeSet* changes, v1::ToolResult* result) {
  std::vector<std::string> grounded_paths;
  auto refuse = [&](const PathChange& pc) {
    // A file the command made has nothing to have analysed.
    if (!pc.before || pc.before->type != EntryType::kFile) return Status::OK();
    Status grounded = CheckEvidence(c, c.evidence, JoinPath(o_.workspace, pc.path), true);
    if (grounded.ok()) grounded_paths.push_back(pc.path);
    return grounded;
  };
  auto [put_back, kept, first_reason] =
      PutBackRefused(changes, refuse, /*take_away=*/false, WorkspaceLayer(), tracker_.get());
  if (!grounded_paths.empty()) {
    // What the report's "why" shows for these changes.
    RecordGateEvent(
        c.call.agent_id, c.call.message_id, "evidence", c.call.execution_id,
        json({{"tool", c.call.tool}, {"paths", grounded_paths}, {"evidence", c.evidence}, {"decision", "allow"}})
            .dump(-1, ' ', false, json::error_handler_t::replace));
  }
  if (put_back.empty() && kept.empty()) return;
  RecordGateEvent(c.call.agent_id, c.call.message_id, "evidence", c.call.execution_id,
                  json({{"tool", c.call.tool},
                        {"decision", "put_back"},
                        {"evidence", c.evidence},
                        {"put_back", put_back},
                        {"could_not_put_back", kept},
                        {"reason", first_reason}})
                      .dump(-1, ' ', false, json::error_handler_t::replace));
  std::string note =
      "\n[odin] strict profile: the command changed files without your analysis of them in this "
      "message (cite the execution ids of symbols, references, impact or outline calls that covered "
      "them in \"evidence\"; a Read for files the index does not parse).";
  TellPutBack(note, put_back, kept, result);
}

void Coordinator::SetMutationHold(const std::string& agent_id, MutationHold hold) {
  json detail = {{"rule", hold.rule}, {"reason", hold.reason}, {"allowed", hold.allowed}};
  if (!holds_.Set(agent_id, std::move(hold))) return;
  RecordGateEvent(agent_id, "", "mutation_hold", "", detail.dump(-1, ' ', false, json::error_handler_t::replace));
}

Status Coordinator::CheckHold(const Call& c, const std::string& path) {
  const MutationHold& hold = holds_.Of(c.call.agent_id);
  std::string shown = DisplayPath(path, o_.workspace);
  if (holds_.Allows(c.call.agent_id, shown)) return Status::OK();
  RecordGateEvent(c.call.agent_id, c.call.message_id, "hold", c.call.execution_id,
                  json({{"rule", hold.rule}, {"tool", c.call.tool}, {"path", shown}, {"decision", "deny"}})
                      .dump(-1, ' ', false, json::error_handler_t::replace));
  return Status::FailedPrecondition(hold.rule + " rule: " + shown, hold.reason);
}

void Coordinator::HoldCommand(const Call& c, ChangeSet* changes, v1::ToolResult* result) {
  const MutationHold hold = holds_.Of(c.call.agent_id);
  auto refuse = [&](const PathChange& pc) {
    return holds_.Allows(c.call.agent_id, pc.path)
               ? Status::OK()
               : Status::FailedPrecondition(hold.rule + " rule: " + pc.path, hold.reason);
  };
  auto [put_back, kept, first_reason] =
      PutBackRefused(changes, refuse, /*take_away=*/true, WorkspaceLayer(), tracker_.get());
  if (put_back.empty() && kept.empty()) return;
  // What was taken away is gone for the tracker too: a look at those paths
  // only (a whole look here would take, and drop, the outside changes it
  // found).
  if (!put_back.empty() && tracker_) {
    std::sort(put_back.begin(), put_back.end());
    tracker_->LookAtPaths(put_back);
  }
  RecordGateEvent(c.call.agent_id, c.call.message_id, "hold", c.call.execution_id,
                  json({{"rule", hold.rule},
                        {"tool", c.call.tool},
                        {"decision", "put_back"},
                        {"put_back", put_back},
                        {"could_not_put_back", kept}})
                      .dump(-1, ' ', false, json::error_handler_t::replace));
  std::string note = "\n[odin] " + hold.rule + " rule: " + hold.reason;
  TellPutBack(note, put_back, kept, result);
}

}  // namespace odin

#include "workspace/undo.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/ids.h"
#include "base/json_input.h"
#include "base/sha256.h"
#include "workspace/protected_paths.h"
#include "workspace/git_head.h"
#include "tools/unified_diff.h"
#include "tools/workspace_path.h"
#include "workspace/workspace_files.h"

namespace odin {

using nlohmann::json;

namespace {

constexpr char kUndoTool[] = "Undo";
// Files past this size are not read back for undo (their before-images are
// capped far lower).
constexpr uint64_t kMaxUndoneBytes = 1ull << 30;

// The executions earlier undos undid.
StatusOr<std::set<std::string>> UndoneCalls(Ledger* ledger) {
  std::set<std::string> undone;
  ASSIGN_OR_RETURN(std::vector<ExecutionRow> rows, ledger->ListToolExecutions(kUndoTool));
  for (const ExecutionRow& row : rows) {
    if (!row.end || row.end->status != "ok") continue;
    json args = ParseJson(row.start.args_json);
    if (!args.is_object() || !args.contains("undo") || !args["undo"].is_array()) continue;
    for (const json& id : args["undo"]) {
      if (id.is_string()) undone.insert(id.get<std::string>());
    }
  }
  return undone;
}

// Whether what is at path now is what the newest change left.
std::string Differs(const PathNow& now, const MutationRecord& last) {
  if (last.change == "deleted") return now.exists ? "it was created again since" : "";
  if (!now.exists) return "it was deleted since";
  if (last.file_type == "file") {
    if (!now.is_file) return "it is no longer a file";
    if (!last.after_sha256.empty() && now.sha256 != last.after_sha256) return "it changed since";
  } else if (last.file_type == "symlink") {
    if (!now.is_link || (!last.link_target.empty() && now.link_target != last.link_target)) {
      return "the link changed since";
    }
  } else if (last.file_type == "directory" && !now.is_dir) {
    return "it is no longer a directory";
  }
  return "";
}

// A warning for each call whose changes landed where git's HEAD was not
// where it is now.
void HeadMoves(Ledger* ledger, const std::string& workspace, const std::vector<std::string>& executions,
               std::vector<std::string>* warnings) {
  GitHead now = ReadGitHead(workspace);
  std::set<std::string> wanted(executions.begin(), executions.end());
  std::set<std::string> sessions;
  for (const std::string& id : executions) {
    StatusOr<ExecutionRow> row = ledger->FindExecution(id);
    if (row.ok()) sessions.insert(row->start.session_id);
  }
  for (const std::string& session : sessions) {
    StatusOr<std::vector<GateEvent>> events = ledger->ListGateEvents(session);
    if (!events.ok()) continue;
    for (const GateEvent& e : *events) {
      if (e.kind != "git_head" || wanted.count(e.execution_id) == 0) continue;
      json d = ParseJson(e.detail_json);
      if (!d.is_object()) continue;
      GitHead then{d.value("commit", ""), d.value("ref", "")};
      if (then == now) continue;
      warnings->push_back("git's HEAD moved since " + e.execution_id + ": it was " + then.Describe() + ", it is " +
                          now.Describe());
    }
  }
}

}  // namespace

PathNow LookNow(const WorkspaceFiles& files, const std::string& path) {
  PathNow n;
  FileEntry e = files.Look(path);
  if (!e.exists()) return n;
  n.exists = true;
  n.is_file = e.is_file();
  n.is_link = e.is_link();
  n.is_dir = e.is_dir();
  n.mode = e.mode & 07777;
  if (n.is_file) {
    StatusOr<std::string> content = files.ReadFile(path, kMaxUndoneBytes, WorkspaceFiles::Links::kNone);
    if (content.ok()) {
      n.content = std::move(*content);
      n.sha256 = Sha256Hex(n.content);
    }
  } else if (n.is_link) {
    StatusOr<std::string> target = files.ReadLink(path);
    if (target.ok()) n.link_target = *target;
  }
  return n;
}

StatusOr<std::vector<std::string>> LastChangingCall(Ledger* ledger) {
  ASSIGN_OR_RETURN(std::set<std::string> undone, UndoneCalls(ledger));
  ASSIGN_OR_RETURN(std::vector<MutationRecord> recent, ledger->ListRecentMutations(10000));
  for (const MutationRecord& m : recent) {
    if (m.execution_id.empty() || m.source == "undo" || m.change == "ignored" || undone.count(m.execution_id)) {
      continue;
    }
    return std::vector<std::string>{m.execution_id};
  }
  return Status::NotFound("undo", "no call has changed a file that is not undone already");
}

StatusOr<std::vector<std::string>> CallsOfMessage(Ledger* ledger, const std::string& message_id) {
  ASSIGN_OR_RETURN(MessageRecord message, ledger->FindMessage(message_id));
  ASSIGN_OR_RETURN(std::vector<MessageRecord> messages, ledger->ListMessages(message.session_id));
  int64_t until = INT64_MAX;
  for (const MessageRecord& m : messages) {
    if (m.role == message.role && m.agent_id == message.agent_id && m.created_at_ms > message.created_at_ms) {
      until = std::min(until, m.created_at_ms);
    }
  }
  ASSIGN_OR_RETURN(std::vector<ExecutionRow> rows, ledger->ListSessionExecutions(message.session_id));
  std::vector<std::string> calls;
  for (const ExecutionRow& row : rows) {
    if (row.start.started_at_ms >= message.created_at_ms && row.start.started_at_ms < until) {
      calls.push_back(row.start.execution_id);
    }
  }
  if (calls.empty()) return Status::NotFound("message " + message.id, "made no calls");
  return calls;
}

StatusOr<std::vector<std::string>> CallsBetween(Ledger* ledger, const std::string& session_id, int64_t since_ms,
                                                int64_t until_ms) {
  ASSIGN_OR_RETURN(std::vector<ExecutionRow> rows, ledger->ListSessionExecutions(session_id));
  std::vector<std::string> calls;
  for (const ExecutionRow& row : rows) {
    if (row.start.started_at_ms >= since_ms && row.start.started_at_ms <= until_ms) {
      calls.push_back(row.start.execution_id);
    }
  }
  return calls;
}

StatusOr<UndoPlan> PlanUndo(Ledger* ledger, const std::string& workspace, const std::vector<std::string>& executions) {
  ASSIGN_OR_RETURN(WorkspaceFiles ws, WorkspaceFiles::Open(workspace));
  UndoPlan plan;
  plan.executions = executions;
  // Each path's changes by these calls, oldest first.
  std::map<std::string, std::vector<MutationRecord>> by_path;
  std::map<std::string, int64_t> ignored;  // absolute path: changes left alone there
  for (const std::string& id : executions) {
    ASSIGN_OR_RETURN(std::vector<MutationRecord> mine, ledger->ListMutationsOf(id));
    for (MutationRecord& m : mine) {
      if (m.change == "ignored") {
        ignored[m.path] += m.entries;
        continue;
      }
      by_path[m.path].push_back(std::move(m));
    }
  }
  auto under = [](const std::string& p, const std::string& dir) {
    return p.size() > dir.size() && p.compare(0, dir.size(), dir) == 0 && p[dir.size()] == '/';
  };
  // A directory the calls made that holds what is left alone stays too
  // (pytest's .pytest_cache, whose own .gitignore ignores what is in it):
  // one line for it and what it holds.
  std::set<std::string> kept_dirs;
  for (const auto& [path, changes] : by_path) {
    // Made by these calls: its oldest change here created a directory.
    const MutationRecord& first = *std::min_element(
        changes.begin(), changes.end(),
        [](const MutationRecord& a, const MutationRecord& b) { return a.created_at_ms < b.created_at_ms; });
    if (first.change != "created" || first.file_type != "directory") continue;
    int64_t held = 0;
    for (const auto& [p, n] : ignored) held += under(p, path) ? n : 0;
    if (held == 0) continue;
    kept_dirs.insert(path);
    plan.left_alone.push_back(DisplayPath(path, workspace) + "/: made by these calls, with " + std::to_string(held) +
                              (held == 1 ? " change" : " changes") + " git ignores in it (left as it is)");
  }
  for (const auto& [p, n] : ignored) {
    if (std::any_of(kept_dirs.begin(), kept_dirs.end(), [&](const std::string& d) { return under(p, d); })) continue;
    std::string rel = DisplayPath(p, workspace);
    plan.left_alone.push_back(rel + (ws.Look(rel).is_dir() ? "/" : "") + ": " + std::to_string(n) +
                              (n == 1 ? " change" : " changes") +
                              " git ignores (never undone; the next build makes them again)");
  }
  for (auto& [path, changes] : by_path) {
    std::sort(changes.begin(), changes.end(),
              [](const MutationRecord& a, const MutationRecord& b) { return a.created_at_ms < b.created_at_ms; });
    const MutationRecord& first = changes.front();
    const MutationRecord& last = changes.back();
    std::string shown = DisplayPath(path, workspace);
    if (kept_dirs.count(path)) continue;
    UndoStep step;
    step.path = path;
    // Only inside the workspace, never through a symlinked directory, never
    // a protected path.
    StatusOr<std::string> resolved = ResolveWorkspacePath(DirName(path), workspace);
    if (!resolved.ok() || *resolved != DirName(path)) {
      plan.not_undoable.push_back(shown + ": its directory is not where it was (a symlink, or outside the workspace)");
      continue;
    }
    std::string protected_reason = ProtectedWriteReason(path, workspace);
    if (!protected_reason.empty()) {
      plan.not_undoable.push_back(shown + ": " + protected_reason);
      continue;
    }
    PathNow now = LookNow(ws, path);
    step.current_exists = now.exists;
    step.current = now.content;
    std::string differs = Differs(now, last);
    if (!differs.empty()) {
      step.conflict = true;
      step.why = differs;
      plan.conflicts.push_back(shown + ": " + differs + " (after " + last.execution_id + ")");
    }
    // What it was before the first change.
    if (first.change == "created") {
      step.action = first.file_type == "directory" ? UndoStep::Action::kRemoveDirectory : UndoStep::Action::kRemove;
    } else if (first.file_type == "directory") {
      step.action = UndoStep::Action::kMakeDirectory;
      step.mode = first.before_mode >= 0 ? first.before_mode : 0755;
    } else if (first.file_type == "symlink" && first.change == "deleted" && !first.link_target.empty()) {
      step.action = UndoStep::Action::kSymlink;
      step.link_target = first.link_target;
    } else if (first.file_type == "file" && !first.before_artifact.empty()) {
      StatusOr<std::string> image = ledger->ReadBeforeImage(first.before_artifact);
      if (!image.ok()) {
        plan.not_undoable.push_back(shown + ": its before-image is missing from the ledger");
        continue;
      }
      // What is written back must be what was recorded: an image edited
      // behind the ledger's back (its chain says so too) is not.
      if (!first.before_sha256.empty() && Sha256Hex(*image) != first.before_sha256) {
        plan.not_undoable.push_back(shown +
                                    ": its before-image does not match the hash recorded with it (the ledger "
                                    "was changed; odin ledger verify)");
        continue;
      }
      step.action = UndoStep::Action::kWriteFile;
      step.content = std::move(*image);
      step.mode = first.before_mode >= 0 ? first.before_mode : 0644;
    } else {
      plan.not_undoable.push_back(shown + ": its content before " + first.execution_id + " was not kept" +
                                  (first.note.empty() ? "" : " (" + first.note + ")"));
      continue;
    }
    plan.steps.push_back(std::move(step));
  }
  if (plan.empty()) return Status::NotFound("undo", "the calls changed nothing that can be undone");
  HeadMoves(ledger, workspace, executions, &plan.warnings);
  return plan;
}

std::string PathsPutBack(size_t n) { return std::to_string(n) + (n == 1 ? " path" : " paths") + " put back"; }

std::string RenderUndo(const UndoPlan& plan, const std::string& workspace) {
  std::string out;
  for (const UndoStep& s : plan.steps) {
    std::string shown = DisplayPath(s.path, workspace);
    std::string mark = s.conflict ? "  (conflict: " + s.why + ")" : "";
    switch (s.action) {
      case UndoStep::Action::kWriteFile: {
        DiffResult diff = UnifiedDiff(s.current_exists ? s.current : "", s.content, shown);
        out += (s.current_exists ? "restore " : "recreate ") + shown + mark + "\n" + diff.text;
        break;
      }
      case UndoStep::Action::kRemove: out += "remove " + shown + mark + "\n"; break;
      case UndoStep::Action::kRemoveDirectory: out += "remove directory " + shown + " (if empty)" + mark + "\n"; break;
      case UndoStep::Action::kMakeDirectory: out += "recreate directory " + shown + mark + "\n"; break;
      case UndoStep::Action::kSymlink: out += "recreate link " + shown + " -> " + s.link_target + mark + "\n"; break;
    }
  }
  for (const std::string& n : plan.not_undoable) out += "cannot undo " + n + "\n";
  for (const std::string& n : plan.left_alone) out += "left alone: " + n + "\n";
  return out;
}

StatusOr<std::string> ApplyUndo(Ledger* ledger, const std::string& workspace, const UndoPlan& plan, bool force,
                                int64_t now_ms) {
  if (!force && (!plan.conflicts.empty() || !plan.not_undoable.empty())) {
    std::string why;
    for (const std::string& c : plan.conflicts) why += "\n  " + c;
    for (const std::string& n : plan.not_undoable) why += "\n  cannot undo " + n;
    return Status::FailedPrecondition("undo", "nothing was changed; --force overrides:" + why);
  }
  return ApplySteps(
      ledger, workspace, plan.steps,
      {"undo", kUndoTool, json({{"undo", plan.executions}, {"force", force}}).dump(), "undo", PathsPutBack}, now_ms);
}

StatusOr<std::string> ApplySteps(Ledger* ledger, const std::string& workspace, const std::vector<UndoStep>& steps,
                                 const StepsRecord& record, int64_t now_ms, std::string* execution_id) {
  ASSIGN_OR_RETURN(WorkspaceFiles ws, WorkspaceFiles::Open(workspace, WorkspaceFiles::Ownership::kParents));
  std::string session = NewId("ses");
  std::string id = NewId("ex");
  if (execution_id != nullptr) *execution_id = id;
  RETURN_IF_ERROR(ledger->AddSession({session, record.session_kind, workspace, now_ms}));
  RETURN_IF_ERROR(
      ledger->AddExecutionStart({id, session, "user", record.tool, record.args_json, "edit", "", now_ms, ""}));
  // Directories first (shallowest first), then files and links, then the
  // directories the calls created (deepest first, if empty now).
  std::vector<const UndoStep*> order;
  for (const UndoStep& s : steps) order.push_back(&s);
  auto rank = [](const UndoStep* s) {
    return s->action == UndoStep::Action::kMakeDirectory ? 0 : s->action == UndoStep::Action::kRemoveDirectory ? 2 : 1;
  };
  std::stable_sort(order.begin(), order.end(), [&](const UndoStep* a, const UndoStep* b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return rank(a) == 2 ? a->path.size() > b->path.size() : a->path.size() < b->path.size();
  });
  std::vector<MutationRecord> records;
  std::vector<BeforeImage> images;
  std::vector<std::string> failed;
  // Each step is checked again as it is applied, through the safe file
  // layer: an earlier step may have made a symlink on a later one's way
  // (security review 3, finding 3: "recreate link x -> /outside", then
  // "remove x/authorized_keys"), and nothing is written, removed or made
  // through one.
  for (const UndoStep* s : order) {
    PathNow now = LookNow(ws, s->path);
    MutationRecord m;
    m.id = NewId("mut");
    m.session_id = session;
    m.agent_id = "user";
    m.execution_id = id;
    m.source = record.source;
    m.path = s->path;
    m.created_at_ms = now_ms;
    if (s->landed) {
      // Recorded as the first try would have: before is the base.
      now = PathNow();
      now.exists = s->base_exists;
      now.is_file = s->base_content.has_value();
      if (s->base_content) {
        now.content = *s->base_content;
        now.sha256 = Sha256Hex(now.content);
      }
    }
    if (now.exists) {
      m.before_size = static_cast<int64_t>(now.content.size());
      if (now.is_file) {
        m.before_sha256 = now.sha256;
        images.push_back({now.sha256, now.content});
      }
      m.link_target = now.link_target;
    }
    m.undoable = !now.exists || now.is_file || now.is_dir || now.is_link;
    Status done;
    // A landed step's write is skipped, its record made as for any.
    auto act = [&](const std::function<Status()>& write) {
      if (!s->landed) done = write();
    };
    switch (s->action) {
      case UndoStep::Action::kWriteFile:
        if (now.is_dir && !s->landed) {
          done = Status::FailedPrecondition(s->path, "a directory is there now");
          break;
        }
        act([&] { return ws.WriteFile(s->path, s->content, static_cast<mode_t>(s->mode & 07777)); });
        m.change = now.exists ? "modified" : "created";
        m.file_type = "file";
        m.after_sha256 = Sha256Hex(s->content);
        m.after_size = static_cast<int64_t>(s->content.size());
        m.after_mode = s->mode;
        break;
      case UndoStep::Action::kSymlink:
        act([&] {
          return now.is_dir ? Status::FailedPrecondition(s->path, "a directory is there now")
                            : ws.Symlink(s->link_target, s->path);
        });
        m.change = now.exists ? "modified" : "created";
        m.file_type = "symlink";
        m.link_target = s->link_target;
        break;
      case UndoStep::Action::kMakeDirectory:
        if (!now.is_dir) act([&] { return ws.MakeDirs(s->path, static_cast<mode_t>(s->mode & 07777)); });
        m.change = "created";
        m.file_type = "directory";
        break;
      case UndoStep::Action::kRemove:
        if (now.exists && !now.is_dir) act([&] { return ws.Remove(s->path); });
        m.change = "deleted";
        m.file_type = now.is_link ? "symlink" : "file";
        break;
      case UndoStep::Action::kRemoveDirectory:
        if (now.is_dir) act([&] { return ws.RemoveDirectory(s->path); });
        m.change = "deleted";
        m.file_type = "directory";
        break;
    }
    if (!done.ok()) {
      failed.push_back(DisplayPath(s->path, workspace) + ": " + done.message());
      continue;
    }
    records.push_back(std::move(m));
  }
  Status recorded = ledger->AddMutations(std::move(records), images);
  GitHead head = ReadGitHead(workspace);
  if (recorded.ok() && !(head.commit.empty() && head.ref.empty())) {
    recorded = ledger->AddGateEvent({NewId("gate"), session, "user", "", "git_head", id,
                                     json({{"commit", head.commit}, {"ref", head.ref}}).dump(), now_ms});
  }
  ExecutionEnd end;
  end.execution_id = id;
  end.status = failed.empty() ? "ok" : "error";
  end.exit_reason = "normal";
  end.finished_at_ms = now_ms;
  std::string text = record.done_text(steps.size() - failed.size());
  for (const std::string& f : failed) text += "\nfailed: " + f;
  end.output_head = text;
  end.output_bytes = static_cast<int64_t>(text.size());
  if (!failed.empty())
    end.error = "some paths could not be " + std::string(record.source == "undo" ? "put back" : "written");
  RETURN_IF_ERROR(ledger->AddExecutionEnd(end, {}));
  RETURN_IF_ERROR(recorded);
  if (!failed.empty()) return Status::IOError(record.source + " " + id, text);
  return id;
}

}  // namespace odin

// The symbol index's side of the coordinator (issue 20): the query tools
// (symbols, references, impact, outline) run here, each an execution in
// the ledger, once the index is up to date; bringing it up to date is a set
// of IndexParse executions in read-only workers, whose answers only the
// coordinator writes to .odin/index.db.

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/ids.h"
#include "base/json_input.h"
#include "coordinator/coordinator.h"
#include "tools/tool_input.h"
#include "workspace/git_ignore.h"
#include "index/index_query.h"
#include "index/symbols.h"
#include "odin/v1/worker.pb.h"
#include "tools/file_tool_args.h"
#include "tools/text_file.h"
#include "tools/tool_result.h"
#include "tools/workspace_path.h"
#include "tools/tool_catalog.h"
#include "workspace/workspace_files.h"

namespace odin {

using nlohmann::json;

IndexRefresh& Coordinator::Index() {
  if (index_) return *index_;
  IndexRefresh::Port port;
  port.parse = [this](const std::vector<std::string>& paths, std::function<void(const v1::ToolResult&)> done) {
    std::string id = NewId("ex");
    Call& c = calls_[id];
    c.call.execution_id = id;
    c.call.tool = kIndexParseTool;
    c.call.arguments_json = json({{"paths", paths}}).dump(-1, ' ', false, json::error_handler_t::replace);
    for (const std::string& p : paths) Typed(c.request).mutable_input()->mutable_index_parse()->add_paths(p);
    c.call.timeout = seconds(120);
    c.call.agent_id = o_.agent_id;
    c.call.mode = CallMode::kAsk;
    c.request.policy = WorkerPolicy::kReadonly;
    c.call.internal = true;
    c.handlers.on_done = [done = std::move(done)](const v1::ToolResult& r, const Status&) { done(r); };
    Dispatch(c);
  };
  port.changes_watched = [this] { return tracker_ && tracker_->watching(); };
  port.note = [this](const std::string& note) {
    if (on_index_note) on_index_note(note);
  };
  port.resume = [this](const std::vector<std::string>& waiting, const Status& status) {
    for (const std::string& id : waiting) {
      auto it = calls_.find(id);
      if (it == calls_.end()) continue;  // cancelled meanwhile
      if (!status.ok()) {
        EndHere(id, v1::TOOL_STATUS_ERROR, status);
        continue;
      }
      if (it->second.handler() == ToolHandler::kEditSymbol) {
        PrepareEditSymbol(it->second);
        continue;
      }
      AnswerIndexQuery(it->second);
    }
  };
  index_ = std::make_unique<IndexRefresh>(o_.workspace, StateDir() + "/index.db", o_.pool.size, std::move(port));
  return *index_;
}

void Coordinator::MarkIndexDirty(const std::string& path) {
  if (index_) index_->MarkDirty(path);  // else the first refresh looks at the tree
}

void Coordinator::RefreshSymbolIndex(bool rebuild, std::function<void(const Status&, size_t)> done) {
  Index().Refresh(rebuild, std::move(done));
}

index::IndexDb* Coordinator::symbol_index() { return index_ ? index_->db() : nullptr; }

std::string Coordinator::RepoMap(size_t budget_tokens) { return Index().RepoMap(budget_tokens); }

void Coordinator::PrepareEditSymbol(Call& c) {
  const std::string id = c.call.execution_id;
  // The model's arguments, typed at Submit; the span is resolved here.
  StatusOr<EditSymbolArgs> args = ArgsOf(Typed(c.request).input().edit_symbol());
  StatusOr<index::SpanNow> span = index::ResolveSpan(args->symbol_id, index_->db(), index_->FileReader());
  if (!span.ok()) {
    return EndHere(id, span.status().code() == StatusCode::kNotFound ? v1::TOOL_STATUS_ERROR : v1::TOOL_STATUS_REJECTED,
                   span.status());
  }
  if (span->span_sha256 != args->span_sha256) {
    RecordGateEvent(c.call.agent_id, "", "span_drift", id,
                    json({{"symbol_id", args->symbol_id},
                          {"path", span->symbol.path},
                          {"expected", args->span_sha256},
                          {"found", span->span_sha256}})
                        .dump(-1, ' ', false, json::error_handler_t::replace));
    return EndHere(id, v1::TOOL_STATUS_REJECTED,
                   Status::FailedPrecondition(
                       kEditSymbolTool + std::string(": ") + span->symbol.qualified_name + " in " + span->symbol.path,
                       "its span changed since you queried it (span_sha256 is now " + span->span_sha256 +
                           "); query it again and retry"));
  }
  static const char* kOperations[] = {"replace", "insert_before", "insert_after", "delete"};
  json resolved = {{"symbol_id", args->symbol_id},
                   {"span_sha256", args->span_sha256},
                   {"operation", kOperations[static_cast<int>(args->operation)]},
                   {"content", args->content},
                   {"file_path", span->symbol.path},
                   {"start_byte", span->symbol.start_byte},
                   {"end_byte", span->symbol.end_byte}};
  c.call.arguments_json = resolved.dump(-1, ' ', false, json::error_handler_t::replace);  // for the record
  args->file_path = span->symbol.path;
  args->start_byte = span->symbol.start_byte;
  args->end_byte = span->symbol.end_byte;
  SetInput(*args, Typed(c.request).mutable_input());
  c.span_file_sha256 = span->file_sha256;
  QueueEditSymbolWrite(c);
}

Status Coordinator::CheckEvidence(const Call& c, const std::vector<std::string>& cited, const std::string& path,
                                  bool existed) {
  if (!existed) return Status::OK();  // a new file: nothing to have analysed
  std::string shown = DisplayPath(path, o_.workspace);
  bool parsed = index::LanguageForPath(path) != index::Language::kNone;
  std::string how = parsed ? "symbols, references, impact or outline calls of this message that covered " + shown
                           : "a Read of " + shown + " in this message (the index does not parse it)";
  if (cited.empty()) {
    return Status::FailedPrecondition("strict profile: " + shown,
                                      "a change to an existing file must cite its analysis: pass \"evidence\": the "
                                      "execution ids of " +
                                          how);
  }
  AgentState& agent = Agent(c.call.agent_id);
  for (const std::string& id : cited) {
    auto it = agent.evidence.find(id);
    if (it == agent.evidence.end()) {
      return Status::FailedPrecondition("strict profile: evidence " + id,
                                        "is not an analysis (symbols, references, impact, outline) or Read of yours "
                                        "in this session");
    }
    if (it->second.message_id != c.call.message_id) {
      return Status::FailedPrecondition("strict profile: evidence " + id,
                                        "is from an earlier message; analyse " + shown + " again in this one");
    }
  }
  for (const std::string& id : cited) {
    const AgentState::Evidence& e = agent.evidence.at(id);
    if (e.files.count(path) && (!e.read || !parsed)) return Status::OK();
  }
  return Status::FailedPrecondition("strict profile: " + shown,
                                    "none of the evidence cited covered it; cite the execution ids of " + how);
}

void Coordinator::AnswerIndexQuery(Call& c) {
  if (index::LanguageServerMayAnswer(c.call.tool) && AskServerForReferences(c)) return;
  EndIndexQuery(c, index::RunIndexQuery(c.call.tool, *c.args, index_->db(), index_->FileReader()));
}

void Coordinator::EndIndexQuery(Call& c, StatusOr<index::QueryAnswer> answer) {
  const std::string id = c.call.execution_id;
  if (!answer.ok()) return EndHere(id, v1::TOOL_STATUS_ERROR, answer.status());
  AgentState::Evidence& e = Agent(c.call.agent_id).evidence[id];
  e.message_id = c.call.message_id;
  for (const std::string& rel : answer->covered) e.files.insert(JoinPath(o_.workspace, rel));
  EndHere(id, v1::TOOL_STATUS_OK, Status::OK(), answer->text + "\n");
}

namespace {

constexpr uint32_t kReferencesAnswerMs = 20000;  // pyright reads the whole workspace for its first answer

// Whether a server's references are known to be all of them, and why (or
// why not).
bool ServerSeesEverything(const std::string& server, const std::string& workspace, std::string* why) {
  if (server == "pyright") {
    *why =
        "pyright analyses every Python file of the workspace; uses through dynamic access (getattr, strings) "
        "are not references it can see";
    return true;
  }
  if (server == "gopls" || server == "rust-analyzer") {
    *why = server + " analyses the whole module (crate) graph of the workspace";
    return true;
  }
  if (server == "typescript") {
    for (const char* config : {"tsconfig.json", "jsconfig.json"}) {
      if (ExistsBelow(workspace, config)) {
        *why = std::string("tsserver's project (") + config + ") covers the workspace's files";
        return true;
      }
    }
    *why = "without a tsconfig.json or jsconfig.json, tsserver sees only open files and what they import";
    return false;
  }
  if (server == "clangd") {
    *why =
        "clangd runs without a background index, so it sees the files it has open and the headers they include, "
        "not the workspace's other files";
    return false;
  }
  *why = "odin does not know whether " + server + " sees every file of the workspace";
  return false;
}

}  // namespace

bool Coordinator::AskServerForReferences(Call& c) {
  if (!o_.validation.enabled) return false;  // no language servers run
  StatusOr<index::ReferenceTarget> target = index::FindReferenceTarget(*c.args, index_->db(), index_->FileReader());
  if (!target.ok()) return false;  // the index's answer says what is wrong
  std::string path = JoinPath(o_.workspace, target->symbol.path);
  FileValidator v = validation_.ValidatorFor(path);
  if (v.server_name.empty()) return false;
  v1::ReferencesInput in;
  in.set_path(path);
  in.set_content(target->file_content);
  v1::LanguageServer* ls = in.mutable_server();
  ls->set_name(v.server_name);
  for (const std::string& a : v.server_command) ls->add_command(a);
  ls->set_language_id(v.language_id);
  in.set_line(target->line);
  in.set_character(target->character);
  in.set_start_timeout_ms(v.start_timeout_ms);
  in.set_answer_timeout_ms(kReferencesAnswerMs);

  std::string ask_id = NewId("ex");
  Call& ask = calls_[ask_id];
  ask.call.execution_id = ask_id;
  ask.call.tool = kLspReferencesTool;
  ask.call.arguments_json =
      json({{"file_path", target->symbol.path}, {"line", target->line + 1}, {"character", target->character + 1}})
          .dump(-1, ' ', false, json::error_handler_t::replace);
  ask.call.agent_id = c.call.agent_id;
  ask.call.mode = CallMode::kAsk;
  ask.call.parent_id = c.call.execution_id;
  ask.request.policy = WorkerPolicy::kLspHost;
  ask.call.internal = true;
  ask.call.timeout = milliseconds(int64_t{v.start_timeout_ms} + kReferencesAnswerMs) + seconds(10);
  *Typed(ask.request).mutable_references() = std::move(in);
  ask.handlers.on_done = [this, id = c.call.execution_id, t = std::move(*target)](
                             const v1::ToolResult& r, const Status&) { AnswerWithServerReferences(id, t, r); };
  Dispatch(ask);
  return true;
}

void Coordinator::AnswerWithServerReferences(const std::string& id, const index::ReferenceTarget& target,
                                             const v1::ToolResult& r) {
  auto it = calls_.find(id);
  if (it == calls_.end()) return;  // cancelled meanwhile
  Call& c = it->second;
  const v1::ReferencesOutput& out = r.references();
  if (r.status() == v1::TOOL_STATUS_OK && out.answered()) {
    std::vector<index::ServerReference> places;
    size_t outside = 0;
    for (const v1::SourceLocation& l : out.locations()) {
      if (!IsInsideDir(l.path(), o_.workspace) || l.path() == o_.workspace) {
        ++outside;
        continue;
      }
      places.push_back({DisplayPath(l.path(), o_.workspace), l.line()});
    }
    std::string why;
    bool complete = ServerSeesEverything(out.server(), o_.workspace, &why);
    return EndIndexQuery(c,
                         index::SemanticReferences(target, out.server(), places, outside, complete, why, index_->db()));
  }
  // No answer from the server: the index's, saying why.
  std::string why = !out.reason().empty() ? out.reason()
                    : r.has_error()       ? r.error().message()
                                          : std::string(ToolStatusName(r.status()));
  EndIndexQuery(c, index::SyntacticReferences(*c.args, index_->db(), why));
}

}  // namespace odin

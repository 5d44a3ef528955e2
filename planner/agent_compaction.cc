// The agent loop's side of compaction (planner/compaction.h has the pure
// parts): when it runs, the utility model's call, the handoff's facts, and
// the record in the ledger; and the conversation's own record
// (planner/conversation_log.h): written as it grows, taken up on resume.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "base/file_util.h"
#include "base/ids.h"
#include "base/json_input.h"
#include "base/unique_fd.h"
#include "ledger/handoff_facts.h"
#include "planner/agent.h"
#include "planner/conversation_log.h"
#include "planner/hook_payloads.h"
#include "planner/instructions.h"
#include "tools/workspace_path.h"
#include "workspace/host_files.h"

namespace odin {

using nlohmann::json;

namespace {

// After a compaction the next request should take at most this share of the
// window; masking alone is enough when it gets there.
constexpr double kTargetShare = 0.5;
// The summary request's own size: at most this share of the window.
constexpr double kSummaryShare = 0.5;
constexpr int64_t kSummaryMaxBytes = 400 * 1024;

}  // namespace

ContextUse Agent::context() const { return context_; }

bool Agent::CompactNow(const std::string& focus) {
  if (current_ || compaction_) return false;
  StartCompaction("user", focus, context_.next_estimate, [this] { StartNext(); });
  return true;
}

void Agent::CompactAfterOverflow(const Status& why) {
  Current& c = *current_;
  c.compacted = true;
  if (c.overflow_level >= 3) {
    return Finish("context_exhausted",
                  why.WithContext("the conversation does not fit the model's context window even after compaction"));
  }
  int64_t before = HistoryBytes();
  StartCompaction(
      "context_error", "", context_.next_estimate,
      [this, before, why] {
        if (!current_) return;
        // Never the same request twice: only a smaller conversation is sent.
        if (HistoryBytes() < before) return SendRequest();
        CompactAfterOverflow(why);
      },
      ++c.overflow_level);
}

void Agent::StartCompaction(const std::string& trigger, const std::string& focus, int64_t tokens_before,
                            std::function<void()> then, int level) {
  compaction_.emplace();
  Compaction& k = *compaction_;
  k.id = NewId("cmp");
  k.trigger = trigger;
  k.focus = focus;
  k.level = level;
  k.tokens_before = tokens_before;
  k.started = clock_->Now();
  k.started_wall = clock_->WallMillis();
  k.then = std::move(then);
  if (host_->HasHooks(HookEvent::kPreCompact)) {
    // Claude Code's PreCompact: told before, cannot stop it.
    PersistHistory();
    uint64_t generation = generation_;
    json fields = {{"trigger", trigger == "user" ? "manual" : "auto"}, {"custom_instructions", focus}};
    host_->RunHooks({HookEvent::kPreCompact, o_.agent_id, std::nullopt, k.id, "",
                     fields.dump(-1, ' ', false, json::error_handler_t::replace)},
                    [this, generation](const HookOutcome&) {
                      if (generation == generation_ && compaction_) CompactNowAfterHooks();
                    });
    return;
  }
  CompactNowAfterHooks();
}

void Agent::CompactNowAfterHooks() {
  Compaction& k = *compaction_;
  const std::string& trigger = k.trigger;
  const std::string& focus = k.focus;
  PersistHistory();  // the outputs as the model saw them, before they are masked
  k.history_bytes = HistoryBytes();
  // The recent turns stay verbatim; with fewer kept, more can go.
  k.keep_from = RecentTurnsStart(history_, k.level >= 2 ? 1 : kRecentTurnsKept);
  k.mask_to = k.level >= 3 ? history_.size() : k.keep_from;
  k.mask = MaskToolResults(&history_, k.mask_to);
  int64_t after = k.tokens_before - estimator_.Tokens(k.mask.bytes_before - k.mask.bytes_after);
  // Past the threshold, masking may be enough; asked for, or after the
  // model refused a request as too long, the older turns go.
  bool asked = trigger != "threshold";
  bool enough = static_cast<double>(after) <= kTargetShare * static_cast<double>(context_.window);
  if (k.keep_from == 0 || (enough && !asked)) return FinishCompaction("masked", "", "", Status::OK());

  std::vector<ChatMessage> older(history_.begin(), history_.begin() + static_cast<std::ptrdiff_t>(k.keep_from));
  int64_t max_bytes = std::min<int64_t>(
      kSummaryMaxBytes,
      static_cast<int64_t>(kSummaryShare * static_cast<double>(context_.window) * estimator_.bytes_per_token()));
  ChatRequest req = SummaryRequest(UtilityModel(), older, focus, max_bytes);
  req.max_tokens = o_.max_tokens;
  uint64_t generation = generation_;
  LlmClient::Callbacks cb;
  cb.on_done = [this, generation](const StatusOr<ChatResponse>& r) {
    if (generation == generation_ && compaction_) OnSummary(r);
  };
  k.call = llm_->Start(req, std::move(cb));
}

void Agent::OnSummary(const StatusOr<ChatResponse>& response) {
  Compaction& k = *compaction_;
  k.call.reset();
  LlmCallRecord rec = AccountModelCall("utility", UtilityModel(), k.started, k.started_wall, response);
  // A summary that fails still compacts: the handoff's facts are Odin's.
  StatusOr<HandoffSummary> summary =
      !response.ok() ? StatusOr<HandoffSummary>(response.status())
      : !response->relay_error.empty()
          ? StatusOr<HandoffSummary>(Status::Unavailable("handoff summary", response->relay_error))
          : ParseHandoffSummary(response->text);

  // The facts come from Odin's own records, not from the summary.
  Handoff h;
  h.compaction_id = k.id;
  h.replaced_messages = k.keep_from;
  h.user_requests = user_requests_;
  h.todos = host_->TodosText(o_.agent_id);
  if (ledger_ != nullptr) {
    StatusOr<std::string> facts = HandoffFacts(ledger_, host_->session_id(), o_.agent_id, o_.workspace);
    if (facts.ok()) {
      h.facts = *facts;
    } else {
      spdlog::warn("handoff facts: {}", facts.status().message());
    }
  } else if (response.ok()) {
    h.facts = response->handoff_facts;  // a subagent's: the coordinator read them
  }
  for (const FileVerdict& v : host_->Blocking()) {
    h.blocked += (h.blocked.empty() ? "" : "; ") + DisplayPath(v.path, o_.workspace) + " (" +
                 std::string(VerdictName(v.status)) + ", " + v.check_id + ")";
  }
  if (summary.ok()) {
    h.summary = &*summary;
    k.summary_form = summary->form;
  } else {
    h.summary_failure = summary.status().message();
  }
  std::string handoff = RenderHandoff(h);
  history_ = RebuildHistory(handoff, history_, k.keep_from);
  FinishCompaction(summary.ok() ? "summarized" : "handoff_without_summary", handoff, rec.id,
                   summary.ok() ? Status::OK() : summary.status());
}

void Agent::FinishCompaction(const std::string& how, const std::string& handoff, const std::string& llm_call_id,
                             const Status& failure) {
  Compaction k = std::move(*compaction_);
  compaction_.reset();
  // The instruction files, read again: the next request carries them as
  // they are now.
  if (!o_.subagent) o_.instructions = LoadInstructions(o_.workspace, o_.cwd, nullptr, o_.instruction_sources);
  // The next request, less what left the conversation (the next request
  // counts it again, whole).
  int64_t after = std::max<int64_t>(0, k.tokens_before - estimator_.Tokens(k.history_bytes - HistoryBytes()));
  context_.next_estimate = after;
  ++context_.compactions;
  json detail = {{"id", k.id},
                 {"trigger", k.trigger},
                 {"how", how},
                 {"replaced", {{"from", 0}, {"to", handoff.empty() ? 0 : k.keep_from}}},
                 {"masked", k.mask.masked},
                 {"files", std::vector<std::string>(k.mask.files.begin(), k.mask.files.end())},
                 {"tokens_before", k.tokens_before},
                 {"tokens_after", after},
                 {"window", context_.window},
                 {"duration_us", std::chrono::duration_cast<microseconds>(clock_->Now() - k.started).count()}};
  if (!k.focus.empty()) detail["focus"] = k.focus;
  if (k.level > 0) detail["level"] = k.level;
  if (!k.summary_form.empty()) detail["summary_form"] = k.summary_form;
  if (!handoff.empty()) detail["handoff"] = handoff;
  if (!llm_call_id.empty()) detail["llm_call_id"] = llm_call_id;
  if (!failure.ok()) detail["failure"] = failure.message();
  // The conversation's record: replaying it masks and rebuilds the same way.
  if (ledger_ != nullptr) {
    json entry = {{"keep_from", k.keep_from}, {"how", how}};
    if (k.mask_to != k.keep_from) entry["mask_to"] = k.mask_to;
    if (!handoff.empty()) entry["handoff"] = handoff;
    NoteLedgerWrite(
        ledger_->AddConversation({{NewId("conv"), host_->session_id(), o_.agent_id, "compaction",
                                   entry.dump(-1, ' ', false, json::error_handler_t::replace), clock_->WallMillis()}}));
  }
  persisted_ = history_.size();
  // The coordinator hears of it through the record: the masked calls' files
  // leave this agent's file cache.
  host_->RecordGateEvent(o_.agent_id, current_ ? current_->message.id : "", "compaction", "",
                         detail.dump(-1, ' ', false, json::error_handler_t::replace));
  if (!failure.ok()) {
    spdlog::warn("compaction {}: the summary failed ({}); the handoff has Odin's records only", k.id,
                 failure.message());
  }
  if (observer_) observer_->OnCompaction(k.id, k.tokens_before, after, how);
  k.then();
}

void Agent::PersistHistory(const std::string& extra_kind, const std::string& extra_json) {
  if (ledger_ == nullptr) return;
  std::vector<ConversationEntry> entries;
  int64_t now = clock_->WallMillis();
  for (size_t i = std::min(persisted_, history_.size()); i < history_.size(); ++i) {
    entries.push_back({NewId("conv"), host_->session_id(), o_.agent_id, ConversationKind(history_[i]),
                       ChatMessageJson(history_[i]), now});
  }
  if (!o_.transcript_path.empty()) AppendTranscript(std::min(persisted_, history_.size()), history_.size());
  persisted_ = history_.size();
  for (auto& [kind, content] : queued_entries_) {
    entries.push_back({NewId("conv"), host_->session_id(), o_.agent_id, kind, content, now});
  }
  queued_entries_.clear();
  if (!extra_kind.empty()) {
    entries.push_back({NewId("conv"), host_->session_id(), o_.agent_id, extra_kind, extra_json, now});
  }
  NoteLedgerWrite(ledger_->AddConversation(entries));
}

void Agent::AppendTranscript(size_t from, size_t to) {
  // Claude Code's shape, a line per message (planner/hook_payloads.h), so
  // that hooks written for it read it.
  std::string lines;
  TranscriptContext context{host_->session_id(), o_.cwd, o_.workspace, o_.model, transcript_parent_};
  int64_t now = clock_->WallMillis();
  for (size_t i = from; i < to; ++i) {
    const ChatMessage& m = history_[i];
    TranscriptRole role = m.role == ChatMessage::Role::kAssistant     ? TranscriptRole::kAssistant
                          : m.role == ChatMessage::Role::kToolResults ? TranscriptRole::kToolResults
                                                                      : TranscriptRole::kUser;
    std::vector<TranscriptCall> calls;
    for (const ToolCallRequest& c : m.tool_calls) calls.push_back({c.id, c.name, c.arguments_json});
    std::vector<TranscriptResult> results;
    for (const ToolResultMessage& r : m.results) results.push_back({r.call_id, r.content, r.is_error});
    std::string uuid = NewUuid();
    lines += ClaudeTranscriptLine(context, role, m.text, calls, results, uuid, now)
                 .dump(-1, ' ', false, json::error_handler_t::replace) +
             "\n";
    context.parent_uuid = uuid;
  }
  transcript_parent_ = context.parent_uuid;
  if (lines.empty()) return;
  // In the user's state directory (HookTranscriptDir), not a workspace's.
  StatusOr<UniqueFd> fd = OpenUserLog(o_.transcript_path);
  Status written = fd.ok() ? WriteAll(fd->get(), lines, o_.transcript_path) : fd.status();
  if (!written.ok()) spdlog::warn("transcript: {}", written.message());
}

void Agent::AddNestedInstructions(const std::string& tool, const std::string& arguments_json,
                                  ToolResultMessage* result) {
  json args = ParseJson(arguments_json);
  if (!args.is_object() || !args.contains("file_path") || !args["file_path"].is_string()) return;
  StatusOr<std::string> path = ResolveWorkspacePath(args["file_path"].get<std::string>(), o_.workspace);
  if (!path.ok()) return;
  std::string text = NestedInstructions(o_.workspace, *path, o_.instruction_sources.unreadable, &nested_given_);
  if (text.empty()) return;
  json record = ParseJson(result->content);
  if (!record.is_object()) return;
  record["instructions"] = "[runtime] Project instructions for the directories of " + DisplayPath(*path, o_.workspace) +
                           ", read now that you work there; follow them:\n" + text;
  result->content = record.dump(-1, ' ', false, json::error_handler_t::replace);
}

void Agent::AddMcpNews(ToolResultMessage* result) {
  std::string news = host_->TakeMcpNews(o_.agent_id);
  if (news.empty()) return;
  json record = ParseJson(result->content);
  if (!record.is_object()) return AddNote(news);  // the next message carries it
  record["mcp_news"] = "[runtime] " + news;
  result->content = record.dump(-1, ' ', false, json::error_handler_t::replace);
}

Status Agent::Restore(const std::vector<ConversationEntry>& entries) {
  if (current_ || compaction_ || !history_.empty()) {
    return Status::FailedPrecondition("resume", "the agent has a conversation already");
  }
  ASSIGN_OR_RETURN(ReplayedConversation replayed, ReplayConversation(entries));
  history_ = std::move(replayed.history);
  user_requests_ = std::move(replayed.user_requests);
  context_.compactions = replayed.compactions;
  persisted_ = history_.size();
  CloseInterrupted(&history_);
  PersistHistory();
  context_.next_estimate = estimator_.Tokens(HistoryBytes());  // the conversation's part of the next request
  return Status::OK();
}

Status Agent::Rewind(const std::string& message_id) {
  if (current_ || compaction_ || !queue_.empty()) {
    return Status::FailedPrecondition("rewind", "the agent is busy: cancel the turn first");
  }
  if (ledger_ == nullptr) return Status::FailedPrecondition("rewind", "the conversation is not recorded (no ledger)");
  PersistHistory();
  ASSIGN_OR_RETURN(std::vector<ConversationEntry> entries, ledger_->ListConversation(host_->session_id(), o_.agent_id));
  RETURN_IF_ERROR(CanRewindTo(entries, message_id));
  ConversationEntry rewind{
      NewId("conv"),       host_->session_id(), o_.agent_id, "rewind", json({{"message_id", message_id}}).dump(),
      clock_->WallMillis()};
  RETURN_IF_ERROR(ledger_->AddConversation({rewind}));
  entries.push_back(rewind);
  ASSIGN_OR_RETURN(ReplayedConversation replayed, ReplayConversation(entries));
  history_ = std::move(replayed.history);
  user_requests_ = std::move(replayed.user_requests);
  context_.compactions = replayed.compactions;
  persisted_ = history_.size();
  context_.next_estimate = estimator_.Tokens(HistoryBytes());
  notes_.clear();  // they told of turns the conversation no longer has
  return Status::OK();
}

int64_t Agent::HistoryBytes() const {
  int64_t bytes = 0;
  for (const ChatMessage& m : history_) bytes += MessageBytes(m);
  return bytes;
}

}  // namespace odin

// Hooks' runs (planner/hooks.h decides what they mean): each hook is a Hook
// execution of its own, a child of the call or message it runs for, in a
// hook worker of the mode's sandbox (its changes, in edit mode, tracked and
// validated like a command's), with its own timeout. An event's hooks run
// in parallel; their outcome is judged when the last one ends.

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/ids.h"
#include "base/json_input.h"
#include "coordinator/coordinator.h"
#include "gates/tool_rules.h"
#include "planner/hook_payloads.h"
#include "tools/tool_input.h"
#include "odin/v1/worker.pb.h"
#include "tools/exec_command.h"
#include "tools/tool_result.h"
#include "tools/workspace_path.h"

namespace odin {

using nlohmann::json;

namespace {

// Claude Code's permission_mode for Odin's modes.
const char* PermissionMode(CallMode mode) {
  switch (mode) {
    case CallMode::kAsk: return "default";
    case CallMode::kPlan: return "plan";
    case CallMode::kEdit: return "acceptEdits";
    case CallMode::kExec: return "bypassPermissions";
  }
  return "default";
}

struct HookBatch {
  HookEvent event;
  std::vector<HookRun> runs;
  size_t left = 0;
  std::function<void(const HookOutcome&)> done;
};

// Whether a call matches a hook's "if" rule (Claude Code's), judged as a
// deny rule of its own would be on the call as the hook is told of it
// (input: tool_input, absolute paths). A rule's ask (a command whose words
// are known only when it runs) counts as a match: the hook runs.
bool CallMatchesIf(const std::string& rule, const std::string& tool, const json& input, const std::string& workspace,
                   const std::string& home) {
  CommandRules rules;
  rules.deny = {rule};
  RuleVerdict v;
  if (HandlerOf(tool) == ToolHandler::kCommand) {
    std::string command = input.is_object() && input.contains("command") && input["command"].is_string()
                              ? input["command"].get<std::string>()
                              : "";
    v = JudgeCommand(command, rules, workspace);
    return v.decision == RuleDecision::kAsk || (v.decision == RuleDecision::kDeny && v.rule == rule);
  }
  if (HandlerOf(tool) == ToolHandler::kMcp) return JudgeToolName(tool, rules).decision == RuleDecision::kDeny;
  const ToolInfo* info = FindTool(tool);
  if (info == nullptr) return false;
  ToolRuleSubject subject{info, "", ""};
  for (const char* key : {"file_path", "notebook_path", "path"}) {
    if (input.is_object() && input.contains(key) && input[key].is_string() && subject.path.empty()) {
      subject.path = LexicalPath(input[key].get<std::string>(), workspace);
    }
  }
  return JudgeToolRules(subject, rules, workspace, home).decision == RuleDecision::kDeny;
}

}  // namespace

std::string Coordinator::TranscriptPath() const {
  if (o_.hooks.empty() || o_.transcript_dir.empty()) return "";
  return JoinPath(o_.transcript_dir, session_id_ + ".jsonl");
}

bool Coordinator::HasHooks(HookEvent event, const std::string& tool) const {
  return !o_.hooks.empty() && !HooksFor(o_.hooks, event, tool).empty();
}

void Coordinator::RunHooks(HookRequest request, std::function<void(const HookOutcome&)> done) {
  // Claude Code's prompt_id: the user's message the event belongs to (a
  // message's events carry its id; a call's, its message's), kept for the
  // events after it (SessionEnd).
  std::string prompt =
      request.event == HookEvent::kUserPromptSubmit || request.event == HookEvent::kStop ? request.parent_id : "";
  if (auto call = calls_.find(request.parent_id); prompt.empty() && call != calls_.end()) {
    prompt = call->second.call.message_id;
  }
  if (!prompt.empty()) prompt_id_ = prompt;
  std::vector<HookCommand> hooks = HooksFor(o_.hooks, request.event, request.tool);
  if (hooks.empty()) return done(HookOutcome());
  CallMode mode = request.mode.value_or(o_.mode);
  json input = ParseJson(request.fields_json);
  if (!input.is_object()) input = json::object();
  std::erase_if(hooks, [&](const HookCommand& h) {
    return !h.if_rule.empty() &&
           !CallMatchesIf(h.if_rule, request.tool, input.value("tool_input", json::object()), o_.workspace, o_.home);
  });
  if (hooks.empty()) return done(HookOutcome());
  input["session_id"] = session_id_;
  input["transcript_path"] = TranscriptPath();
  input["cwd"] = o_.workspace;
  input["permission_mode"] = PermissionMode(mode);
  input["odin_mode"] = CallModeName(mode);
  input["hook_event_name"] = HookEventName(request.event);
  if (!prompt_id_.empty() && request.event != HookEvent::kSessionStart) input["prompt_id"] = prompt_id_;
  std::string stdin_text = input.dump(-1, ' ', false, json::error_handler_t::replace);
  bool writable = mode == CallMode::kEdit || mode == CallMode::kExec;

  auto batch = std::make_shared<HookBatch>();
  batch->event = request.event;
  batch->runs.resize(hooks.size());
  batch->left = hooks.size();
  batch->done = std::move(done);
  std::vector<std::string> ids;
  for (size_t i = 0; i < hooks.size(); ++i) {
    const HookCommand& h = hooks[i];
    std::string id = NewId("ex");
    ids.push_back(id);
    Call& c = calls_[id];
    c.call.execution_id = id;
    c.call.tool = kHookTool;
    c.call.arguments_json =
        json({{"command", h.command}, {"event", HookEventName(request.event)}, {"input", stdin_text}})
            .dump(-1, ' ', false, json::error_handler_t::replace);  // for the record
    v1::HookInput* hook = Typed(c.request).mutable_input()->mutable_hook();
    hook->set_command(h.command);
    hook->set_event(HookEventName(request.event));
    hook->set_stdin_text(stdin_text);
    c.call.timeout = seconds(h.timeout_seconds);
    c.call.agent_id = request.agent_id.empty() ? o_.agent_id : request.agent_id;
    c.call.mode = mode;
    c.call.parent_id = request.parent_id;
    c.request.policy = !h.sandbox ? WorkerPolicy::kHookHost
                       : writable ? WorkerPolicy::kHookWritable
                                  : WorkerPolicy::kHookReadonly;
    c.request.limits = o_.command_limits;
    batch->runs[i].execution_id = id;
    batch->runs[i].command = h.command;
    c.handlers.on_done = [this, batch, i](const v1::ToolResult& r, const Status&) {
      HookRun& run = batch->runs[i];
      run.exit_code = r.has_exit_code() ? r.exit_code() : -1;
      run.timed_out = r.status() == v1::TOOL_STATUS_TIMED_OUT;
      json out = ParseJson(r.output_json());
      if (out.is_object()) {
        run.stdout_text = out.value("stdout", "");
        run.stderr_text = out.value("stderr", "");
      }
      bool finished = r.status() == v1::TOOL_STATUS_OK || r.status() == v1::TOOL_STATUS_ERROR;
      if (!finished && !run.timed_out) {
        run.ran = false;
        run.error = r.has_error() ? r.error().message() : ToolStatusName(r.status());
      } else if (!out.is_object() && r.has_error()) {
        run.ran = false;  // it never started (bad arguments, not executable)
        run.error = r.error().message();
      }
      if (--batch->left > 0) return;
      HookOutcome outcome = CombineHookRuns(batch->event, batch->runs);
      for (const std::string& note : outcome.notes) {
        spdlog::info("{}: {}", HookEventName(batch->event), note);
        if (on_hook_note) on_hook_note(std::string(HookEventName(batch->event)) + ": " + note);
      }
      batch->done(outcome);
    };
  }
  // Dispatched after all are set up: one may end at once (an open breaker)
  // and the batch must know how many there are.
  for (const std::string& id : ids) {
    auto it = calls_.find(id);
    if (it != calls_.end()) Dispatch(it->second);
  }
}

void Coordinator::WrapForPostToolUse(Call& c) {
  CallHandlers& h = c.handlers;
  auto original = std::move(h.on_done);
  ToolCall call = c.call;
  call.budget = nullptr;
  h.on_done = [this, original, call, args = c.args](const v1::ToolResult& r, const Status& recorded) {
    // After the tool ran; not for calls refused or cancelled before.
    if (r.status() != v1::TOOL_STATUS_OK && r.status() != v1::TOOL_STATUS_ERROR) {
      if (original) original(r, recorded);
      return;
    }
    HookToolFacts facts;
    facts.status = ToolStatusName(r.status());
    if (r.has_exit_code()) facts.exit_code = r.exit_code();
    std::string output = r.output_head() + r.output_tail();
    facts.output = output.size() > 65536 ? output.substr(0, 65536) : output;
    facts.interrupted = r.exit_reason() == v1::EXIT_REASON_TIMEOUT || r.exit_reason() == v1::EXIT_REASON_KILLED;
    if (r.has_file_written()) {
      facts.wrote = true;
      facts.created = r.sha256_before().empty();
      facts.content_before = r.content_before();
      facts.content_after = r.file_written().content();
      facts.diff = r.diff();
    }
    if (r.files_read_size() == 1 && HandlerOf(call.tool) == ToolHandler::kFileRead) {
      facts.read = true;
      facts.read_full = r.files_read(0).full();
      facts.read_content = r.files_read(0).content();
    }
    for (const v1::FileChange& fc : r.changes()) facts.changes.emplace_back(fc.path(), fc.change());
    json tool_input = HookToolInput(call.tool, *args, o_.workspace);
    json fields = {{"tool_name", HookToolName(call.tool)},
                   {"tool_input", tool_input},
                   {"tool_response", HookToolResponse(call.tool, tool_input, facts)},
                   {"duration_ms", r.duration_us() / 1000},
                   {"tool_use_id", call.execution_id}};
    RunHooks(
        {HookEvent::kPostToolUse, call.agent_id, call.mode, call.execution_id, call.tool,
         fields.dump(-1, ' ', false, json::error_handler_t::replace)},
        [this, original, r, recorded, call](const HookOutcome& o) {
          v1::ToolResult amended = r;
          std::string note;
          if (o.decision == HookOutcome::Decision::kBlock) {
            note += "\n[PostToolUse hook] " + o.reason + "\n";
            RecordGateEvent(
                call.agent_id, "", "hook", call.execution_id,
                json(
                    {{"event", "PostToolUse"}, {"decision", "block"}, {"reason", o.reason}, {"hooks", o.execution_ids}})
                    .dump(-1, ' ', false, json::error_handler_t::replace));
          }
          if (!o.additional_context.empty()) note += "\n[PostToolUse hook context] " + o.additional_context + "\n";
          if (!note.empty()) {
            amended.set_output_tail(amended.output_tail() + note);
            amended.set_output_total_bytes(amended.output_total_bytes() + note.size());
          }
          if (original) original(amended, recorded);
        });
  };
}

}  // namespace odin

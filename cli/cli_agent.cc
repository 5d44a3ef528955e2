// `odin -p PROMPT` and `odin init`: one message, headless, with text, json
// or stream-json output. The interactive session is cli_interactive.cc.

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "base/clock.h"
#include "base/file_util.h"
#include "base/json_schema.h"
#include "base/secrets.h"
#include "base/terminal_text.h"
#include "config/config_loader.h"
#include "gates/tool_rules.h"
#include "llm/images.h"
#include "workspace/host_files.h"
#include "session/custom_commands.h"
#include "session/init_prompt.h"
#include "session/agent_session.h"
#include "cli/cli.h"
#include "cli/cli_agent_internal.h"
#include "session/session_events.h"
#include "workspace/workspace.h"
#include "workspace/workspace_files.h"

namespace odin {

// The session's settings from the command line, for either front end.
AgentSessionFlags SessionFlags(const GlobalFlags& g, const AgentFlags& f, const std::string& kind,
                               const std::string& worker_mode, const std::string& approval) {
  AgentSessionFlags flags;
  flags.runtime.dir = g.dir;
  flags.runtime.sandbox = g.sandbox;
  flags.runtime.network = g.network;
  flags.runtime.session_kind = kind;
  flags.runtime.mode = worker_mode;
  flags.runtime.approval = approval;
  flags.runtime.start_mcp = true;
  flags.llm = f.llm;
  flags.max_turns = f.max_turns;
  flags.max_tool_calls = f.max_tool_calls;
  flags.max_tokens = f.max_tokens;
  flags.max_budget_usd = f.max_budget_usd;
  flags.max_wall_seconds = f.max_wall_seconds;
  flags.profile = f.profile;
  flags.workflow = f.workflow;
  flags.resume = f.resume;
  flags.continue_last = f.continue_last;
  flags.fork_session = f.fork_session;
  flags.isolated = f.isolated;
  return flags;
}

std::string TooBroadRefusal(const GlobalFlags& g, const Workspace& ws) { return TooBroadRefusal(ws, !g.dir.empty()); }

namespace {

// --json-schema's value: the schema inline (it starts with "{"), else a
// file's, compiled (the keywords Odin applies: base/json_schema.h).
StatusOr<std::string> LoadAnswerSchema(const std::string& value) {
  std::string text = value;
  if (value.find_first_not_of(" \t\r\n") == std::string::npos || value[value.find_first_not_of(" \t\r\n")] != '{') {
    StatusOr<std::optional<std::string>> file = ReadUserFile(value, 1u << 20);
    if (!file.ok()) return file.status();
    if (!*file) return Status::NotFound(value, "no such file (give a schema file, or the schema inline)");
    text = **file;
  }
  ASSIGN_OR_RETURN(JsonSchema schema, JsonSchema::Compile(text));
  return schema.text();
}

// An --image FILE (relative to where odin was started, as any program's
// argument): through the safe file layer when its path, as written, is in
// the workspace (so no link there leads out of it), else as the user's own
// file.
StatusOr<ImageData> LoadImage(const std::string& file, const std::string& root) {
  char cwd[4096];
  if (file.empty() || (file[0] != '/' && getcwd(cwd, sizeof cwd) == nullptr)) {
    return Status::InvalidArgument(file, "cannot tell where it is");
  }
  std::string path =
      std::filesystem::path(file[0] == '/' ? file : std::string(cwd) + "/" + file).lexically_normal().string();
  StatusOr<std::string> bytes = Status::NotFound(file, "no such file");
  if (!root.empty() && (path == root || path.rfind(root + "/", 0) == 0)) {
    ASSIGN_OR_RETURN(WorkspaceFiles layer, WorkspaceFiles::Open(root));
    bytes = layer.ReadFile(path, kMaxImageBytes + 1);
  } else {
    StatusOr<std::optional<std::string>> user = ReadUserFile(path, kMaxImageBytes + 1);
    if (!user.ok()) return user.status();
    if (*user) bytes = std::move(**user);
  }
  if (!bytes.ok()) return bytes.status();
  return MakeImage(std::move(*bytes), file);
}

}  // namespace

int RunPrompt(const GlobalFlags& g, const AgentFlags& f) {
  Mode mode;
  if (!ParseMode(f.mode, &mode)) {
    std::cerr << "odin: unknown mode '" << f.mode << "' (ask, plan or edit)\n";
    return kUsageError;
  }
  if (f.approval == "prompt") {
    std::cerr << "odin: --approval prompt needs the interactive session (odin without -p)\n";
    return kUsageError;
  }
  StatusOr<Workspace> ws = FindWorkspace(g.dir);
  // / and ~ are taken only when -C names them.
  if (std::string refused = ws.ok() ? TooBroadRefusal(g, *ws) : ""; !refused.empty()) {
    std::cerr << "odin: " << refused << "\n";
    return kUsageError;
  }
  if (f.review) {
    // Looked at, never run: git in a cloned repository runs what its config
    // names, so git itself runs only in the review's sandboxed worker.
    if (ws.ok() && !ExistsBelow(ws->root, ".git")) {
      std::cerr << "odin review: " << ws->root
                << " is not in a git repository: there is no committed state to compare a change with\n";
      return kUsageError;
    }
  }
  if (f.init) {
    if (mode != Mode::kEdit) {
      std::cerr << "odin init: writes ODIN.md, so it runs in edit mode (not --mode " << f.mode << ")\n";
      return kUsageError;
    }
    if (ws.ok() && ExistsBelow(ws->root, "ODIN.md") && !f.force) {
      std::cerr << "odin init: ODIN.md exists; `odin init --force` updates it (the model reads it first and keeps "
                   "what still holds)\n";
      return kUsageError;
    }
  }
  // The config, read once for the session (which would read it again) and
  // for how many attempts (--attempts, else attempts.count). One that does
  // not load is the session's to report.
  std::shared_ptr<const LoadedConfig> config;
  if (ws.ok()) {
    if (StatusOr<LoadedConfig> loaded = LoadConfig(*ws, EnvironmentMap()); loaded.ok()) {
      PrintConfigNotices(*loaded);
      config = std::make_shared<const LoadedConfig>(std::move(*loaded));
    }
  }
  int attempts = f.attempts > 0 ? f.attempts : config ? config->config.attempts : 1;
  if (attempts > 1 && (f.review || f.init)) {
    std::cerr << "odin: --attempts goes with -p\n";
    return kUsageError;
  }
  if (attempts > 1 && !config) {
    std::cerr << "odin: "
              << VisibleControls((ws.ok() ? LoadConfig(*ws, EnvironmentMap()).status() : ws.status()).message())
              << "\n";
    return kError;
  }
  if (attempts > 1) return RunAttempts(g, f, *ws, config, attempts);
  // The events are printed as they happen; the session id and the breakers
  // are known once the session started.
  AgentSession* started = nullptr;
  std::string session_id;
  std::optional<int> exit_code;
  EventRecorder recorder(
      "",
      [&](v1::SessionEvent e) {
        e.set_session_id(session_id);
        PrintPromptEvent(e, f.output_format, std::cout, std::cerr);
        if (e.has_message_finished()) exit_code = e.message_finished().exit_code();
      },
      [&] { return started != nullptr ? started->runtime().coordinator().Breakers() : std::vector<BreakerInfo>{}; });
  AgentSessionFlags flags = SessionFlags(g, f, "agent", f.mode, f.approval.empty() ? "deny" : f.approval);
  flags.config = config;
  if (!f.json_schema.empty()) {
    if (f.review || f.init) {
      std::cerr << "odin: --json-schema goes with -p, not odin " << (f.review ? "review" : "init") << "\n";
      return kUsageError;
    }
    StatusOr<std::string> schema = LoadAnswerSchema(f.json_schema);
    if (!schema.ok()) {
      std::cerr << "odin: --json-schema: " << VisibleControls(schema.status().message()) << "\n";
      return kUsageError;
    }
    flags.answer_schema = *schema;
  }
  std::vector<ImageData> images;
  if (!f.images.empty() && (f.review || f.init)) {
    std::cerr << "odin: --image goes with -p\n";
    return kUsageError;
  }
  if (f.images.size() > kMaxImagesPerMessage) {
    std::cerr << "odin: --image: at most " << kMaxImagesPerMessage << " images a message\n";
    return kUsageError;
  }
  for (const std::string& file : f.images) {
    StatusOr<ImageData> image = LoadImage(file, ws.ok() ? ws->root : "");
    if (!image.ok()) {
      std::cerr << "odin: --image: " << VisibleControls(image.status().message()) << "\n";
      return kUsageError;
    }
    images.push_back(std::move(*image));
  }
  StatusOr<std::unique_ptr<AgentSession>> session = AgentSession::Start(flags, &recorder);
  if (!session.ok()) {
    std::cerr << "odin: " << session.status().message() << "\n";
    return kError;
  }
  AgentSession& s = **session;
  started = &s;
  session_id = s.runtime().coordinator().session_id();
  recorder.set_session_id(session_id);
  s.runtime().coordinator().on_gate_event = [&recorder](const GateEvent& g) { recorder.OnGateEvent(g); };
  if (f.output_format == "stream-json") {
    std::cout << SessionStartJson(session_id, s.llm().endpoint.provider, s.llm().model, s.runtime().workspace().root)
              << "\n"
              << std::flush;
  }
  if (Status sp = InstallSignalPipe(); !sp.ok()) {
    std::cerr << "odin: " << sp.message() << "\n";
    return kError;
  }
  std::string prompt = f.prompt;
  if (f.init) {
    // InitTool is offered, and may write ODIN.md, for this message only.
    s.runtime().coordinator().set_init_active(true);
    prompt = InitPrompt(s.runtime().workspace().root, s.runtime().config().checks);
  }
  std::optional<SlashCommand> custom = f.init || f.review ? std::nullopt : FindSlashCommand(s, prompt);
  if (f.review) {
    s.agent().SendReview();
  } else if (custom) {
    // odin -p "/review-pr 12": the custom command's message (or an MCP
    // server's prompt's).
    StatusOr<ExpandedCommand> expanded = ExpandSlashCommand(s, *custom, mode);
    if (!expanded.ok()) {
      std::cerr << "odin: " << VisibleControls(expanded.status().message()) << "\n";
      return kError;
    }
    for (const std::string& n : expanded->notes) std::cerr << "odin: " << n << "\n";
    s.agent().Send(expanded->text, mode, /*slash_command=*/false, expanded->tool_list);
  } else if (f.init) {
    s.agent().Send(prompt, mode, /*slash_command=*/true);
  } else {
    // @path attaches a workspace file, an image as an image, as typed
    // interactively.
    std::vector<std::string> notes;
    const std::string& root = s.runtime().workspace().root;
    const char* home = getenv("HOME");
    std::string message = AttachFiles(
        prompt, root, UnreadablePatterns(s.runtime().config().permissions, root, home != nullptr ? home : ""), &notes,
        &images);
    for (const std::string& n : notes) std::cerr << "odin: " << VisibleControls(n) << "\n";
    s.agent().Send(message, mode, /*slash_command=*/false, std::nullopt, std::move(images));
  }
  bool interrupted = false;
  while (!exit_code) {
    std::vector<PollFd> extra = {{SignalPipeFd()}};
    Status st = s.Poll(seconds(1), &extra);
    if (!st.ok()) {
      std::cerr << "odin: " << st.message() << "\n";
      return kError;
    }
    for (int sig : DrainSignals()) {
      if (interrupted) return 128 + sig;  // a second signal: leave now
      interrupted = true;
      s.agent().CancelCurrent();
    }
  }
  // The result was the last word: what the session's end records (its
  // background commands' stops) goes to the ledger only.
  s.runtime().coordinator().on_gate_event = nullptr;
  if (!s.runtime().workspace().view.empty()) {
    std::cerr << "odin: isolated session " << session_id << ": odin diff, apply or discard it\n";
  }
  return *exit_code;
}

}  // namespace odin

#include "session/custom_commands.h"

#include <algorithm>
#include <memory>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/ids.h"
#include "base/terminal_text.h"
#include "gates/command_rules.h"
#include "gates/tool_rules.h"
#include "llm/images.h"
#include "odin/v1/worker.pb.h"
#include "session/agent_session.h"
#include "session/session_events.h"
#include "tools/check_output.h"
#include "tools/exec_command.h"
#include "tools/text_file.h"
#include "tools/workspace_path.h"
#include "workspace/workspace_files.h"

namespace odin {
namespace {

// @path: a file attached to a message, at most this much of it.
constexpr size_t kAttachBytes = 256 * 1024;
constexpr size_t kAttachTotalBytes = 1 << 20;
// A !`command` of a custom command: its time, and how much of its output
// takes its place.
constexpr auto kBangTimeout = std::chrono::seconds(30);
constexpr size_t kBangOutputBytes = 16 * 1024;
constexpr size_t kMaxBangCommands = 16;

// A !`command` with the arguments as shell variables, never as shell text:
// $ARGUMENTS is ${ODIN_ARGUMENTS}, $N ${ODIN_ARG_N}, set first to the
// arguments single-quoted. Wherever the author put them (in "...", in
// '...', bare) they expand as data: no $(...) or quote of an argument runs.
std::string BangScript(const std::string& line, const std::string& args) {
  std::vector<std::string> words = SplitCommandLine(args);
  std::string set = "ODIN_ARGUMENTS=" + ShellJoin({args});
  for (size_t i = 0; i < words.size() && i < 9; ++i)
    set += " ODIN_ARG_" + std::to_string(i + 1) + "=" + ShellJoin({words[i]});
  return set + "; " + SubstituteArguments(line, args, true);
}

// One !`command`'s output, or why it failed (one line).
// line: the command as its file writes it (shown in the error).
StatusOr<std::string> RunBang(AgentSession& session, const ClaudeDef& def, const std::string& command,
                              const std::string& line, Mode mode) {
  const std::string& name = def.name;
  ToolCall call;
  call.tool = kExecuteCommandTool;
  call.arguments_json =
      nlohmann::json({{"command", command}}).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  call.agent_id = "user";  // the user's own command, as !command is
  call.mode = CallModeOf(mode);
  // Within the command's own allowed-tools, as Claude Code requires: the
  // line as its file writes it (the variables Odin sets before it are
  // Odin's). Nobody can answer an approval while the message is made.
  if (def.tools) {
    const std::string& root = session.runtime().workspace().root;
    std::string why =
        ToolListRefusal(*def.tools, kExecuteCommandTool, {FindTool(kExecuteCommandTool), "", ""}, line, root, "");
    if (!why.empty()) return Status::PermissionDenied("/" + name, VisibleControls(why) + "; nothing was sent");
  }
  call.no_approval = true;
  call.timeout = kBangTimeout;
  call.output_head_bytes = kBangOutputBytes;
  call.output_tail_bytes = 0;
  call.execution_id = NewId("ex");
  auto result = std::make_shared<std::optional<v1::ToolResult>>();
  CallHandlers handlers;
  handlers.on_done = [result](const v1::ToolResult& r, const Status&) { *result = r; };
  Coordinator& co = session.runtime().coordinator();
  std::string id = call.execution_id;
  co.Submit(std::move(call), std::move(handlers));
  // An approval nobody answers meanwhile must not hold the expansion for ever.
  SteadyTime deadline = RealClock::Get()->Now() + kBangTimeout + std::chrono::seconds(5);
  while (!*result) {
    RETURN_IF_ERROR(session.Poll(std::chrono::milliseconds(100)));
    if (RealClock::Get()->Now() > deadline) co.Cancel(id);
  }
  v1::ToolResult r = **result;
  std::string shown = line.size() > 120 ? line.substr(0, 117) + "..." : line;
  // The refusal names the line as its file writes it, not the script.
  if (std::string m = r.error().message(); r.has_error()) {
    for (size_t at = m.find(command); at != std::string::npos; at = m.find(command, at + shown.size())) {
      m.replace(at, command.size(), shown);
    }
    r.mutable_error()->set_message(m);
  }
  if (r.status() != v1::TOOL_STATUS_OK || (r.has_exit_code() && r.exit_code() != 0)) {
    return Status::FailedPrecondition("/" + name, "`" + VisibleControls(shown) + "` " +
                                                      VisibleControls(ToolResultLine(kExecuteCommandTool, r)) + " (" +
                                                      r.execution_id() + "); nothing was sent");
  }
  std::string out = ToDisplayText(r.output_head());
  if (r.output_total_bytes() > r.output_head().size()) out += "\n[output cut at 16 KiB]";
  return out;
}

}  // namespace

const ClaudeDef* FindCustomCommand(const ClaudeDefs& defs, const std::string& line, std::string* args) {
  if (line.size() < 2 || line[0] != '/') return nullptr;
  size_t space = line.find_first_of(" \t\n");
  std::string name = line.substr(1, space == std::string::npos ? std::string::npos : space - 1);
  // A skill is a command too, as Claude Code loads both.
  const ClaudeDef* def = defs.FindCommand(name);
  if (def == nullptr) def = defs.FindSkill(name);
  if (def != nullptr) {
    size_t start = space == std::string::npos ? space : line.find_first_not_of(" \t\n", space);
    *args = start == std::string::npos ? "" : line.substr(start);
  }
  return def;
}

std::string SubstituteArguments(const std::string& body, const std::string& args, bool in_shell) {
  std::vector<std::string> words = SplitCommandLine(args);
  auto word = [&](size_t n) {  // from 0
    if (in_shell) return n < 9 ? "${ODIN_ARG_" + std::to_string(n + 1) + "}" : std::string();
    return n < words.size() ? words[n] : std::string();
  };
  std::string out;
  for (size_t i = 0; i < body.size();) {
    if (body[i] != '$') {
      out += body[i++];
      continue;
    }
    if (body.compare(i, 10, "$ARGUMENTS") == 0) {
      size_t after = i + 10;
      if (after < body.size() && body[after] == '[') {
        size_t close = body.find(']', after);
        std::string n = close == std::string::npos ? "" : body.substr(after + 1, close - after - 1);
        if (!n.empty() && n.size() < 4 && std::all_of(n.begin(), n.end(), ::isdigit)) {
          out += word(std::stoul(n));
          i = close + 1;
          continue;
        }
      }
      out += in_shell ? std::string("${ODIN_ARGUMENTS}") : args;
      i = after;
      continue;
    }
    size_t j = i + 1;
    while (j < body.size() && j - i <= 2 && isdigit(static_cast<unsigned char>(body[j]))) ++j;
    if (j > i + 1 && body[i + 1] != '0') {
      out += word(std::stoul(body.substr(i + 1, j - i - 1)) - 1);
      i = j;
      continue;
    }
    out += body[i++];
  }
  return out;
}

std::string AttachFiles(const std::string& text, const std::string& root, const std::vector<std::string>& unreadable,
                        std::vector<std::string>* notes, std::vector<ImageData>* images) {
  std::string files;
  std::vector<std::string> seen;
  StatusOr<WorkspaceFiles> layer = WorkspaceFiles::Open(root);
  for (size_t at = text.find('@'); at != std::string::npos; at = text.find('@', at + 1)) {
    if (at > 0 && !isspace(static_cast<unsigned char>(text[at - 1]))) continue;  // an e-mail address
    size_t end = text.find_first_of(" \t\n", at);
    std::string word = text.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
    while (!word.empty() && (word.back() == ',' || word.back() == '.' || word.back() == ')' || word.back() == ':')) {
      word.pop_back();
    }
    if (word.empty() || std::find(seen.begin(), seen.end(), word) != seen.end()) continue;
    seen.push_back(word);
    StatusOr<std::string> path = ResolveWorkspacePath(word, root);
    if (!path.ok()) {
      notes->push_back("@" + word + ": not attached (" + path.status().message() + ")");
      continue;
    }
    std::string shown = DisplayPath(*path, root);
    if (shown == ".odin" || shown.rfind(".odin/", 0) == 0) {
      notes->push_back("@" + word + ": not attached (Odin's state directory)");
      continue;
    }
    // What Read may not read is not attached either, whoever wrote the @.
    if (std::any_of(unreadable.begin(), unreadable.end(),
                    [&path](const std::string& p) { return PathPatternCovers(p, *path); })) {
      notes->push_back("@" + word + ": not attached (a Read deny rule covers it)");
      continue;
    }
    // Through the safe file layer: a link out of the workspace, a device
    // or a FIFO is not attached.
    size_t cap = images != nullptr ? std::max(kAttachBytes, kMaxImageBytes) + 1 : kAttachBytes + 1;
    StatusOr<std::string> content = layer.ok() ? layer->ReadFile(*path, cap) : layer.status();
    if (!content.ok()) {
      notes->push_back("@" + word + ": not attached (" + content.status().message() + ")");
      continue;
    }
    // An image goes as an image, whatever its name says; never decoded here.
    if (images != nullptr && ImageMediaType(*content)) {
      StatusOr<ImageData> image = MakeImage(std::move(*content), shown);
      if (!image.ok()) {
        notes->push_back("@" + word + ": not attached (" + image.status().message() + ")");
      } else if (images->size() >= kMaxImagesPerMessage) {
        notes->push_back("@" + word + ": not attached (over " + std::to_string(kMaxImagesPerMessage) +
                         " images in one message)");
      } else {
        notes->push_back("attached image " + shown + " (" + image->media_type + ", " +
                         std::to_string(image->bytes.size()) + " bytes)");
        images->push_back(std::move(*image));
      }
      continue;
    }
    if (LooksBinary(*content)) {
      notes->push_back("@" + word + ": not attached (a binary file)");
      continue;
    }
    bool cut = content->size() > kAttachBytes;
    if (cut) content->resize(kAttachBytes);
    if (files.size() + content->size() > kAttachTotalBytes) {
      notes->push_back("@" + word + ": not attached (over 1 MiB of attachments in one message)");
      continue;
    }
    files += "\n\n<file path=\"" + shown + "\"" + (cut ? " truncated=\"true\"" : "") + ">\n" + ToDisplayText(*content) +
             (content->empty() || content->back() == '\n' ? "" : "\n") + "</file>";
    notes->push_back("attached " + shown + " (" + std::to_string(content->size()) + " bytes" + (cut ? ", cut" : "") +
                     ")");
  }
  if (files.empty()) return text;
  return text + "\n\nThe user attached these files (as they are now; Read a file before you edit it):" + files;
}

StatusOr<ExpandedCommand> ExpandCustomCommand(AgentSession& session, const ClaudeDef& def, const std::string& args,
                                              Mode mode) {
  ExpandedCommand out;
  std::string body = def.body;
  // Claude Code's rule: a body that takes no arguments gets them after it.
  bool takes = body.find("$ARGUMENTS") != std::string::npos;
  for (int n = 1; n <= 9 && !takes; ++n) takes = body.find("$" + std::to_string(n)) != std::string::npos;
  // !`command`: run in order, each output in its place. @path attaches
  // only what the body and the arguments name (scanned), never what a
  // command printed.
  std::string text;
  std::string scanned;
  size_t ran = 0;
  for (size_t i = 0; i < body.size();) {
    size_t bang = body.find("!`", i);
    size_t close = bang == std::string::npos ? std::string::npos : body.find('`', bang + 2);
    if (close == std::string::npos) {
      std::string rest = SubstituteArguments(body.substr(i), args, false);
      text += rest;
      scanned += rest;
      break;
    }
    std::string before = SubstituteArguments(body.substr(i, bang - i), args, false);
    text += before;
    scanned += before + " ";
    std::string line = body.substr(bang + 2, close - bang - 2);
    std::string command = BangScript(line, args);
    if (++ran > kMaxBangCommands) {
      return Status::InvalidArgument("/" + def.name, "more than " + std::to_string(kMaxBangCommands) +
                                                         " !`command`s in " + def.source + "; nothing was sent");
    }
    ASSIGN_OR_RETURN(std::string output, RunBang(session, def, command, line, mode));
    text += output;
    i = close + 1;
  }
  if (!takes && !args.empty()) {
    text += "\n\nARGUMENTS: " + args;
    scanned += " " + args;
  }
  if (!def.files.empty()) {  // a skill's: where its files are
    text += "\n\nThe skill's files, in " + DisplayPath(def.dir, session.runtime().workspace().root) + "/:\n";
    for (const std::string& f : def.files) text += "- " + f + "\n";
  }
  const std::string& root = session.runtime().workspace().root;
  const char* home = getenv("HOME");
  std::vector<std::string> unreadable =
      UnreadablePatterns(session.runtime().config().permissions, root, home != nullptr ? home : "");
  std::string attached = AttachFiles(scanned, root, unreadable, &out.notes);
  out.text = text + attached.substr(scanned.size());
  out.tool_list = def.tools;
  if (!def.model.empty() && def.model != "inherit") {
    out.notes.push_back("/" + def.name + ": model '" + VisibleControls(def.model) +
                        "' not applied: the session's model answers (docs/claude-code.md)");
  }
  return out;
}

std::optional<SlashCommand> FindSlashCommand(AgentSession& session, const std::string& line) {
  SlashCommand c;
  if ((c.def = FindCustomCommand(session.defs(), line, &c.args)) != nullptr) {
    c.origin = "/" + c.def->name + " from " + c.def->source;
    return c;
  }
  c.mcp_prompt = ParseMcpPromptLine(session.runtime().coordinator().mcp(), line);
  if (!c.mcp_prompt) return std::nullopt;
  c.args = c.mcp_prompt->args;
  c.origin = "/" + std::string(kMcpToolPrefix) + c.mcp_prompt->server + "__" + c.mcp_prompt->prompt +
             ", a prompt of MCP server " + c.mcp_prompt->server;
  return c;
}

StatusOr<ExpandedCommand> ExpandSlashCommand(AgentSession& session, const SlashCommand& command, Mode mode) {
  if (command.def != nullptr) return ExpandCustomCommand(session, *command.def, command.args, mode);
  ExpandedCommand out;
  ASSIGN_OR_RETURN(out.text, ExpandMcpPrompt(session, *command.mcp_prompt, mode));
  return out;
}

std::string DescribeSlashCommands(AgentSession& session) {
  std::string custom = DescribeCustomCommands(session.defs());
  std::string prompts = DescribeMcpPrompts(session.runtime().coordinator().mcp());
  return (custom.empty() ? "" : "Custom commands (.claude/commands, ~/.claude/commands):\n" + custom) +
         (prompts.empty() ? "" : "MCP prompts (their servers' words):\n" + prompts);
}

std::string DescribeCustomCommands(const ClaudeDefs& defs) {
  std::string out;
  for (const ClaudeDef& d : defs.commands) {
    std::string head = "/" + d.name + (d.argument_hint.empty() ? "" : " " + d.argument_hint);
    std::string where = d.scope + (d.group.empty() ? "" : ":" + d.group);
    out += "  " + VisibleControls(head) + std::string(head.size() < 20 ? 21 - head.size() : 1, ' ') +
           VisibleControls(d.description.empty() ? d.source : d.description) + " (" + where + ")\n";
  }
  return out;
}

}  // namespace odin

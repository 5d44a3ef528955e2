// odin: the command-line front end. Parses arguments with CLI11 and hands over
// to the subcommand functions of cli.h.

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/file_util.h"
#include "base/logging.h"
#include "base/subprocess.h"
#include "base/version.h"
#include "cli/cli.h"
#include "cli/cli_options.h"

namespace {

// Reports a usage error as one line. The exit code depends on the subcommand:
// `odin exec` reserves its codes for the command's own status.
int UsageError(const std::string& what, bool exec) {
  std::cerr << (exec ? "odin exec: " : "odin: ") << what << " (see odin --help)\n";
  return exec ? odin::kExecOwnError : odin::kUsageError;
}

// Replaces this process with odin-rpc (beside odin) and the same arguments.
int ExecRpc(const std::vector<std::string>& args) {
  std::string rpc = odin::ExecutableDir() + "/odin-rpc";
  std::vector<char*> argv = {const_cast<char*>(rpc.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(rpc.c_str(), argv.data());
  std::cerr << "odin: cannot run " << rpc << ": " << std::strerror(errno) << "\n";
  return odin::kError;
}

}  // namespace

int main(int argc, char** argv) {
  odin::EnsureStandardFds();
  // Not dumpable: the coordinator holds API keys and the workers' secrets; a
  // process of the same user must not read them through /proc/PID/mem or
  // /proc/PID/environ.
  prctl(PR_SET_DUMPABLE, 0);
  odin::InitLogging("odin");
  signal(SIGPIPE, SIG_IGN);  // a closed stdout is an error to handle, not a death

  // `odin exec ... -- CMD ARGS`: everything after the first "--" is the
  // command, untouched by option parsing.
  std::vector<std::string> args;
  std::vector<std::string> command;
  bool saw_separator = false;
  for (int i = 1; i < argc; ++i) {
    if (!saw_separator && std::strcmp(argv[i], "--") == 0) {
      saw_separator = true;
      continue;
    }
    (saw_separator ? command : args).push_back(argv[i]);
  }

  odin::GlobalFlags global;
  odin::ExecFlags exec;
  bool log_json = false, show_json = false, show_output = false, verify_json = false, reset_json = false,
       doctor_json = false;
  int log_limit = 20;
  std::string show_id;

  CLI::App app{
      "Odin: a coding agent runtime that trusts tools, not the model's word.\n"
      "Without a command: an interactive session. With -p PROMPT: one message, headless.",
      "odin"};
  app.set_version_flag("--version", ODIN_VERSION);
  odin::AgentFlags agent;
  bool print_given = false;
  app.add_option("-p,--print", agent.prompt, "Run one message headless and print the result")
      ->each([&print_given](const std::string&) { print_given = true; });
  odin::AddAgentOptions(&app, &agent);
  app.add_option("-C", global.dir, "Run as if started in DIR")->type_name("DIR");
  app.add_option("--sandbox", global.sandbox,
                 "Sandbox policy: auto, require, fallback (Landlock without namespaces, also as root) or off")
      ->check(CLI::IsMember({"auto", "require", "fallback", "off"}));
  app.add_flag("--network", global.network,
               "Edit-mode commands reach the network (never ask or plan); also sandbox.network in your config");

  CLI::App* exec_cmd = app.add_subcommand(
      "exec", "Run a command in a sandboxed worker and record it: odin exec [OPTIONS] -- CMD [ARGS...]");
  exec_cmd->fallthrough();
  exec_cmd->add_option("--timeout", exec.timeout_seconds, "Kill the command after SECONDS (exit 124)")
      ->check(CLI::Range(0.0, 1.0e7))
      ->type_name("SECONDS");
  exec_cmd->add_flag("--json", exec.json, "Print the result as JSON instead of streaming output");
  exec_cmd->add_option("--mode", exec.mode, "Run under the sandbox policy of a mode: ask, plan (read-only) or edit")
      ->check(CLI::IsMember({"ask", "plan", "edit"}));

  CLI::App* init_cmd = app.add_subcommand(
      "init", "Survey the repository and write ODIN.md, its instructions for agents (headless /init)");
  init_cmd->fallthrough();
  init_cmd->add_flag("--force", agent.force, "Update an existing ODIN.md (the model reads it and keeps what holds)");
  CLI::App* run_cmd = app.add_subcommand("run", "Run one message headless, like -p: odin run PROMPT");
  run_cmd->fallthrough();
  run_cmd->add_option("PROMPT", agent.prompt, "The message")->required();

  CLI::App* review_cmd = app.add_subcommand(
      "review", "Run the QA verifier on the uncommitted change (git diff HEAD) against this session's requests");
  review_cmd->fallthrough();

  odin::ToolFlags tool;
  CLI::App* tool_cmd = app.add_subcommand(
      "tool", "Run one tool call (Read, Grep, EditTool, ...) through the gates, a worker and the ledger");
  tool_cmd->fallthrough();
  tool_cmd
      ->add_option("NAME", tool.name,
                   "Tool name: LS, Glob, Grep, Read, WriteFile, EditTool, "
                   "MultiEditTool, TodoWrite, ExecuteCommand, lsp_check, memory_query, symbols, references, impact, "
                   "outline")
      ->required();
  tool_cmd->add_option("ARGS", tool.arguments, "The tool's arguments as JSON (default {})");
  tool_cmd->add_option("--session", tool.session, "Continue this session (its file cache and todos)");
  tool_cmd->add_option("--mode", tool.mode, "ask, plan or edit (default edit)")
      ->check(CLI::IsMember({"ask", "plan", "edit"}));
  tool_cmd->add_flag("--json", tool.json, "Print the result as JSON, with the session id");
  tool_cmd
      ->add_option("--approval", tool.approval,
                   "A call that needs approval (a command's ask rule, a read outside the workspace): deny or allow")
      ->check(CLI::IsMember({"deny", "allow"}));

  odin::IndexFlags index;
  CLI::App* index_cmd = app.add_subcommand(
      "index", "Bring the symbol index (.odin/index.db) up to date: only changed files are parsed again");
  index_cmd->fallthrough();
  index_cmd->add_flag("--rebuild", index.rebuild, "Parse every file again, from an empty index");
  index_cmd->add_flag("--stats", index.stats, "Show what the index holds, by language");
  index_cmd->add_flag("--json", index.json, "Print the summary as JSON");

  CLI::App* log_cmd = app.add_subcommand("log", "List recorded executions, newest first");
  log_cmd->fallthrough();
  log_cmd->add_flag("--json", log_json, "Print JSON");
  log_cmd->add_option("--limit", log_limit, "Show at most N executions")->check(CLI::PositiveNumber);

  bool sessions_json = false;
  CLI::App* sessions_cmd =
      app.add_subcommand("sessions", "List the workspace's agent sessions, newest first (for --resume)");
  sessions_cmd->fallthrough();
  sessions_cmd->add_flag("--json", sessions_json, "Print JSON");
  std::string fork_id;
  CLI::App* fork_cmd = sessions_cmd->add_subcommand(
      "fork", "Copy a session under a new id (odin -r NEW_ID goes on with it), leaving it as it was");
  fork_cmd->fallthrough();
  fork_cmd->add_option("SESSION_ID", fork_id, "The session (id or a unique prefix)")->required();

  CLI::App* show_cmd = app.add_subcommand("show", "Show one execution with its artifacts");
  show_cmd->fallthrough();
  show_cmd->add_option("EXECUTION_ID", show_id, "Execution id or a unique prefix")->required();
  show_cmd->add_flag("--json", show_json, "Print JSON");
  show_cmd->add_flag("--output", show_output, "Print only the recorded output, raw");

  odin::UndoFlags undo;
  CLI::App* undo_cmd = app.add_subcommand("undo", "Put back what a call, a message or the last call changed");
  undo_cmd->fallthrough();
  undo_cmd->add_option("EXECUTION_ID", undo.execution_id, "Undo this call's changes (id or unique prefix)");
  undo_cmd->add_option("--message", undo.message_id, "Undo the changes of every call of this message");
  undo_cmd->add_flag("--last", undo.last, "Undo the newest call that changed files");
  undo_cmd->add_flag("--dry-run", undo.dry_run, "Print the diff it would apply; change nothing");
  undo_cmd->add_flag("--force", undo.force, "Overwrite later changes; skip what cannot be undone");
  undo_cmd->add_flag("--json", undo.json, "Print JSON");

  odin::ViewFlags view;
  std::vector<std::pair<CLI::App*, const char*>> view_cmds;
  for (auto [name, what] : {std::pair{"diff", "Show what an isolated session changed (its view against the workspace)"},
                            std::pair{"apply", "Land an isolated session's changes in the workspace, all or nothing"},
                            std::pair{"discard", "Drop an isolated session's view and its changes"}}) {
    CLI::App* cmd = app.add_subcommand(name, what);
    cmd->fallthrough();
    cmd->add_option("SESSION", view.session, "The isolated session's id or a unique prefix")->required();
    cmd->add_flag("--json", view.json, "Print JSON");
    if (std::string(name) == "apply") {
      cmd->add_flag("--no-recheck", view.no_recheck,
                    "Land without running the checks on the workspace as it is now with the change");
    }
    view_cmds.push_back({cmd, name});
  }

  odin::RewindFlags rewind;
  CLI::App* rewind_cmd = app.add_subcommand(
      "rewind", "Take a session back to before one of your messages: its files (as odin undo) and its conversation");
  rewind_cmd->fallthrough();
  rewind_cmd
      ->add_option("--message", rewind.message_id,
                   "The message: its id or a unique prefix (the message_id of -p's JSON result)")
      ->required();
  rewind_cmd->add_flag("--code-only", rewind.code_only, "Put the files back; keep the conversation");
  rewind_cmd->add_flag("--conversation-only", rewind.conversation_only, "Take the conversation back; keep the files");
  rewind_cmd->add_flag("--json", rewind.json, "Print JSON");

  CLI::App* ledger_cmd = app.add_subcommand("ledger", "Ledger maintenance");
  ledger_cmd->require_subcommand(1);
  CLI::App* verify_cmd = ledger_cmd->add_subcommand("verify", "Check the ledger's hash chain");
  verify_cmd->fallthrough();
  ledger_cmd->fallthrough();
  verify_cmd->add_flag("--json", verify_json, "Print JSON");
  CLI::App* reset_cmd = ledger_cmd->add_subcommand(
      "reset", "Start a new ledger: move the old one aside (kept, never deleted) and record the reset in its anchor");
  reset_cmd->fallthrough();
  reset_cmd->add_flag("--json", reset_json, "Print JSON");

  // The daemon and its clients live in odin-rpc (gRPC); odin hands them over.
  std::string connect, token_unused, listen_unused, session_unused;
  app.add_option("--connect", connect, "With -p: send the message to the daemon at ADDRESS (unix:PATH or HOST:PORT)")
      ->type_name("ADDRESS");
  app.add_option("--token", token_unused, "The daemon's bearer token (TCP); also ODIN_TOKEN");
  app.add_option("--session", session_unused, "With -p --connect: send to this session of the daemon");
  CLI::App* serve_cmd = app.add_subcommand("serve", "Run the coordinator as a gRPC daemon for this workspace");
  serve_cmd->fallthrough();
  serve_cmd->add_option("--listen", listen_unused,
                        "unix:PATH or HOST:PORT (default: a 0600 unix socket in $XDG_RUNTIME_DIR/odin/, named in "
                        ".odin/daemon.json; TCP needs a bearer token)");
  CLI::App* attach_cmd =
      app.add_subcommand("attach", "Attach to a session of the workspace's daemon (a new one if none)");
  attach_cmd->fallthrough();
  attach_cmd->add_option("SESSION", session_unused, "The session id");

  CLI::App* doctor_cmd = app.add_subcommand("doctor", "Report sandbox layers, tools and the ledger");
  doctor_cmd->fallthrough();
  doctor_cmd->add_flag("--json", doctor_json, "Print JSON");

  odin::KeysFlags keys;
  CLI::App* keys_cmd = app.add_subcommand("keys", "CURVE keys for the coordinator and its remote hosts");
  keys_cmd->fallthrough();
  keys_cmd->require_subcommand(1);
  CLI::App* keys_generate = keys_cmd->add_subcommand(
      "generate", "Write the coordinator's key pair (if missing) and a key pair per host, added to allowed_hosts");
  keys_generate->add_option("--dir", keys.dir, "Where (default: $XDG_CONFIG_HOME/odin/keys)");
  keys_generate->add_option("--host", keys.hosts, "A host's name (repeatable; default host-1)");

  odin::HostFlags host;
  CLI::App* host_cmd = app.add_subcommand(
      "host", "Run workers on this machine for a coordinator elsewhere: odin host --connect tcp://HOST:PORT");
  host_cmd->fallthrough();
  host_cmd->add_option("--connect", host.connect, "The coordinator's workers.remote.listen address")->required();
  host_cmd->add_option("--keys", host.keys, "The keys directory (default: $XDG_CONFIG_HOME/odin/keys)");
  host_cmd->add_option("--key", host.key, "This host's secret key (default: KEYS/hosts/NAME.key)");
  host_cmd->add_option("--coordinator-key", host.coordinator_key,
                       "The coordinator's public key, or its file (default: KEYS/coordinator.pub)");
  host_cmd->add_option("--name", host.name, "This host's name (default: host-1 for the key, hostname for records)");
  host_cmd->add_option("--workers", host.workers, "Workers it runs at once (default: the number of cores)");
  host_cmd->add_flag("--once", host.once,
                     "Serve one coordinator's session, then exit (as hosts a launcher starts do); give up if "
                     "none welcomes this host within 10 minutes");

  odin::TrustFlags trust;
  CLI::App* trust_cmd = app.add_subcommand(
      "trust", "Trust this workspace's odinconfig.json (its sandbox, model and allow settings) as it is now");
  trust_cmd->fallthrough();
  CLI::Option* revoke = trust_cmd->add_flag("--revoke", trust.revoke, "Stop trusting it");
  trust_cmd->add_flag("--show", trust.show, "Only show whether it is trusted and what it sets")->excludes(revoke);

  odin::PermissionsFlags permissions;
  CLI::App* permissions_cmd =
      app.add_subcommand("permissions", "Approvals saved by an \"always\" answer: odin permissions list|remove N");
  permissions_cmd->fallthrough();
  CLI::App* permissions_list = permissions_cmd->add_subcommand("list", "List them, numbered");
  CLI::App* permissions_remove = permissions_cmd->add_subcommand("remove", "Revoke one (its number or its key)");
  permissions_remove->add_option("KEY", permissions.key, "The number odin permissions list shows, or the key")
      ->required();
  for (CLI::App* c : {permissions_cmd, permissions_list, permissions_remove}) {
    c->add_flag("--json", permissions.json, "Print JSON");
  }

  odin::McpFlags mcp;
  CLI::App* mcp_cmd = app.add_subcommand("mcp", "MCP servers: odin mcp add|remove|list|login|logout|serve");
  mcp_cmd->fallthrough();
  mcp_cmd->require_subcommand(1);
  CLI::App* mcp_add = mcp_cmd->add_subcommand(
      "add", "Add a server to your config: odin mcp add NAME [OPTIONS] -- COMMAND [ARGS...] (http: -- URL)");
  mcp_add->add_option("NAME", mcp.name, "The server's name (its tools are mcp__NAME__TOOL)")->required();
  mcp_add->add_option("--transport", mcp.transport, "stdio or http")->check(CLI::IsMember({"stdio", "http"}));
  mcp_add->add_option("-e,--env", mcp.env, "KEY=VALUE for the server's environment");
  mcp_add->add_option("--header", mcp.headers, "NAME: VALUE sent to an http server");
  mcp_add->add_flag("--writable", mcp.writable, "Its sandbox may write the workspace");
  mcp_add->add_flag("--network", mcp.network, "Its sandbox keeps the network");
  mcp_add->add_flag("--no-sandbox", mcp.no_sandbox, "Run it on the host, unsandboxed");
  CLI::App* mcp_remove = mcp_cmd->add_subcommand("remove", "Remove a server from your config");
  mcp_remove->add_option("NAME", mcp.name, "The server's name")->required();
  CLI::App* mcp_list = mcp_cmd->add_subcommand("list", "The servers in force, and where each comes from");
  mcp_list->add_flag("--json", mcp.json, "Print JSON");
  CLI::App* mcp_login =
      mcp_cmd->add_subcommand("login", "Log in to an HTTP server (OAuth): the token is kept in your state directory");
  mcp_login->add_option("NAME", mcp.name, "The server's name")->required();
  mcp_login->add_flag("--no-browser", mcp.no_browser, "Print the URL only; open no browser");
  mcp_login->add_option("--timeout", mcp.timeout_seconds, "Seconds to wait for the login (default 300)")
      ->check(CLI::Range(1, 3600));
  mcp_login->add_option("--callback-port", mcp.callback_port, "The redirect listener's port on 127.0.0.1")
      ->check(CLI::Range(1, 65535));
  CLI::App* mcp_logout =
      mcp_cmd->add_subcommand("logout", "Remove (and revoke) the tokens of an HTTP server: NAME or its URL");
  mcp_logout->add_option("NAME", mcp.name, "The server's name, or its URL")->required();
  std::string serve_mode = "ask", serve_approval = "ask";
  CLI::App* mcp_serve =
      mcp_cmd->add_subcommand("serve", "Be an MCP server on stdio: Odin's gated, sandboxed, validated tools");
  mcp_serve->add_option("--mode", serve_mode, "ask, plan or edit (default ask)")
      ->check(CLI::IsMember({"ask", "plan", "edit"}));
  mcp_serve
      ->add_option("--approval", serve_approval,
                   "A call that needs approval: ask the client (default; denied if it cannot be asked), deny or allow")
      ->check(CLI::IsMember({"ask", "deny", "allow"}));

  CLI::App* acp_cmd = app.add_subcommand(
      "acp", "Be an Agent Client Protocol agent on stdio, for editors (Zed, JetBrains IDEs, Neovim, Emacs)");
  acp_cmd->fallthrough();

  // -p or --print followed by an option, or last: a flag (see below).
  bool print_flag = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] != "-p" && args[i] != "--print") continue;
    if (i + 1 == args.size() || (args[i + 1].size() > 1 && args[i + 1][0] == '-')) {
      print_flag = true;
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
    }
    break;
  }

  // Extras are allowed only at the top, so that `odin frob` can be named as
  // an unknown command below (subcommands were created without extras).
  app.allow_extras();
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return UsageError(e.what(), exec_cmd->parsed());
  }

  // `odin -p --mode ask "fix it"`, as Claude Code users type it: -p followed
  // by an option is a flag, and the prompt is the first word left over.
  std::vector<std::string> remaining = app.remaining();
  if (print_flag) {
    print_given = true;
    if (!remaining.empty() && !remaining.front().empty() && remaining.front()[0] != '-') {
      agent.prompt = remaining.front();
      remaining.erase(remaining.begin());
    }
  }
  if (!remaining.empty()) {
    const std::string first = remaining.front();
    if (!app.get_subcommands().empty()) {
      return UsageError("unexpected argument '" + first + "'", exec_cmd->parsed());
    }
    if (!first.empty() && first[0] == '-') return UsageError("unknown option '" + first + "'", false);
    return UsageError("unknown command '" + first + "'", false);
  }
  // `git diff | odin -p "review this"`: what is piped in joins the prompt.
  std::string typed_prompt = agent.prompt;
  if (run_cmd->parsed() || print_given) {
    odin::StatusOr<std::string> piped = odin::ReadPipedPrompt(STDIN_FILENO, !agent.prompt.empty());
    if (!piped.ok()) return UsageError(piped.status().message(), false);
    if (!piped->empty()) agent.prompt = agent.prompt.empty() ? *piped : agent.prompt + "\n\n" + *piped;
  }
  if (serve_cmd->parsed() || attach_cmd->parsed() || !connect.empty()) {
    if (!serve_cmd->parsed() && !attach_cmd->parsed() && !run_cmd->parsed() && !print_given) {
      return UsageError("--connect goes with -p PROMPT (or odin attach)", false);
    }
    // odin-rpc takes the same arguments; `run PROMPT` is `-p PROMPT` there.
    std::vector<std::string> rpc_args = args;
    if (run_cmd->parsed() || print_given) {
      // The prompt as it stands now (stdin joined) goes first, as -p PROMPT.
      for (const std::string& token :
           {std::string("run"), std::string("-p"), std::string("--print"), typed_prompt, "--print=" + typed_prompt}) {
        auto it = std::find(rpc_args.begin(), rpc_args.end(), token);
        if (it != rpc_args.end() && (token != "run" || run_cmd->parsed())) rpc_args.erase(it);
      }
      rpc_args.insert(rpc_args.begin(), {"-p", agent.prompt});
    }

    return ExecRpc(rpc_args);
  }
  if (exec_cmd->parsed()) {
    if (!saw_separator)
      return UsageError("missing '--' before the command: odin exec [OPTIONS] -- CMD [ARGS...]", true);
    if (command.empty()) return UsageError("missing command after '--'", true);
    exec.argv = command;
    return odin::RunExec(global, exec);
  }
  if (mcp_serve->parsed()) {
    if (saw_separator) return UsageError("unexpected '--'", false);
    return odin::RunMcpServe(global, serve_mode, serve_approval);
  }
  if (acp_cmd->parsed()) {
    if (saw_separator) return UsageError("unexpected '--'", false);
    if (print_given) return UsageError("odin acp takes its messages from the editor; -p does not go with it", false);
    return odin::RunAcp(global, agent);
  }
  if (mcp_login->parsed() || mcp_logout->parsed()) {
    if (saw_separator) return UsageError("unexpected '--'", false);
    return mcp_login->parsed() ? odin::RunMcpLogin(global, mcp) : odin::RunMcpLogout(global, mcp);
  }
  if (mcp_cmd->parsed()) {
    mcp.action = mcp_add->parsed() ? "add" : mcp_remove->parsed() ? "remove" : "list";
    if (saw_separator && mcp.action != "add") return UsageError("unexpected '--'", false);
    mcp.command = command;
    return odin::RunMcp(global, mcp);
  }
  if (saw_separator) return UsageError("unexpected '--'", false);
  if (init_cmd->parsed()) {
    if (print_given) return UsageError("odin init writes its own message; -p does not go with it", false);
    agent.init = true;
    return odin::RunPrompt(global, agent);
  }
  if (review_cmd->parsed()) {
    if (print_given) return UsageError("odin review writes its own message; -p does not go with it", false);
    agent.review = true;
    agent.prompt = "/review";
    return odin::RunPrompt(global, agent);
  }
  if (run_cmd->parsed() || print_given) {
    if (agent.prompt.empty()) return UsageError("the prompt is empty", false);
    return odin::RunPrompt(global, agent);
  }
  if (!agent.json_schema.empty() || !agent.images.empty()) {
    return UsageError("--json-schema and --image go with -p (interactively, type @path to attach an image)", false);
  }
  if (tool_cmd->parsed()) return odin::RunTool(global, tool);
  if (index_cmd->parsed()) return odin::RunIndex(global, index);
  if (log_cmd->parsed()) return odin::RunLog(global, log_json, log_limit);
  if (fork_cmd->parsed()) return odin::RunSessionsFork(global, fork_id, sessions_json);
  if (sessions_cmd->parsed()) return odin::RunSessions(global, sessions_json);
  if (rewind_cmd->parsed()) return odin::RunRewind(global, rewind);
  if (show_cmd->parsed()) return odin::RunShow(global, show_id, show_json, show_output);
  if (verify_cmd->parsed()) return odin::RunLedgerVerify(global, verify_json);
  if (reset_cmd->parsed()) return odin::RunLedgerReset(global, reset_json);
  if (undo_cmd->parsed()) return odin::RunUndo(global, undo);
  for (auto [cmd, name] : view_cmds) {
    if (cmd->parsed()) {
      view.action = name;
      return odin::RunView(global, view);
    }
  }
  if (doctor_cmd->parsed()) return odin::RunDoctor(global, doctor_json);
  if (keys_generate->parsed()) return odin::RunKeysGenerate(keys);
  if (host_cmd->parsed()) return odin::RunHost(global, host);
  if (trust_cmd->parsed()) return odin::RunTrust(global, trust);
  if (permissions_cmd->parsed()) {
    if (permissions_remove->parsed()) permissions.action = "remove";
    return odin::RunPermissions(global, permissions);
  }
  return odin::RunInteractive(global, agent);
}

#include "cli/cli_options.h"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <CLI/CLI.hpp>

#include "cli/cli.h"

namespace odin {

void AddAgentOptions(CLI::App* a, AgentFlags* agent) {
  a->add_option("--output-format", agent->output_format, "text, json or stream-json (with -p)")
      ->check(CLI::IsMember({"text", "json", "stream-json"}));
  a->add_option("--mode", agent->mode, "ask, plan or edit (default edit)")
      ->check(CLI::IsMember({"ask", "plan", "edit"}));
  a->add_option("--model", agent->llm.model, "The planner model");
  a->add_option("--utility-model", agent->llm.utility_model, "The utility model (default: the planner model)");
  a->add_option("--provider", agent->llm.provider,
                "openai (Chat Completions), openai-responses (the Responses API), anthropic or demo")
      ->check(CLI::IsMember({"openai", "openai-responses", "anthropic", "demo"}));
  a->add_option("--base-url", agent->llm.base_url, "The provider's base URL (OpenAI's includes /v1)");
  CLI::Option* resume =
      a->add_option("-r,--resume", agent->resume, "Continue a session of this workspace (odin sessions lists them)");
  a->add_flag("-c,--continue", agent->continue_last, "Continue the workspace's newest session")->excludes(resume);
  a->add_flag("--fork-session", agent->fork_session,
              "With -r or -c: go on in a copy of the session under a new id, leaving it as it was");
  a->add_flag("--isolated", agent->isolated,
              "Work in a copy of the workspace; odin diff, apply or discard SESSION afterwards (with -r or -c: "
              "and --fork-session: a copy of that session)");
  a->add_option("--attempts", agent->attempts,
                "With -p: N agents try the message at once, each in an isolated view; Odin lands the one whose checks "
                "pass with the smallest change")
      ->check(CLI::Range(1, 16))
      ->excludes(resume);
  a->add_option("--context-window", agent->llm.context_window,
                "The model's context window in tokens (default: llm.context_window, else the model family's)")
      ->check(CLI::Range(int64_t{1000}, int64_t{100000000}));
  a->add_option("--max-turns", agent->max_turns, "Budget: model calls per message")->check(CLI::PositiveNumber);
  a->add_option("--max-tool-calls", agent->max_tool_calls, "Budget: tool calls per message")
      ->check(CLI::PositiveNumber);
  a->add_option("--max-tokens", agent->max_tokens, "Budget: input plus output tokens per message")
      ->check(CLI::PositiveNumber);
  a->add_option("--max-budget-usd", agent->max_budget_usd, "Budget: model cost per message, in USD")
      ->check(CLI::Range(0.000001, 1.0e6));
  a->add_option("--max-wall-seconds", agent->max_wall_seconds, "Budget: wall time per message")
      ->check(CLI::Range(0.001, 2592000.0));
  a->add_option("--approval", agent->approval,
                "Calls that need approval (an ask rule, a command not understood, a read outside the workspace): deny, "
                "allow or prompt "
                "(default: deny with -p, prompt in the interactive session)")
      ->check(CLI::IsMember({"deny", "allow", "prompt"}));
  a->add_option("--profile", agent->profile,
                "Checks before completion: fast (none), auto (lint, tests), safe (+ build), strict (+ memory-forced)")
      ->check(CLI::IsMember({"fast", "auto", "safe", "strict"}));
  a->add_option("--json-schema,--output-schema", agent->json_schema,
                "With -p: the final answer must be JSON valid against this JSON Schema (a file, or the schema "
                "inline); it is in the JSON result's structured_output. Exit 9 when it is not");
  a->add_option("--image", agent->images, "With -p: attach this PNG, JPEG, GIF or WebP image to the message")
      ->allow_extra_args(false);
  a->add_option("--workflow", agent->workflow,
                "The workflow every message takes: question, minor-edit, tdd, batch, qa-proof (default: the hydrator "
                "chooses, in the safe and strict profiles)")
      ->check(CLI::IsMember({"question", "minor-edit", "tdd", "batch", "qa-proof"}));
}

StatusOr<std::string> ReadPipedPrompt(int fd, bool have_prompt) {
  struct stat st;
  if (fstat(fd, &st) != 0) return std::string();
  if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode) && !S_ISREG(st.st_mode)) return std::string();
  if (have_prompt && !S_ISREG(st.st_mode)) {
    pollfd p{fd, POLLIN, 0};
    int n;
    while ((n = poll(&p, 1, kPipedPromptWaitMs)) < 0 && errno == EINTR) {
    }
    if (n == 0) return std::string();
  }
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return PosixError("stdin", errno);
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxPipedPromptBytes) {
      return Status::InvalidArgument("stdin", "more than " + std::to_string(kMaxPipedPromptBytes >> 20) +
                                                  " MiB piped in; give the model a file to read instead");
    }
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

}  // namespace odin

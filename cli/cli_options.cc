#include "cli/cli_options.h"

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
  a->add_option("--provider", agent->llm.provider, "openai, anthropic or demo")
      ->check(CLI::IsMember({"openai", "anthropic", "demo"}));
  a->add_option("--base-url", agent->llm.base_url, "The provider's base URL (OpenAI's includes /v1)");
  CLI::Option* resume =
      a->add_option("-r,--resume", agent->resume, "Continue a session of this workspace (odin sessions lists them)");
  a->add_flag("-c,--continue", agent->continue_last, "Continue the workspace's newest session")->excludes(resume);
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
  a->add_option("--workflow", agent->workflow,
                "The workflow every message takes: question, minor-edit, tdd, batch, qa-proof (default: the hydrator "
                "chooses, in the safe and strict profiles)")
      ->check(CLI::IsMember({"question", "minor-edit", "tdd", "batch", "qa-proof"}));
}

}  // namespace odin

#pragma once
// The agent's command-line options (mode, model, budgets, approval, profile,
// output format), declared once for odin and for odin-rpc, which odin hands
// `serve`, `attach` and `--connect` over to with the same arguments: both must
// accept exactly the same ones.

#include <string>

#include "base/status.h"

namespace CLI {
class App;
}  // namespace CLI

namespace odin {

struct AgentFlags;

void AddAgentOptions(CLI::App* app, AgentFlags* agent);

// What is piped into `odin -p` (fd: a pipe, a socket or a file; a terminal
// or /dev/null gives ""), up to kMaxPipedPromptBytes; more is an error. With
// a prompt given, a pipe that stays silent for kPipedPromptWaitMs is taken
// as empty (a CI runner may hold stdin open without ever writing); without
// one, odin waits for it.
constexpr size_t kMaxPipedPromptBytes = 4u << 20;
constexpr int kPipedPromptWaitMs = 3000;
StatusOr<std::string> ReadPipedPrompt(int fd, bool have_prompt);

}  // namespace odin

#pragma once
// The agent's command-line options (mode, model, budgets, approval, profile,
// output format), declared once for odin and for odin-rpc, which odin hands
// `serve`, `attach` and `--connect` over to with the same arguments: both must
// accept exactly the same ones.

namespace CLI {
class App;
}  // namespace CLI

namespace odin {

struct AgentFlags;

void AddAgentOptions(CLI::App* app, AgentFlags* agent);

}  // namespace odin

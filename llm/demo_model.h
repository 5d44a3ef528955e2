#pragma once
// DemoModel: a scripted stand-in for a language model, so a new user sees the
// whole loop (tool calls, gates, workers, ledger) without an API key. It is
// labelled as what it is in everything it says. It looks around the
// workspace with two tool calls in parallel, runs one command, and answers
// from the ground-truth records it got back.
//
// Answers arrive on the next Tick, like a network reply would.

#include <deque>
#include <map>

#include "llm/llm.h"

namespace odin {

class DemoModel final : public LlmClient {
 public:
  const std::string& provider() const override { return name_; }
  uint64_t Start(const ChatRequest& request, Callbacks callbacks) override;
  void Cancel(uint64_t id) override { pending_.erase(id); }
  void Tick() override;
  std::optional<SteadyTime> NextTimer() const override;

 private:
  std::string name_ = "demo";
  std::map<uint64_t, std::pair<ChatResponse, Callbacks>> pending_;
  uint64_t next_id_ = 1;
};

}  // namespace odin

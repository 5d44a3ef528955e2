#pragma once
// Context accounting: how many tokens a request to the model holds, and how
// many the model can take.
//
// Before a request is sent its size is estimated from its bytes (system
// prompt, messages, tool calls and results, tool schemas), at a number of
// bytes per token that each answer's reported input tokens calibrate. A
// model's window comes from --context-window, llm.context_window, or the
// table of known model families (else 128,000 tokens).
//
// Thread-safety: none; one per agent loop.

#include <cstdint>
#include <string>

#include "llm/llm.h"

namespace odin {

constexpr int64_t kDefaultContextWindow = 128000;

// The context window of a known model family (by the model's name), or
// kDefaultContextWindow.
int64_t DefaultContextWindow(const std::string& model);

// The bytes a request sends that count against the window: the system
// prompt, every message's text, tool calls and results, the tool schemas, and
// a small overhead per message.
int64_t RequestBytes(const ChatRequest& request);
int64_t MessageBytes(const ChatMessage& message);

class TokenEstimator {
 public:
  // Tokens in that many bytes, at the calibrated rate. Never 0 for bytes > 0.
  int64_t Tokens(int64_t bytes) const;
  int64_t Estimate(const ChatRequest& request) const { return Tokens(RequestBytes(request)); }
  // A request of `bytes` was reported as `tokens` input tokens: the rate
  // moves halfway towards what that says (within 1.5 and 8 bytes a token).
  // Reports of 0 tokens (a server that does not count) change nothing.
  void Calibrate(int64_t bytes, int64_t tokens);
  double bytes_per_token() const { return bytes_per_token_; }

 private:
  // Code and JSON run at about 3 to 4 bytes a token in the common
  // tokenizers; starting low overestimates, which compacts early, not late.
  double bytes_per_token_ = 3.5;
};

// What an agent knows of its context, for the status line and /cost.
struct ContextUse {
  int64_t window = 0;         // tokens the model takes
  int64_t last_input = 0;     // the last request, as the provider reported it (0: none yet)
  int64_t next_estimate = 0;  // the next request, estimated
  int compactions = 0;        // in this session
};

}  // namespace odin

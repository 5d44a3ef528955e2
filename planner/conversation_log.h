#pragma once
// The conversation in the ledger: each message an agent adds to its
// conversation is written as it goes (the `conversation` table), with the
// compactions that changed it, so a session can be resumed, even after odin
// died, from exactly what the model last saw.
//
// Entries: "request" (what the user sent, verbatim), "user", "assistant",
// "tool_results" (a ChatMessage), "compaction" ({keep_from, how, handoff}),
// "clear", and "owner" (the process running the session; see
// session/resume.h).

#include <string>
#include <vector>

#include "base/status.h"
#include "ledger/ledger.h"
#include "llm/llm.h"

namespace odin {

std::string ChatMessageJson(const ChatMessage& message);
StatusOr<ChatMessage> ChatMessageFromJson(const std::string& json);
// The entry kind of a message: user, assistant or tool_results.
const char* ConversationKind(const ChatMessage& message);

// A conversation rebuilt from its entries.
struct ReplayedConversation {
  std::vector<ChatMessage> history;
  std::vector<std::string> user_requests;
  int compactions = 0;
};

// Replays entries in order: messages appended, each compaction's masking
// and handoff applied again, a clear emptying the history. Corruption,
// naming the entry, when one cannot be read.
StatusOr<ReplayedConversation> ReplayConversation(const std::vector<ConversationEntry>& entries);

// Closes a conversation cut off by a crash so it is well formed again: the
// tool calls of a last assistant message without results get an
// "interrupted" result each, and a last user message gets an assistant
// placeholder. Returns the messages it added (already appended).
std::vector<ChatMessage> CloseInterrupted(std::vector<ChatMessage>* history);

}  // namespace odin

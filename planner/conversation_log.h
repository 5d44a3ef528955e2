#pragma once
// The conversation in the ledger: each message an agent adds to its
// conversation is written as it goes (the `conversation` table), with the
// compactions that changed it, so a session can be resumed, even after odin
// died, from exactly what the model last saw.
//
// Entries: "request" (what the user sent, verbatim, with its message_id),
// "message_start" ({message_id}: a message's turns follow), "user",
// "assistant", "tool_results" (a ChatMessage), "compaction" ({keep_from,
// how, handoff}), "clear", "rewind" ({message_id}: the conversation as it
// was before that message's start; session/rewind.h), and "owner" (the
// process running the session; see session/resume.h).

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
// and handoff applied again, a clear emptying the history, a rewind taking
// away what came from its message's start on. Corruption, naming the
// entry, when one cannot be read.
StatusOr<ReplayedConversation> ReplayConversation(const std::vector<ConversationEntry>& entries);

// OK if a rewind to the message (its full id) can be added to entries:
// its start is in the conversation as it stands. FailedPrecondition, saying
// why not, if not.
Status CanRewindTo(const std::vector<ConversationEntry>& entries, const std::string& message_id);

// Closes a conversation cut off by a crash so it is well formed again: the
// tool calls of a last assistant message without results get an
// "interrupted" result each, and a last user message gets an assistant
// placeholder. Returns the messages it added (already appended).
std::vector<ChatMessage> CloseInterrupted(std::vector<ChatMessage>* history);

}  // namespace odin

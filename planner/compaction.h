#pragma once
// Compaction: making an agent's conversation fit its context window again,
// keeping what matters.
//
// Two steps, the second only when the first is not enough:
//   1. Masking: every tool result older than the recent turns becomes a
//      one-line stub naming its execution id (the whole output stays in the
//      ledger, where memory_query and `odin show` reach it). The files those
//      calls read or wrote leave the agent's file cache: the model no longer
//      sees the bytes, so an edit cannot be based on them.
//   2. A handoff replaces the older turns. Its facts come from Odin, never
//      from the model: the user's requests in their own words, the todo
//      list, the files changed and the failed attempts from the ledger, the
//      blocked state. The utility model adds only what was done, what is
//      pending and the current state, asked for as JSON; a loose answer is
//      repaired (the JSON inside prose, a string for a list) or, if it is
//      prose, kept as the current state. A summary that fails (an error, a
//      refusal, an empty answer) still compacts: the handoff then says there
//      is no summary, and the failure is recorded. Compaction cannot fail a
//      session.
//
// The recent turns stay verbatim. These are pure functions over the
// conversation; the agent loop (agent_compaction.cc) runs them.

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "llm/llm.h"

namespace odin {

// The assistant turns kept verbatim through a compaction.
constexpr int kRecentTurnsKept = 3;

// Where the recent turns begin: the index of the `turns`-th assistant
// message from the end, or 0 when there are fewer.
size_t RecentTurnsStart(const std::vector<ChatMessage>& history, int turns);

struct MaskResult {
  std::vector<std::string> masked;  // execution ids whose output was masked now
  // Files named by the masked calls (Read, the file tools, as the model wrote
  // them): they leave the file cache.
  std::set<std::string> files;
  int64_t bytes_before = 0;
  int64_t bytes_after = 0;
};

// Masks the tool results of history[0, end). Results masked before stay as
// they are.
MaskResult MaskToolResults(std::vector<ChatMessage>* history, size_t end);

// True iff a tool result's content is a masked stub.
bool IsMaskedResult(const std::string& content);

// The utility model's part of a handoff.
struct HandoffSummary {
  std::vector<std::string> done;
  std::vector<std::string> pending;
  std::string current_state;
  // How the answer came: "json" (as asked), "repaired" (JSON found in it or
  // loosely typed), "prose" (the text is the current state).
  std::string form = "json";
};

// The request that asks the utility model to summarise `older` (rendered as
// text, at most max_bytes of it, the newest part kept). focus: what the user
// asked the summary to keep (/compact FOCUS), or "".
ChatRequest SummaryRequest(const std::string& model, const std::vector<ChatMessage>& older, const std::string& focus,
                           int64_t max_bytes);

// Parses the utility model's answer: {"done": [..], "pending": [..],
// "current_state": ".."}, in a ```json fence or not ("json"); else the first
// JSON object in the text, its fields loosely typed (a string for a list,
// a missing field empty: "repaired"); else the text itself, if it says
// anything, as the current state ("prose"). InvalidArgument only for an
// answer with nothing in it.
StatusOr<HandoffSummary> ParseHandoffSummary(const std::string& text);

// Everything a handoff holds.
struct Handoff {
  std::string compaction_id;
  size_t replaced_messages = 0;
  std::vector<std::string> user_requests;   // verbatim, oldest first
  std::string todos;                        // the todo list as the planner context shows it
  std::string facts;                        // from the ledger: files changed, failed attempts
  std::string blocked;                      // the blocked state, if any
  const HandoffSummary* summary = nullptr;  // null: the utility model's part failed
  std::string summary_failure;              // why, when it did
};

// The text of the message that stands for the replaced turns.
std::string RenderHandoff(const Handoff& handoff);

// The conversation rebuilt: the handoff as a user message, then
// history[keep_from, end) verbatim. A kept suffix that opens with a user
// message gets the handoff prepended to it, so user turns never follow each
// other.
std::vector<ChatMessage> RebuildHistory(const std::string& handoff, const std::vector<ChatMessage>& history,
                                        size_t keep_from);

}  // namespace odin

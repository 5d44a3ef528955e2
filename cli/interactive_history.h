#pragma once
// The interactive session's commands on its own history: /undo and
// /rewind, and what /diff starts from (the user's last message).

#include <string>

#include "cli/terminal_view.h"
#include "session/agent_session.h"

namespace odin {

// The user's last message of the main agent in this session ("" if none).
std::string LastUserMessage(AgentSession& s);

// /undo: what the calls of the session's last message changed, shown, then
// put back (odin undo --message); the model hears of it with the next
// message.
void UndoLastMessage(AgentSession& s, bool force, TerminalView& term);

// /rewind: the session's messages, numbered; /rewind N (or an id) takes the
// session back to before that one, its files and its conversation
// (session/rewind.h), or refuses naming what is in the way.
void RewindToMessage(AgentSession& s, const std::string& arg, TerminalView& term);

}  // namespace odin

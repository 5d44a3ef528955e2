#pragma once
// What the model is told about each tool: name, description and the JSON
// schema of its arguments (the seed's schemas, plus Read, Grep's
// offset/limit, and ExecuteCommand).

#include <vector>

#include "llm/llm.h"
#include "planner/claude_defs.h"
#include "tools/tool_catalog.h"

namespace odin {

// The tools offered in mode, described for the model; a subagent is never
// offered AgentTool.
std::vector<ToolSpec> ToolSpecsForMode(Mode mode, bool subagent = false);
// InitTool's, which /init alone offers (Coordinator::ExtraToolSpecs).
ToolSpec InitToolSpec();
// ExecuteCommand's description, when the user gave edit mode's commands the
// network (--network, sandbox.network).
void NoteCommandsHaveNetwork(std::vector<ToolSpec>* specs);
// The strict profile: the writing tools take an "evidence" argument, the
// execution ids of the analysis (symbols, references, impact, outline; a
// Read for a file the index does not parse) the change relies on.
void AddEvidenceArgument(std::vector<ToolSpec>* specs);
// The project's custom agents and skills in the specs: AgentTool takes a
// subagent_type among the agents, Skill a skill's name; Skill is left out
// when there is no skill. The same bytes for the same definitions (prompt
// caching).
void ApplyClaudeDefs(std::vector<ToolSpec>* specs, const ClaudeDefs& defs);
// plan_update, offered while the reviewers hold the work to a plan.
ToolSpec PlanUpdateSpec();

// Asks for a compaction's handoff note in the providers' structured-output
// forms (ChatRequest::answer_schema_json: {"done": [..], "pending": [..],
// "current_state": ".."}): the summary request does, and a subagent's relay
// sets it on the summary requests it forwards.
void AskForHandoffNoteSchema(ChatRequest* req);

// ExecuteCommand's default and largest timeout, in seconds.
constexpr int kDefaultCommandTimeoutSeconds = 120;
constexpr int kMaxCommandTimeoutSeconds = 600;

}  // namespace odin

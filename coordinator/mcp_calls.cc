// The coordinator's side of the session's MCP servers (coordinator/
// mcp_servers.h): the port their listings and waiting calls use, the tools
// they add, and what their listings' changes tell the model.

#include <nlohmann/json.hpp>

#include "base/ids.h"
#include "base/json_input.h"

#include "coordinator/coordinator.h"
#include "odin/v1/worker.pb.h"
#include "planner/tool_specs.h"
#include "gates/tool_rules.h"
#include "tools/tool_catalog.h"

namespace odin {

using nlohmann::json;

namespace {
constexpr char kMoreNews[] = "(more MCP servers' changes: /mcp lists what they offer now)";

// An answer to an MCP worker's question, for the worker that holds its call
// (nobody, once the call has ended).
v1::McpAnswer* NewAnswer(v1::Envelope* env, const std::string& execution_id, const std::string& question_id) {
  env->set_protocol_version(v1::PROTOCOL_VERSION_CURRENT);
  v1::McpAnswer* a = env->mutable_mcp_answer();
  a->set_execution_id(execution_id);
  a->set_question_id(question_id);
  return a;
}
}  // namespace

McpServers::Port Coordinator::McpPort() {
  McpServers::Port port;
  port.list = [this](const std::string& id, const std::string& arguments_json, WorkerPolicy policy,
                     const std::string& lane, Duration timeout, std::function<void(const v1::ToolResult&)> done) {
    Call& c = calls_[id];
    c.call.execution_id = id;
    c.call.tool = kMcpListToolsTool;
    c.call.arguments_json = arguments_json;
    c.call.timeout = timeout;
    c.call.agent_id = o_.agent_id;
    c.call.mode = o_.mode;
    c.request.policy = policy;
    c.request.lane = lane;
    c.call.internal = true;
    c.handlers.on_done = [done = std::move(done)](const v1::ToolResult& r, const Status&) { done(r); };
    Dispatch(c);
  };
  port.resume = [this](const std::string& id) {
    auto c = calls_.find(id);
    if (c == calls_.end()) return;
    // Judged now, its arguments as Submit parsed them.
    c->second.mcp_waiting = false;
    Admit(c->second, Status::OK());
  };
  port.news = [this](const McpRegistry::Server& s) {
    if (on_mcp_server) on_mcp_server(s);
  };
  return port;
}

std::vector<ToolSpec> Coordinator::ExtraToolSpecs(Mode mode) const {
  std::vector<ToolSpec> specs =
      mcp_.registry().Specs(mode, [this](const std::string& s) { return McpServerDenied(s); });
  if (init_active_ && mode == Mode::kEdit) specs.push_back(InitToolSpec());
  return specs;
}

void Coordinator::GetMcpPrompt(const std::string& server, const std::string& name, const std::string& arguments_json,
                               CallMode mode, std::function<void(const v1::ToolResult&)> done) {
  std::string id = NewId("ex");
  Call& c = calls_[id];
  c.call.execution_id = id;
  c.call.tool = kMcpGetPromptTool;
  c.call.arguments_json = json({{"server", server}, {"name", name}, {"arguments", ParseJson(arguments_json)}})
                              .dump(-1, ' ', false, json::error_handler_t::replace);
  c.call.agent_id = "user";  // the user's slash command
  c.call.mode = mode;
  c.call.internal = true;
  c.handlers.on_done = [done = std::move(done)](const v1::ToolResult& r, const Status&) { done(r); };
  // A rule that denies the server's tools denies its prompts: the same
  // server, asked by the same session.
  RuleVerdict rule = JudgeToolName(std::string(kMcpToolPrefix) + server + "__" + name, o_.command_rules);
  if (rule.decision == RuleDecision::kDeny) {
    return EndHere(id, v1::TOOL_STATUS_REJECTED, Status::PermissionDenied(rule.reason + " (permissions.deny)"));
  }
  StatusOr<McpServers::Route> route = mcp_.RouteOf(server, mode);
  if (!route.ok()) return EndHere(id, v1::TOOL_STATUS_ERROR, route.status());
  c.call.timeout = route->timeout;
  c.request.policy = route->policy;
  c.request.lane = route->lane;
  c.request.lane_concurrency = route->concurrency;
  Typed(c.request).set_arguments_json(c.call.arguments_json);  // for the worker, as an MCP tool's
  Dispatch(c);
}

bool Coordinator::McpServerDenied(const std::string& server) const {
  // The server as a whole: mcp__SERVER__ matches mcp__SERVER, mcp__SERVER__*
  // and mcp__*, never a rule on one of its tools.
  return JudgeToolName(std::string(kMcpToolPrefix) + server + "__", o_.command_rules).decision == RuleDecision::kDeny;
}

void Coordinator::OnMcpListing(const std::string& lane, const std::string& output_json) {
  std::string change = mcp_.Relisted(lane, output_json);
  if (change.empty()) return;
  // The model hears of it once, in its conversation (never the system
  // prompt), and of a few KiB of it at most; the ledger keeps what changed.
  constexpr size_t kNewsBytes = 4096;
  std::string line = "MCP server " + lane + " changed (its words, untrusted): " + change;
  if (mcp_news_.size() + line.size() < kNewsBytes) {
    mcp_news_ += (mcp_news_.empty() ? "" : "\n") + line;
  } else if (mcp_news_.find(kMoreNews) == std::string::npos) {
    mcp_news_ += std::string("\n") + kMoreNews;
  }
  RecordGateEvent(o_.agent_id, "", "mcp_listing", "",
                  json({{"server", lane}, {"change", change}}).dump(-1, ' ', false, json::error_handler_t::replace));
}

bool Coordinator::OnMcpQuestion(const std::string& execution_id, const v1::McpQuestion& question) {
  auto c = calls_.find(execution_id);
  if (question.execution_id() != execution_id || c == calls_.end() || !IsMcpPolicy(c->second.request.policy)) {
    return false;
  }
  std::string server = c->second.request.lane;
  if (question.needs_authorization()) {
    // The server refused the token (or the lack of one): a refreshed one,
    // or "" (the worker then fails the call, naming `odin mcp login`).
    auto answer = [this, execution_id, server, id = question.question_id()](std::string header) {
      RecordGateEvent(o_.agent_id, "", "mcp_authorization", execution_id,
                      json({{"server", server}, {"refreshed", !header.empty()}}).dump());
      v1::Envelope env;
      NewAnswer(&env, execution_id, id)->set_authorization(header);
      pool_.SendToHolder(execution_id, env);
    };
    if (o_.mcp_authorizer == nullptr) {
      answer("");
    } else {
      o_.mcp_authorizer->Refresh(server, answer);
    }
    return true;
  }
  // The question's words and its fields' names are recorded; never a value.
  json schema = ParseJson(question.requested_schema_json());
  json fields = json::array();
  if (schema.is_object() && schema.contains("properties") && schema["properties"].is_object()) {
    for (auto it = schema["properties"].begin(); it != schema["properties"].end() && fields.size() < 20; ++it) {
      fields.push_back(it.key().substr(0, 64));
    }
  }
  std::string recorded = json({{"server", server}, {"message", question.message().substr(0, 500)}, {"fields", fields}})
                             .dump(-1, ' ', false, json::error_handler_t::replace);
  if (on_mcp_question) {
    // Asked of the user, the call's deadline held meanwhile.
    mcp_questions_[{execution_id, question.question_id()}] = {server, recorded};
    pool_.HoldDeadline(execution_id, true);
    on_mcp_question(
        {execution_id, question.question_id(), server, question.message(), question.requested_schema_json()});
    return true;
  }
  // Nobody here can answer it: declined.
  AnswerMcpQuestionAs(execution_id, question.question_id(), recorded, "decline", "", "headless");
  return true;
}

bool Coordinator::AnswerMcpQuestion(const std::string& execution_id, const std::string& question_id,
                                    const std::string& action, const std::string& content_json) {
  auto it = mcp_questions_.find({execution_id, question_id});
  if (it == mcp_questions_.end()) return false;
  std::string recorded = it->second.second;
  mcp_questions_.erase(it);
  if (calls_.count(execution_id) == 0) return false;  // the call ended meanwhile
  pool_.HoldDeadline(execution_id, false);
  AnswerMcpQuestionAs(execution_id, question_id, recorded, action, content_json, "user");
  return true;
}

void Coordinator::AnswerMcpQuestionAs(const std::string& execution_id, const std::string& question_id,
                                      const std::string& recorded, const std::string& action,
                                      const std::string& content_json, const char* answered_by) {
  auto c = calls_.find(execution_id);
  json detail = ParseJson(recorded);
  if (!detail.is_object()) detail = json::object();
  std::string how = action == "accept" || action == "decline" ? action : "cancel";
  detail["action"] = how;
  detail["answered_by"] = answered_by;
  RecordGateEvent(c == calls_.end() ? o_.agent_id : c->second.call.agent_id, "", "elicitation", execution_id,
                  detail.dump(-1, ' ', false, json::error_handler_t::replace));
  v1::Envelope env;
  v1::McpAnswer* a = NewAnswer(&env, execution_id, question_id);
  a->set_action(how);
  if (how == "accept") a->set_content_json(content_json);
  pool_.SendToHolder(execution_id, env);
}

std::string Coordinator::TakeMcpNews(const std::string& agent_id) {
  if (agent_id != o_.agent_id) return "";
  std::string news;
  news.swap(mcp_news_);
  return news;
}

}  // namespace odin

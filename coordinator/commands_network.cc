// The coordinator's side of the commands' proxy (sandbox.network's rules;
// workers/net_proxy.h): what the proxy says is read here, each connection
// is attributed to the command whose worker asked, recorded once per
// command and host, and a host no rule names is asked of the user (once,
// for the session, always) or refused headless.

#include <sys/socket.h>

#include <cerrno>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "coordinator/coordinator.h"
#include "base/ids.h"
#include "odin/v1/net_proxy.pb.h"
#include "odin/v1/worker.pb.h"
#include "pool/worker_sandbox.h"

namespace odin {

using nlohmann::json;

namespace {

constexpr size_t kMaxProxyMessage = 64 * 1024;
constexpr int kMaxProxyMessagesAtOnce = 256;
// Questions about hosts waiting for the user at once; past them, refused.
constexpr size_t kMaxProxyQuestions = 3;
// How long the proxy waits for an answer (workers/net_proxy.cc).
constexpr Duration kProxyQuestionLife = std::chrono::minutes(5);
// Records of one command's connections (one per host and port); past
// them, one record counts the rest.
constexpr size_t kMaxNetworkRecords = 50;

}  // namespace

void Coordinator::AnswerProxy(uint64_t connection, bool allow) {
  if (o_.commands_proxy_fd < 0) return;
  v1::ProxyMessage m;
  m.mutable_decision()->set_connection(connection);
  m.mutable_decision()->set_allow(allow);
  std::string bytes = m.SerializeAsString();
  if (send(o_.commands_proxy_fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
    spdlog::warn("the commands' proxy: cannot answer: {}", strerror(errno));
  }
}

void Coordinator::ServiceProxy() {
  if (o_.commands_proxy_fd < 0) return;
  std::string buf(kMaxProxyMessage, '\0');
  // A bounded batch a call: a flood of requests waits for the next Poll
  // rather than holding the coordinator.
  for (int handled = 0; handled < kMaxProxyMessagesAtOnce; ++handled) {
    ssize_t n = recv(o_.commands_proxy_fd, buf.data(), buf.size(), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    if (n == 0) {
      // Gone: commands reach nothing any more (odin keeps the port bound).
      spdlog::warn("the commands' network proxy ended: commands reach no network for the rest of the session");
      RecordGateEvent("main", "", "network_proxy_gone", "", "{}");
      o_.commands_proxy_fd = -1;
      break;
    }
    v1::ProxyMessage m;
    if (!m.ParseFromArray(buf.data(), static_cast<int>(n))) continue;
    // Whose command asked: the worker the proxy URL's user names, and what
    // it runs now (the proxy says so once the rules judged, while the
    // command waits for its connection).
    auto execution_of = [this](const std::string& client) {
      if (client.empty()) return std::string();
      for (const WorkerPool::WorkerInfo& w : pool_.workers()) {
        if (ProxyClientOf(w.id) == client) return w.execution_id;
      }
      return std::string();
    };
    if (m.has_opened()) {
      const v1::ProxyOpened& o = m.opened();
      std::string execution = execution_of(o.client());
      if (auto asked = proxy_asked_by_.find(o.connection()); asked != proxy_asked_by_.end()) {
        execution = asked->second;
        proxy_asked_by_.erase(asked);
      }
      network_.Opened(o.connection(), execution, o.host(), static_cast<int>(o.port()), o.allowed(), o.rule(), o.why(),
                      o.address());
    } else if (m.has_closed()) {
      const v1::ProxyClosed& c = m.closed();
      network_.Closed(c.connection(), c.bytes_up(), c.bytes_down(), c.failed());
    } else if (m.has_question()) {
      AskProxyQuestion(m.question().connection(), m.question().host() + ":" + std::to_string(m.question().port()),
                       execution_of(m.question().client()));
    }
  }
  if (std::vector<NetworkAggregate> late = network_.TakeLate(); !late.empty()) RecordNetwork("main", late);
  // The proxy stopped waiting for these (it refused them): so does odin.
  for (auto it = proxy_questions_.begin(); it != proxy_questions_.end();) {
    it = clock_->Now() - it->second.asked > kProxyQuestionLife ? proxy_questions_.erase(it) : std::next(it);
  }
  TellProxyClients();
}

void Coordinator::TellProxyClients() {
  if (o_.commands_proxy_fd < 0) return;
  std::set<std::string> now;
  for (const WorkerPool::WorkerInfo& w : pool_.workers()) {
    if (w.policy == WorkerPolicy::kWritable || w.policy == WorkerPolicy::kBackground) now.insert(ProxyClientOf(w.id));
  }
  if (now == proxy_clients_) return;
  v1::ProxyMessage m;
  for (const std::string& c : now) m.mutable_clients()->add_client(c);
  std::string bytes = m.SerializeAsString();
  if (send(o_.commands_proxy_fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
    spdlog::warn("the commands' proxy: cannot tell it the workers: {}", strerror(errno));
    return;
  }
  proxy_clients_ = std::move(now);
}

void Coordinator::AskProxyQuestion(uint64_t connection, const std::string& target, const std::string& execution) {
  auto call = calls_.find(execution);
  std::string agent = call == calls_.end() ? "main" : call->second.call.agent_id;
  // One key per host and port: what "always" saves is exactly what was
  // shown, and a session answer covers that host:port only.
  std::string key = "network:" + target;
  ApprovalGate::Decision d = approvals_.Decide({key}, key, static_cast<bool>(on_approval_request));
  bool may_ask = d == ApprovalGate::Decision::kAskUser && call != calls_.end() && !call->second.call.no_approval;
  if (!execution.empty()) proxy_asked_by_[connection] = execution;
  // Asked already for this command: this request waits for the same answer.
  for (auto& [id, q] : proxy_questions_) {
    if (may_ask && q.target == target && q.execution_id == execution) {
      q.connections.push_back(connection);
      return;
    }
  }
  if (may_ask && proxy_questions_.size() < kMaxProxyQuestions) {
    std::string id = NewId("net");
    proxy_questions_[id] = {{connection}, target, agent, execution, clock_->Now()};
    size_t colon = target.rfind(':');
    on_approval_request(
        {id, agent, "connect to " + target,
         "the command's network: " + target.substr(0, colon) + " is not in sandbox.network's allow list", key});
    return;
  }
  bool allow = d == ApprovalGate::Decision::kApprovedForSession || d == ApprovalGate::Decision::kApprovedSaved;
  // A refusal is recorded once a host; every allowance is.
  if (allow || proxy_refused_.insert(key).second) {
    const char* how = allow     ? ApprovalDecisionName(d)
                      : may_ask ? "denied: too many questions about the network at once"
                                : "denied by policy";
    RecordGateEvent(agent, "", "approval", execution,
                    json({{"key", key}, {"approval", how}}).dump(-1, ' ', false, json::error_handler_t::replace));
  }
  AnswerProxy(connection, allow);
}

bool Coordinator::AnswerProxyQuestion(const std::string& id, ApprovalAnswer answer) {
  auto it = proxy_questions_.find(id);
  if (it == proxy_questions_.end()) return false;
  ProxyQuestion q = it->second;
  proxy_questions_.erase(it);
  std::string key = "network:" + q.target;
  json detail = {{"decision", "ask"}, {"key", key}};
  if (answer == ApprovalAnswer::kWorkspace || answer == ApprovalAnswer::kAlways) {
    Status saved = on_approval_saved ? on_approval_saved(key, answer == ApprovalAnswer::kAlways)
                                     : Status::FailedPrecondition("approval", "no store for saved approvals");
    approvals_.AddSaved({key});
    detail["saved_key"] = key;
    if (!saved.ok()) detail["saved"] = "not saved: " + saved.message();
  }
  if (answer == ApprovalAnswer::kSession) approvals_.ApproveForSession({key});
  detail["approval"] = answer == ApprovalAnswer::kDeny ? "denied by the user" : "allowed by the user";
  RecordGateEvent(q.agent_id, "", "approval", q.execution_id,
                  detail.dump(-1, ' ', false, json::error_handler_t::replace));
  if (o_.commands_proxy_fd < 0) return true;
  for (uint64_t connection : q.connections) AnswerProxy(connection, answer != ApprovalAnswer::kDeny);
  return true;
}

void Coordinator::RecordNetwork(const std::string& agent_id, const std::vector<NetworkAggregate>& aggregates) {
  for (size_t i = 0; i < aggregates.size(); ++i) {
    const NetworkAggregate& a = aggregates[i];
    if (i == kMaxNetworkRecords) {
      int allowed = 0, refused = 0;
      for (size_t j = i; j < aggregates.size(); ++j) {
        allowed += aggregates[j].allowed;
        refused += aggregates[j].refused;
      }
      RecordGateEvent(agent_id, "", "network", a.execution_id,
                      json({{"more_hosts", aggregates.size() - i}, {"allowed", allowed}, {"refused", refused}}).dump());
      return;
    }
    json detail = {{"host", a.host},       {"port", a.port},         {"allowed", a.allowed},
                   {"refused", a.refused}, {"bytes_up", a.bytes_up}, {"bytes_down", a.bytes_down},
                   {"rule", a.rule}};
    if (!a.why.empty()) detail["why"] = a.why;
    if (!a.address.empty()) detail["address"] = a.address;
    RecordGateEvent(agent_id, "", "network", a.execution_id,
                    detail.dump(-1, ' ', false, json::error_handler_t::replace));
  }
}

void Coordinator::NoteNetwork(const Call& c, const v1::ToolResult& r, std::optional<v1::ToolResult>* amended) {
  if (o_.commands_proxy_fd < 0) return;
  // The proxy said what it refused before it answered the command, so a
  // refusal is here before the command's end is.
  ServiceProxy();
  // Its questions no one answered go with it: refused.
  for (auto it = proxy_questions_.begin(); it != proxy_questions_.end();) {
    if (it->second.execution_id != r.execution_id()) {
      ++it;
      continue;
    }
    for (uint64_t connection : it->second.connections) AnswerProxy(connection, false);
    it = proxy_questions_.erase(it);
  }
  std::vector<NetworkAggregate> mine = network_.TakeEnded(r.execution_id());
  if (mine.empty()) return;
  RecordNetwork(c.call.agent_id, mine);
  std::vector<std::string> refused = NetworkLog::Refusals(mine);
  if (refused.empty()) return;
  std::string note = "\n[odin] the network proxy refused:";
  for (const std::string& line : refused) note += " " + line + ";";
  note.back() = '.';
  note += " Commands reach only the hosts sandbox.network allows; say which host the task needs.\n";
  if (!*amended) *amended = r;
  (*amended)->set_output_tail((*amended)->output_tail() + note);
  (*amended)->set_output_total_bytes((*amended)->output_total_bytes() + note.size());
}

}  // namespace odin

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

}  // namespace

void Coordinator::AnswerProxy(uint64_t connection, bool allow) {
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
  for (;;) {
    ssize_t n = recv(o_.commands_proxy_fd, buf.data(), buf.size(), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    v1::ProxyMessage m;
    if (!m.ParseFromArray(buf.data(), static_cast<int>(n))) continue;
    // Whose command asked: the worker the proxy URL's user names, and what
    // it runs now (the proxy judges while the command waits).
    auto execution_of = [this](const std::string& client) {
      if (client.empty()) return std::string();
      for (const WorkerPool::WorkerInfo& w : pool_.workers()) {
        if (ProxyClientOf(w.id) == client) return w.execution_id;
      }
      return std::string();
    };
    if (m.has_opened()) {
      const v1::ProxyOpened& o = m.opened();
      network_.Opened(o.connection(), execution_of(o.client()), o.host(), static_cast<int>(o.port()), o.allowed(),
                      o.rule(), o.why(), o.address());
    } else if (m.has_closed()) {
      network_.Closed(m.closed().connection(), m.closed().bytes_up(), m.closed().bytes_down());
    } else if (m.has_question()) {
      const v1::ProxyQuestion& q = m.question();
      std::string target = q.host() + ":" + std::to_string(q.port());
      std::string execution = execution_of(q.client());
      auto call = calls_.find(execution);
      std::string agent = call == calls_.end() ? "main" : call->second.call.agent_id;
      // One key per host and port: what "always" saves is exactly what was
      // shown, and a session answer covers that host:port only.
      std::string key = "network:" + target;
      ApprovalGate::Decision d = approvals_.Decide({key}, key, static_cast<bool>(on_approval_request));
      if (d == ApprovalGate::Decision::kAskUser && !execution.empty() && call != calls_.end() &&
          !call->second.call.no_approval) {
        std::string id = NewId("net");
        proxy_questions_[id] = {q.connection(), target, agent, execution};
        on_approval_request({id, agent, "connect to " + target,
                             "the command's network: " + q.host() + " is not in sandbox.network's allow list", key});
        continue;
      }
      bool allow = d == ApprovalGate::Decision::kApprovedForSession || d == ApprovalGate::Decision::kApprovedSaved;
      RecordGateEvent(
          agent, "", "approval", execution,
          json({{"key", key}, {"approval", ApprovalDecisionName(allow ? d : ApprovalGate::Decision::kDeniedByPolicy)}})
              .dump(-1, ' ', false, json::error_handler_t::replace));
      AnswerProxy(q.connection(), allow);
    }
  }
  if (std::vector<NetworkAggregate> late = network_.TakeLate(); !late.empty()) RecordNetwork("main", late);
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
  AnswerProxy(q.connection, answer != ApprovalAnswer::kDeny);
  return true;
}

void Coordinator::RecordNetwork(const std::string& agent_id, const std::vector<NetworkAggregate>& aggregates) {
  for (const NetworkAggregate& a : aggregates) {
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

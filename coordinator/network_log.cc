#include "coordinator/network_log.h"

namespace odin {

NetworkAggregate& NetworkLog::At(const std::string& execution_id, const std::string& host, int port) {
  NetworkAggregate& a = live_[execution_id][host + ":" + std::to_string(port)];
  a.execution_id = execution_id;
  a.host = host;
  a.port = port;
  return a;
}

void NetworkLog::Opened(uint64_t connection, const std::string& execution_id, const std::string& host, int port,
                        bool allowed, const std::string& rule, const std::string& why, const std::string& address) {
  NetworkAggregate& a = At(execution_id, host, port);
  (allowed ? a.allowed : a.refused) += 1;
  if (!rule.empty()) a.rule = rule;
  if (!why.empty()) a.why = why;
  if (!address.empty()) a.address = address;
  if (allowed) open_[connection] = {execution_id, host + ":" + std::to_string(port)};
}

void NetworkLog::Closed(uint64_t connection, uint64_t bytes_up, uint64_t bytes_down, const std::string& failed) {
  auto it = open_.find(connection);
  if (it == open_.end()) return;
  Open o = it->second;
  open_.erase(it);
  size_t colon = o.key.rfind(':');
  // Whether its allowance is still here to take back (else it was recorded
  // with its command, and the failure is recorded on its own).
  auto live = live_.find(o.execution_id);
  bool counted = live != live_.end() && live->second.count(o.key) != 0 && live->second.at(o.key).allowed > 0;
  NetworkAggregate& a = At(o.execution_id, o.key.substr(0, colon), std::stoi(o.key.substr(colon + 1)));
  a.bytes_up += bytes_up;
  a.bytes_down += bytes_down;
  if (!failed.empty()) {
    if (counted) a.allowed -= 1;
    a.refused += 1;
    a.why = failed;
  }
}

std::vector<NetworkAggregate> NetworkLog::TakeEnded(const std::string& execution_id) {
  std::vector<NetworkAggregate> out;
  auto it = live_.find(execution_id);
  if (it != live_.end()) {
    for (auto& [key, a] : it->second) out.push_back(std::move(a));
    live_.erase(it);
  }
  // Only executions with connections still open need remembering.
  for (const auto& [id, o] : open_) {
    if (o.execution_id == execution_id) ended_[execution_id] = true;
  }
  return out;
}

std::vector<NetworkAggregate> NetworkLog::TakeLate() {
  std::vector<NetworkAggregate> out;
  for (auto it = live_.begin(); it != live_.end();) {
    if (!it->first.empty() && ended_.count(it->first) == 0) {
      ++it;
      continue;
    }
    for (auto& [key, a] : it->second) out.push_back(std::move(a));
    it = live_.erase(it);
  }
  // An ended execution with nothing open is forgotten.
  for (auto it = ended_.begin(); it != ended_.end();) {
    bool open = false;
    for (const auto& [id, o] : open_) open = open || o.execution_id == it->first;
    it = open ? std::next(it) : ended_.erase(it);
  }
  return out;
}

std::vector<std::string> NetworkLog::Refusals(const std::vector<NetworkAggregate>& aggregates, size_t max_lines) {
  std::vector<std::string> out;
  size_t more = 0;
  for (const NetworkAggregate& a : aggregates) {
    if (a.refused == 0) continue;
    if (out.size() < max_lines) {
      out.push_back(a.host + ":" + std::to_string(a.port) + " (" + a.why + ")");
    } else {
      ++more;
    }
  }
  if (more > 0) out.push_back("and " + std::to_string(more) + " more hosts");
  return out;
}

}  // namespace odin

#pragma once
// What edit mode's commands did on the network through the commands' proxy
// (workers/net_proxy.h), kept until the ledger records it: one aggregate
// per command and host:port (connections, allowed and refused, bytes each
// way, the rule that decided, why one was refused). The coordinator
// attributes each connection to the execution its worker ran when the
// proxy judged it (coordinator/commands_network.cc) and records a
// command's aggregates at its end; bytes of a connection that closes later
// are recorded on their own at the next boundary.
//
// Thread-safety: none (the coordinator's thread).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace odin {

struct NetworkAggregate {
  std::string execution_id;  // "" when no command could be named
  std::string host;
  int port = 0;
  int allowed = 0;  // connections made
  int refused = 0;  // refused by a rule, the address rules, the user, or failed
  uint64_t bytes_up = 0;
  uint64_t bytes_down = 0;
  std::string rule;  // the rule that decided the last one
  std::string why;   // why the last refused one was
  std::string address;
};

class NetworkLog {
 public:
  // A connection's fate, as the proxy said.
  void Opened(uint64_t connection, const std::string& execution_id, const std::string& host, int port, bool allowed,
              const std::string& rule, const std::string& why, const std::string& address);
  // failed: why the connection an allowed request needed was not made
  // ("" when it was): it then counts as refused.
  void Closed(uint64_t connection, uint64_t bytes_up, uint64_t bytes_down, const std::string& failed = "");
  // The execution's aggregates, removed; it is over: later bytes of its
  // connections are late.
  std::vector<NetworkAggregate> TakeEnded(const std::string& execution_id);
  // Aggregates of executions already ended (or none), removed.
  std::vector<NetworkAggregate> TakeLate();
  // Lines for a command's result, one per host refused:
  // "evil.test:80 (evil.test:80 is not in sandbox.network's allow list)".
  // At most max_lines, then "and N more hosts".
  static std::vector<std::string> Refusals(const std::vector<NetworkAggregate>& aggregates, size_t max_lines = 10);

 private:
  struct Open {
    std::string execution_id;
    std::string key;
  };
  NetworkAggregate& At(const std::string& execution_id, const std::string& host, int port);

  // execution id -> host:port -> aggregate.
  std::map<std::string, std::map<std::string, NetworkAggregate>> live_;
  std::map<uint64_t, Open> open_;  // allowed, not yet closed
  std::map<std::string, bool> ended_;
};

}  // namespace odin

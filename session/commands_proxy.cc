#include "session/commands_proxy.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "base/file_util.h"
#include "base/subprocess.h"
#include "odin/v1/net_proxy.pb.h"

namespace odin {

CommandsProxy::~CommandsProxy() {
  control_.reset();  // it exits when its control socket closes
  if (pid_ <= 0) return;
  for (int i = 0; i < 50; ++i) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
}

StatusOr<std::unique_ptr<CommandsProxy>> CommandsProxy::Start(const WorkerSandbox& sandbox, const std::string& bin,
                                                              UniqueFd listener, const Config& config,
                                                              const std::vector<std::string>& env, int log_fd) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return PosixError("socketpair", errno);
  UniqueFd ours(sv[0]), theirs(sv[1]);
  std::string listen_fd = std::to_string(listener.get()), control_fd = std::to_string(theirs.get());
  SpawnOptions o;
  o.argv = sandbox.LauncherArgv(WorkerPolicy::kWeb);
  // Not the commands' process limit (a workspace may lower it; a thread
  // counts as a process): the proxy bounds its own connections' threads.
  for (size_t i = 0; i + 1 < o.argv.size(); ++i) {
    if (o.argv[i] == "--pids-max")
      o.argv.erase(o.argv.begin() + static_cast<long>(i), o.argv.begin() + static_cast<long>(i) + 2);
  }
  // LauncherArgv ends with "--": the two descriptors go before it.
  o.argv.insert(o.argv.end() - 1, {"--pass-fd", listen_fd, "--pass-fd", control_fd});
  o.argv.insert(o.argv.end(), {JoinPath(bin, "odin-net-proxy"), "--listen-fd", listen_fd, "--control-fd", control_fd});
  o.env = env;
  o.stderr_fd = log_fd;
  o.keep_fds = {listener.get(), theirs.get()};
  o.parent_death_signal = SIGTERM;
  ASSIGN_OR_RETURN(pid_t pid, Spawn(o));
  std::unique_ptr<CommandsProxy> p(new CommandsProxy());
  p->pid_ = pid;
  p->control_ = std::move(ours);
  p->listener_ = std::move(listener);
  v1::ProxyMessage m;
  v1::ProxyPolicy* policy = m.mutable_policy();
  for (const std::string& a : config.sandbox_network_rules.allow) policy->add_allow(a);
  for (const std::string& d : config.sandbox_network_rules.deny) policy->add_deny(d);
  for (const std::string& a : config.web.allow_private) policy->add_allow_private(a);
  for (const auto& [name, address] : config.sandbox_network_rules.hosts) (*policy->mutable_hosts())[name] = address;
  // A host no rule names is asked of odin, which asks the user or, headless,
  // refuses it.
  policy->set_ask(true);
  std::string bytes = m.SerializeAsString();
  if (bytes.size() > 60 * 1024) return Status::InvalidArgument("sandbox.network", "its rules are over 60 KiB");
  if (send(p->control_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(bytes.size())) {
    return PosixError("the commands' proxy: its policy", errno);
  }
  return p;
}

}  // namespace odin

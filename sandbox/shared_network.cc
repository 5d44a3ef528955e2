#include "sandbox/shared_network.h"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/file_util.h"
#include "base/secrets.h"
#include "base/subprocess.h"
#include "sandbox/sandbox_exit_codes.h"

namespace odin {
namespace {

// Writes text to a /proc file of this process (the user namespace's maps).
Status WriteProcFile(const char* path, const std::string& text) {
  UniqueFd fd(open(path, O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) return PosixError(path, errno);
  return WriteAll(fd.get(), text, path);
}

Status MakeNamespace() {
  const uid_t uid = geteuid();
  const gid_t gid = getegid();
  // Root needs no user namespace: the sandboxes it starts have one each, and
  // hold no capability over this one. Anyone else needs one to own it.
  if (unshare(CLONE_NEWNET | (uid == 0 ? 0 : CLONE_NEWUSER)) != 0) return PosixError("unshare", errno);
  if (uid != 0) {
    RETURN_IF_ERROR(WriteProcFile("/proc/self/setgroups", "deny"));
    RETURN_IF_ERROR(WriteProcFile("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1"));
    RETURN_IF_ERROR(WriteProcFile("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1"));
  }
  UniqueFd s(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) return PosixError("socket", errno);
  ifreq ifr{};
  strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  if (ioctl(s.get(), SIOCGIFFLAGS, &ifr) != 0) return PosixError("lo: SIOCGIFFLAGS", errno);
  ifr.ifr_flags |= IFF_UP;
  if (ioctl(s.get(), SIOCSIFFLAGS, &ifr) != 0) return PosixError("lo: SIOCSIFFLAGS", errno);
  return Status::OK();
}

// A message of some bytes and room for one descriptor (SCM_RIGHTS).
struct OneFdMessage {
  OneFdMessage(char* data, size_t size) : iov{data, size} {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  OneFdMessage(const OneFdMessage&) = delete;
  iovec iov;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
};

StatusOr<UniqueFd> ListenOnLoopback(int port) {
  UniqueFd s(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) return PosixError("socket", errno);
  int one = 1;
  setsockopt(s.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return PosixError("bind 127.0.0.1", errno);
  if (listen(s.get(), 128) != 0) return PosixError("listen", errno);
  return s;
}

}  // namespace

int HoldNetwork(int proxy_port) {
  if (Status s = MakeNamespace(); !s.ok()) {
    fprintf(stderr, "odin-sandbox: the commands' network: %s\n", s.message().c_str());
    return kSandboxSetupFailedExit;
  }
  if (proxy_port > 0) {
    StatusOr<UniqueFd> listener = ListenOnLoopback(proxy_port);
    if (!listener.ok()) {
      fprintf(stderr, "odin-sandbox: the commands' proxy: %s\n", listener.status().message().c_str());
      return kSandboxSetupFailedExit;
    }
    char ready[] = "ready\n";
    OneFdMessage m(ready, 6);
    msghdr& msg = m.msg;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    int fd = listener->get();
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    if (sendmsg(STDOUT_FILENO, &msg, MSG_NOSIGNAL) != 6) return kSandboxSetupFailedExit;
  } else if (fputs("ready\n", stdout) < 0 || fflush(stdout) != 0) {
    return kSandboxSetupFailedExit;
  }
  // Until the caller has opened the namespace (it closes our stdin).
  char c;
  while (read(STDIN_FILENO, &c, 1) < 0 && errno == EINTR) {
  }
  return 0;
}

StatusOr<SharedNetwork> MakeSharedNetwork(const std::string& sandbox_binary, int proxy_port) {
  ASSIGN_OR_RETURN(Pipe in, MakePipe(O_CLOEXEC));
  Pipe out;
  if (proxy_port > 0) {
    // A Unix socket: the listener comes back with "ready".
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return PosixError("socketpair", errno);
    out.read_end = UniqueFd(sv[0]);
    out.write_end = UniqueFd(sv[1]);
  } else {
    ASSIGN_OR_RETURN(out, MakePipe(O_CLOEXEC));
  }
  SharedNetwork shared;
  SpawnOptions o;
  o.argv = {sandbox_binary, "--hold-net"};
  if (proxy_port > 0) o.argv.insert(o.argv.end(), {"--proxy-port", std::to_string(proxy_port)});
  o.env = CurrentEnvironment();
  o.stdin_fd = in.read_end.get();
  o.stdout_fd = out.write_end.get();
  o.stderr_fd = STDERR_FILENO;
  o.parent_death_signal = SIGKILL;
  ASSIGN_OR_RETURN(pid_t pid, Spawn(o));
  in.read_end.reset();
  out.write_end.reset();
  auto reap = [&]() {
    in.write_end.reset();  // it exits once its stdin closes
    int status = 0;
    pollfd p{out.read_end.get(), POLLIN, 0};
    if (poll(&p, 1, 2000) <= 0) kill(pid, SIGKILL);
    WaitPid(pid, &status, 0);
    return status;
  };
  std::string said;
  for (int waited = 0; said.find('\n') == std::string::npos;) {
    pollfd p{out.read_end.get(), POLLIN, 0};
    int n = poll(&p, 1, 100);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 && (waited += 100) >= 5000) {
      reap();
      return Status::DeadlineExceeded("the commands' network", "odin-sandbox --hold-net did not answer in 5 s");
    }
    if (n <= 0) continue;
    char buf[64];
    OneFdMessage m(buf, sizeof buf);
    msghdr& msg = m.msg;
    ssize_t r = proxy_port > 0 ? recvmsg(out.read_end.get(), &msg, MSG_CMSG_CLOEXEC)
                               : read(out.read_end.get(), buf, sizeof buf);
    if (r > 0 && proxy_port > 0) {
      for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int))) continue;
        int fd = -1;
        memcpy(&fd, CMSG_DATA(c), sizeof fd);
        shared.proxy_listener = UniqueFd(fd);
      }
    }
    if (r <= 0) {
      int status = reap();
      return Status::Unavailable("the commands' network", "odin-sandbox --hold-net " + DescribeWaitStatus(status));
    }
    said.append(buf, static_cast<size_t>(r));
  }
  // Opened before the process is reaped, so the pid is still its own.
  UniqueFd ns(open(("/proc/" + std::to_string(pid) + "/ns/net").c_str(), O_RDONLY | O_CLOEXEC));
  int err = errno;
  reap();
  if (said != "ready\n") return Status::Unavailable("the commands' network", "odin-sandbox --hold-net said " + said);
  if (!ns.valid()) return PosixError("the commands' network namespace", err);
  if (proxy_port > 0 && !shared.proxy_listener.valid()) {
    return Status::Unavailable("the commands' network", "odin-sandbox --hold-net sent no listening socket");
  }
  shared.netns = std::move(ns);
  return shared;
}

Status JoinNetwork(int fd) {
  UniqueFd owner(ioctl(fd, NS_GET_USERNS));
  if (!owner.valid()) return PosixError("the commands' network: NS_GET_USERNS", errno);
  struct stat theirs {
  }, ours{};
  if (fstat(owner.get(), &theirs) != 0 || stat("/proc/self/ns/user", &ours) != 0) {
    return PosixError("the commands' network: user namespaces", errno);
  }
  if (theirs.st_ino != ours.st_ino || theirs.st_dev != ours.st_dev) {
    if (setns(owner.get(), CLONE_NEWUSER) != 0) return PosixError("the commands' network: setns(user)", errno);
  }
  if (setns(fd, CLONE_NEWNET) != 0) return PosixError("the commands' network: setns(net)", errno);
  return Status::OK();
}

}  // namespace odin

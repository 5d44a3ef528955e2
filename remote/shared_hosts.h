#pragma once
// SharedHosts: one process's remote hosts (RemoteHosts, one listener on
// workers.remote.listen) shared by every session it runs. `odin serve` runs
// each session on a thread of its own, each with its own worker pool; each
// pool sees the hosts through a lease of its own (a WorkerHosts), so hosts
// are shared and workers never are: a worker is spawned for one session's
// pool and only that pool hears of it.
//
// There is no thread of its own: whichever lease's pool polls pumps the
// hosts (under the hub's lock), keeps what concerns its own workers, and
// hands the rest to the lease whose worker it concerns (waking that pool
// through an eventfd it waits on). The pools poll all the time (their own
// heartbeats), so the hosts are pumped as often as one session would.
// Demand is the sum of the leases'. The hosts go (and are told goodbye)
// when the last lease does.
//
// Thread-safety: a lease is used by one thread (its pool's); leases of one
// hub may be used from any threads.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "remote/remote_hosts.h"

namespace odin {

class SharedHosts final : public WorkerHosts {
 public:
  using Make = std::function<StatusOr<std::unique_ptr<RemoteHosts>>()>;
  // A lease on this process's hosts listening at `listen`: the ones a
  // session made already, or the ones make makes now (called under the
  // registry's lock, so a second session waits for the first's hosts
  // rather than listen beside them). identity: what they are made for (the
  // workspace, the sandbox policy, workers.remote's settings); a session
  // whose identity differs gets AlreadyExists rather than hosts made under
  // other rules.
  // view: the lease of an isolated session, whose workers run in its view
  // (RemoteHosts::SpawnIn); "" for the workspace's.
  static StatusOr<std::unique_ptr<SharedHosts>> Lease(const std::string& listen, const std::string& identity,
                                                      const Make& make, const std::string& view = "");
  ~SharedHosts() override;
  SharedHosts(const SharedHosts&) = delete;
  SharedHosts& operator=(const SharedHosts&) = delete;

  // WorkerHosts.
  std::string Place(WorkerPolicy policy, const std::string& lane, bool surplus) override;
  Status Spawn(const std::string& host, const std::string& worker_id, const std::string& secret, WorkerPolicy policy,
               const std::string& lane) override;
  Status Send(const std::string& host, const std::string& worker_id, const v1::Envelope& env) override;
  void Signal(const std::string& host, const std::string& worker_id, int signal) override;
  void StartFailed(const std::string& host, const std::string& how) override;
  void Drop(const std::string& host, const std::string& why) override;
  bool Takes(WorkerPolicy policy, const std::string& lane) const override;
  void SetDemand(size_t waiting_calls) override;
  void AddWaitFds(std::vector<PollFd>* fds) override;
  bool Pending() override;
  SteadyTime NextTimer() const override;
  void Pump(std::vector<Event>* events) override;
  std::optional<Landed> TakeLanded(const std::string& execution_id) override;

  std::vector<RemoteHosts::HostInfo> hosts() const;
  std::string endpoint() const;
  // How many leases share these hosts (this one included).
  size_t leases() const;

  struct Hub;  // the hosts and who owns each worker (shared_hosts.cc)

 private:
  SharedHosts(std::shared_ptr<Hub> hub, UniqueFd wake, std::string view);

  std::shared_ptr<Hub> hub_;
  std::string view_;
  UniqueFd wake_;  // an eventfd: another lease's pump left events for this one
  // Events for this lease's workers that another lease pumped, and this
  // lease's demand: under the hub's lock.
  std::vector<Event> inbox_;
  size_t demand_ = 0;
};

}  // namespace odin

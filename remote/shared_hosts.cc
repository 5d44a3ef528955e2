#include "remote/shared_hosts.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <set>

namespace odin {

struct SharedHosts::Hub {
  std::string identity;
  mutable std::mutex mu;
  std::unique_ptr<RemoteHosts> hosts;
  std::set<SharedHosts*> leases;
  std::map<std::string, SharedHosts*> owner;  // worker id -> the lease whose pool spawned it
};

namespace {

// The hubs of this process, by listen address. A hub is made and destroyed
// under this lock, so a listener is never made beside one going away.
std::mutex g_hubs_mu;
std::map<std::string, std::weak_ptr<SharedHosts::Hub>> g_hubs;

void Wake(int fd) {
  uint64_t one = 1;
  // Only EAGAIN (the counter is full) can fail here: then it is awake.
  while (write(fd, &one, sizeof one) < 0 && errno == EINTR) {
  }
}

}  // namespace

StatusOr<std::unique_ptr<SharedHosts>> SharedHosts::Lease(const std::string& listen, const std::string& identity,
                                                          const Make& make, const std::string& view) {
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) return PosixError("eventfd", errno);
  UniqueFd wake(fd);
  std::lock_guard<std::mutex> registry(g_hubs_mu);
  std::shared_ptr<Hub> hub = g_hubs[listen].lock();
  if (hub && hub->identity != identity) {
    return Status::AlreadyExists("workers.remote: " + listen,
                                 "held by a session of this process with other settings (workspace, sandbox, "
                                 "workers.remote)");
  }
  if (!hub) {
    StatusOr<std::unique_ptr<RemoteHosts>> made = make();
    if (!made.ok()) {
      g_hubs.erase(listen);
      return made.status();
    }
    hub = std::make_shared<Hub>();
    hub->identity = identity;
    hub->hosts = std::move(*made);
    g_hubs[listen] = hub;
  }
  std::unique_ptr<SharedHosts> lease(new SharedHosts(hub, std::move(wake), view));
  std::lock_guard<std::mutex> lock(hub->mu);
  hub->leases.insert(lease.get());
  return lease;
}

SharedHosts::SharedHosts(std::shared_ptr<Hub> hub, UniqueFd wake, std::string view)
    : hub_(std::move(hub)), view_(std::move(view)), wake_(std::move(wake)) {}

SharedHosts::~SharedHosts() {
  {
    std::lock_guard<std::mutex> lock(hub_->mu);
    hub_->leases.erase(this);
    for (auto it = hub_->owner.begin(); it != hub_->owner.end();) {
      it = it->second == this ? hub_->owner.erase(it) : std::next(it);
    }
    demand_ = 0;
    size_t demand = 0;
    for (const SharedHosts* l : hub_->leases) demand += l->demand_;
    hub_->hosts->SetDemand(demand);
  }
  // The last lease takes the hosts with it (they are told goodbye), under
  // the registry's lock: a session starting now listens once they are gone.
  std::lock_guard<std::mutex> registry(g_hubs_mu);
  hub_.reset();
}

std::string SharedHosts::Place(WorkerPolicy policy, const std::string& lane, bool surplus) {
  std::lock_guard<std::mutex> lock(hub_->mu);
  return hub_->hosts->Place(policy, lane, surplus);
}

Status SharedHosts::Spawn(const std::string& host, const std::string& worker_id, const std::string& secret,
                          WorkerPolicy policy, const std::string& lane) {
  std::lock_guard<std::mutex> lock(hub_->mu);
  Status spawned = hub_->hosts->SpawnIn(host, worker_id, secret, policy, lane, view_);
  if (spawned.ok()) hub_->owner[worker_id] = this;
  return spawned;
}

Status SharedHosts::Send(const std::string& host, const std::string& worker_id, const v1::Envelope& env) {
  std::lock_guard<std::mutex> lock(hub_->mu);
  return hub_->hosts->Send(host, worker_id, env);
}

void SharedHosts::Signal(const std::string& host, const std::string& worker_id, int signal) {
  std::lock_guard<std::mutex> lock(hub_->mu);
  hub_->hosts->Signal(host, worker_id, signal);
}

void SharedHosts::StartFailed(const std::string& host, const std::string& how) {
  std::lock_guard<std::mutex> lock(hub_->mu);
  hub_->hosts->StartFailed(host, how);
}

void SharedHosts::Drop(const std::string& host, const std::string& why) {
  std::lock_guard<std::mutex> lock(hub_->mu);
  hub_->hosts->Drop(host, why);
}

bool SharedHosts::Takes(WorkerPolicy policy, const std::string& lane) const {
  std::lock_guard<std::mutex> lock(hub_->mu);
  return hub_->hosts->Takes(policy, lane);
}

void SharedHosts::SetDemand(size_t waiting_calls) {
  std::lock_guard<std::mutex> lock(hub_->mu);
  demand_ = waiting_calls;
  size_t demand = 0;
  for (const SharedHosts* l : hub_->leases) demand += l->demand_;
  hub_->hosts->SetDemand(demand);
}

void SharedHosts::AddWaitFds(std::vector<PollFd>* fds) {
  std::lock_guard<std::mutex> lock(hub_->mu);
  hub_->hosts->AddWaitFds(fds);
  fds->push_back({wake_.get()});
}

bool SharedHosts::Pending() {
  std::lock_guard<std::mutex> lock(hub_->mu);
  return !inbox_.empty() || hub_->hosts->Pending();
}

SteadyTime SharedHosts::NextTimer() const {
  std::lock_guard<std::mutex> lock(hub_->mu);
  return hub_->hosts->NextTimer();
}

void SharedHosts::Pump(std::vector<Event>* events) {
  uint64_t count;
  while (read(wake_.get(), &count, sizeof count) < 0 && errno == EINTR) {
  }
  std::lock_guard<std::mutex> lock(hub_->mu);
  // What another lease's pump left for this one came first.
  for (Event& e : inbox_) events->push_back(std::move(e));
  inbox_.clear();
  std::vector<Event> pumped;
  hub_->hosts->Pump(&pumped);
  for (Event& e : pumped) {
    auto owner = hub_->owner.find(e.worker_id);
    if (owner == hub_->owner.end()) continue;  // its lease has gone
    SharedHosts* to = owner->second;
    if (e.exited) hub_->owner.erase(owner);
    if (to == this) {
      events->push_back(std::move(e));
    } else {
      to->inbox_.push_back(std::move(e));
      Wake(to->wake_.get());
    }
  }
}

std::optional<WorkerHosts::Landed> SharedHosts::TakeLanded(const std::string& execution_id) {
  std::lock_guard<std::mutex> lock(hub_->mu);
  // Another session's landing never counts as this one's stale one.
  return hub_->hosts->TakeLanded(execution_id, [this](const std::string& worker_id) {
    auto owner = hub_->owner.find(worker_id);
    return owner != hub_->owner.end() && owner->second == this;
  });
}

std::vector<RemoteHosts::HostInfo> SharedHosts::hosts() const {
  std::lock_guard<std::mutex> lock(hub_->mu);
  return hub_->hosts->hosts();
}

std::string SharedHosts::endpoint() const {
  std::lock_guard<std::mutex> lock(hub_->mu);
  return hub_->hosts->endpoint();
}

size_t SharedHosts::leases() const {
  std::lock_guard<std::mutex> lock(hub_->mu);
  return hub_->leases.size();
}

}  // namespace odin

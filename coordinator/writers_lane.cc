#include "coordinator/writers_lane.h"

#include <algorithm>
#include <set>

namespace odin {

bool WritersLane::Forget(const std::string& id) {
  auto at = std::find(waiting_.begin(), waiting_.end(), id);
  if (at == waiting_.end()) return false;
  waiting_.erase(at);
  return true;
}

bool WritersLane::Admits(const Caller& caller) const {
  if (!alone_.empty()) return false;
  switch (caller.kind) {
    case Kind::kWrite: return shared_total_ == 0;
    case Kind::kSharedCommand: return writes_ == 0 && !shared_.contains(caller.agent_id);
    case Kind::kCommand: return writes_ == 0 && shared_total_ == 0;
  }
  return false;
}

std::optional<std::string> WritersLane::Next(const Lookup& lookup) {
  std::set<std::string> agents_waiting;  // whose earlier command waits
  for (auto at = waiting_.begin(); at != waiting_.end();) {
    std::optional<Caller> caller = lookup(*at);
    if (!caller) {
      at = waiting_.erase(at);
      continue;
    }
    if (!agents_waiting.contains(caller->agent_id) && Admits(*caller)) {
      std::string id = std::move(*at);
      waiting_.erase(at);
      return id;
    }
    // A command over an overlay waits only for its agent's; another call
    // waits for the lane, and what came after it waits too.
    bool behind_its_agent = caller->kind == Kind::kSharedCommand && alone_.empty() && writes_ == 0;
    if (!behind_its_agent) return std::nullopt;
    agents_waiting.insert(caller->agent_id);
    ++at;
  }
  return std::nullopt;
}

void WritersLane::Enter(const std::string& id, const Caller& caller) {
  inside_[id] = caller;
  switch (caller.kind) {
    case Kind::kWrite: ++writes_; break;
    case Kind::kSharedCommand:
      ++shared_[caller.agent_id];
      ++shared_total_;
      break;
    case Kind::kCommand: alone_ = id; break;
  }
}

bool WritersLane::Leave(const std::string& id) {
  auto it = inside_.find(id);
  if (it == inside_.end()) return false;
  switch (it->second.kind) {
    case Kind::kWrite: --writes_; break;
    case Kind::kSharedCommand:
      if (--shared_[it->second.agent_id] == 0) shared_.erase(it->second.agent_id);
      --shared_total_;
      break;
    case Kind::kCommand:
      if (alone_ == id) alone_.clear();
      break;
  }
  inside_.erase(it);
  return true;
}

bool WritersLane::Shared(const std::string& id) const {
  auto it = inside_.find(id);
  return it != inside_.end() && it->second.kind == Kind::kSharedCommand;
}

bool FileWriteQueues::Push(const std::string& path, const std::string& id) {
  std::deque<std::string>& queue = queues_[path];
  queue.push_back(id);
  return queue.size() == 1;
}

std::optional<std::string> FileWriteQueues::Front(const std::string& path) {
  auto q = queues_.find(path);
  if (q == queues_.end()) return std::nullopt;
  if (q->second.empty()) {
    queues_.erase(q);
    return std::nullopt;
  }
  return q->second.front();
}

bool FileWriteQueues::PopFront(const std::string& path, const std::string& id) {
  auto q = queues_.find(path);
  if (q == queues_.end() || q->second.empty() || q->second.front() != id) return false;
  q->second.pop_front();
  return true;
}

bool FileWriteQueues::ForgetWaiting(const std::string& path, const std::string& id) {
  auto q = queues_.find(path);
  if (q == queues_.end()) return false;
  auto pos = std::find(q->second.begin(), q->second.end(), id);
  if (pos == q->second.end() || pos == q->second.begin()) return false;
  q->second.erase(pos);
  return true;
}

void FileWriteQueues::PushNext(const std::string& path, const std::string& id) {
  std::deque<std::string>& queue = queues_[path];
  queue.insert(queue.empty() ? queue.end() : queue.begin() + 1, id);
}

}  // namespace odin

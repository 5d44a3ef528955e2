#include "coordinator/background_jobs.h"

#include <algorithm>

namespace odin {

BackgroundJobs::BackgroundJobs(size_t keep_bytes, size_t keep_ended)
    : keep_bytes_(keep_bytes), keep_ended_(keep_ended) {}

void BackgroundJobs::Add(const std::string& id, const std::string& agent_id, const std::string& command,
                         int64_t now_ms) {
  BackgroundJob job;
  job.id = id;
  job.agent_id = agent_id;
  job.command = command;
  job.started_at_ms = now_ms;
  jobs_.push_back(std::move(job));
}

BackgroundJob* BackgroundJobs::Get(const std::string& id) {
  for (BackgroundJob& j : jobs_) {
    if (j.id == id) return &j;
  }
  return nullptr;
}

const BackgroundJob* BackgroundJobs::Find(const std::string& id) const {
  for (const BackgroundJob& j : jobs_) {
    if (j.id == id) return &j;
  }
  return nullptr;
}

void BackgroundJobs::Output(const std::string& id, const std::string& data) {
  BackgroundJob* j = Get(id);
  if (j == nullptr || data.empty()) return;
  j->output_bytes += data.size();
  if (data.size() >= keep_bytes_) {
    j->output.assign(data, data.size() - keep_bytes_, keep_bytes_);
    return;
  }
  j->output += data;
  // Trimmed in halves, not per chunk: the copy is paid once per keep/2 bytes.
  if (j->output.size() > keep_bytes_ + keep_bytes_ / 2) j->output.erase(0, j->output.size() - keep_bytes_);
}

void BackgroundJobs::Changed(const std::string& id, const std::vector<std::string>& paths) {
  BackgroundJob* j = Get(id);
  if (j == nullptr) return;
  for (const std::string& p : paths) {
    if (std::find(j->changed.begin(), j->changed.end(), p) == j->changed.end()) j->changed.push_back(p);
  }
}

void BackgroundJobs::Stopping(const std::string& id, const std::string& why) {
  BackgroundJob* j = Get(id);
  if (j != nullptr && j->running && j->stopping.empty()) j->stopping = why;
}

void BackgroundJobs::End(const std::string& id, const std::string& how, int exit_code) {
  BackgroundJob* j = Get(id);
  if (j == nullptr || !j->running) return;
  j->running = false;
  j->ended = how;
  j->exit_code = exit_code;
  size_t ended = 0;
  for (const BackgroundJob& k : jobs_) ended += k.running ? 0 : 1;
  for (auto it = jobs_.begin(); ended > keep_ended_ && it != jobs_.end();) {
    if (!it->running && it->id != id) {
      it = jobs_.erase(it);
      --ended;
    } else {
      ++it;
    }
  }
}

BackgroundJobs::Unread BackgroundJobs::TakeUnread(const std::string& id, size_t max_bytes) {
  Unread out;
  BackgroundJob* j = Get(id);
  if (j == nullptr) return out;
  uint64_t kept_from = j->output_bytes - j->output.size();
  uint64_t from = std::max(j->read_bytes, kept_from);
  uint64_t unread = j->output_bytes - from;
  if (unread > max_bytes) {
    from = j->output_bytes - max_bytes;
    unread = max_bytes;
  }
  out.skipped = from - j->read_bytes;
  out.text = j->output.substr(static_cast<size_t>(from - kept_from), static_cast<size_t>(unread));
  j->read_bytes = j->output_bytes;
  return out;
}

std::vector<const BackgroundJob*> BackgroundJobs::Running() const {
  std::vector<const BackgroundJob*> out;
  for (const BackgroundJob& j : jobs_) {
    if (j.running) out.push_back(&j);
  }
  return out;
}

std::vector<const BackgroundJob*> BackgroundJobs::All() const {
  std::vector<const BackgroundJob*> out;
  for (const BackgroundJob& j : jobs_) out.push_back(&j);
  return out;
}

std::string BackgroundJobs::NewestRunning() const {
  for (auto it = jobs_.rbegin(); it != jobs_.rend(); ++it) {
    if (it->running) return it->id;
  }
  return "";
}

void BackgroundJobs::Wait(const std::string& id, const std::string& waiter, SteadyTime deadline) {
  waiters_.push_back({id, waiter, deadline});
}

bool BackgroundJobs::DropWaiter(const std::string& waiter) {
  for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
    if (it->waiter == waiter) {
      waiters_.erase(it);
      return true;
    }
  }
  return false;
}

std::vector<std::string> BackgroundJobs::TakeWaiters(const std::string& id) {
  std::vector<std::string> out;
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if (it->job == id) {
      out.push_back(it->waiter);
      it = waiters_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> BackgroundJobs::TakeDue(SteadyTime now) {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if (it->deadline <= now) {
      out.emplace_back(it->job, it->waiter);
      it = waiters_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

std::optional<SteadyTime> BackgroundJobs::NextDeadline() const {
  std::optional<SteadyTime> next;
  for (const Waiter& w : waiters_) {
    if (!next || w.deadline < *next) next = w.deadline;
  }
  return next;
}

std::string DescribeBackgroundJobs(const BackgroundJobs& jobs, int64_t now_ms) {
  std::vector<const BackgroundJob*> all = jobs.All();
  if (all.empty()) return "no background commands\n";
  std::string out;
  for (const BackgroundJob* j : all) {
    std::string command = j->command.size() > 80 ? j->command.substr(0, 77) + "..." : j->command;
    for (char& c : command) {
      if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    }
    out += j->id + "  ";
    out += j->running ? "running " + std::to_string(std::max<int64_t>(now_ms - j->started_at_ms, 0) / 1000) + " s"
                      : j->ended;
    out += "  " + command;
    if (!j->changed.empty()) {
      out += "  (" + std::to_string(j->changed.size()) + (j->changed.size() == 1 ? " file" : " files") + " changed)";
    }
    out += "\n";
  }
  return out;
}

}  // namespace odin

#include "coordinator/ledger_anchor.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/sha256.h"

namespace odin {
namespace {

using nlohmann::json;

// An anchor is a few hundred bytes; a reset history of thousands still fits.
constexpr size_t kMaxAnchorBytes = 1 << 20;

json ToJson(const AnchorState& s) {
  json resets = json::array();
  for (const AnchorReset& r : s.resets) {
    resets.push_back({{"at_ms", r.at_ms},
                      {"anchored_seq", r.anchored_seq},
                      {"anchored_hash", r.anchored_hash},
                      {"found_seq", r.found_seq},
                      {"moved_to", r.moved_to}});
  }
  return {{"version", 1},       {"ledger", s.ledger}, {"generation", s.generation},
          {"seq", s.seq},       {"hash", s.hash},     {"resets", resets}};
}

// Parses an anchor; false if it is not one.
bool FromJson(const std::string& text, AnchorState* s) {
  json j = json::parse(text, nullptr, false);
  if (!j.is_object() || j.value("version", 0) != 1) return false;
  try {
    s->ledger = j.at("ledger").get<std::string>();
    s->generation = j.at("generation").get<int64_t>();
    s->seq = j.at("seq").get<int64_t>();
    s->hash = j.at("hash").get<std::string>();
    for (const json& r : j.at("resets")) {
      s->resets.push_back({r.at("at_ms").get<int64_t>(), r.at("anchored_seq").get<int64_t>(),
                           r.at("anchored_hash").get<std::string>(), r.at("found_seq").get<int64_t>(),
                           r.at("moved_to").get<std::string>()});
    }
  } catch (const json::exception&) {
    return false;
  }
  return s->seq >= 0 && s->generation >= 0;
}

}  // namespace

StatusOr<std::string> LedgerAnchor::DefaultDir() {
  const char* state = getenv("XDG_STATE_HOME");
  // The XDG spec: a relative path is invalid and ignored.
  if (state != nullptr && state[0] == '/') return JoinPath(JoinPath(state, "odin"), "ledgers");
  const char* home = getenv("HOME");
  if (home != nullptr && home[0] == '/') return JoinPath(home, ".local/state/odin/ledgers");
  return Status::NotFound("ledger anchor", "neither XDG_STATE_HOME nor HOME is set");
}

LedgerAnchor::LedgerAnchor(std::string dir, std::string ledger_path)
    : dir_(std::move(dir)), ledger_(std::move(ledger_path)) {
  // 128 bits of the path's hash name it; the file holds the path, checked on read.
  std::string key = Sha256Hex(ledger_).substr(0, 32);
  path_ = JoinPath(dir_, key + ".json");
  lock_path_ = JoinPath(dir_, key + ".lock");
  temp_path_ = JoinPath(dir_, key + ".json.tmp");
}

LedgerAnchor::~LedgerAnchor() {
  if (lock_fd_ >= 0) close(lock_fd_);
}

StatusOr<std::optional<AnchorState>> LedgerAnchor::Read() const {
  int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::optional<AnchorState>();
    return PosixError("ledger anchor " + path_, errno);
  }
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return PosixError("ledger anchor " + path_, err);
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxAnchorBytes) break;
  }
  close(fd);
  AnchorState s;
  if (text.size() > kMaxAnchorBytes || !FromJson(text, &s)) {
    return Status::Corruption("ledger anchor " + path_,
                              "not a ledger anchor (remove it to anchor the ledger at its current head again)");
  }
  if (s.ledger != ledger_) {
    return Status::Corruption("ledger anchor " + path_, "belongs to " + s.ledger + ", not " + ledger_);
  }
  return std::optional<AnchorState>(std::move(s));
}

Status LedgerAnchor::Prepare() {
  if (lock_fd_ >= 0) return Status::OK();
  // 0700: the anchors say which workspaces the user works in.
  if (Status s = MakeDirs(dir_, 0700); !s.ok()) return s.WithContext("ledger anchor directory");
  lock_fd_ = open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd_ < 0) return PosixError("ledger anchor lock " + lock_path_, errno);
  return Status::OK();
}

Status LedgerAnchor::Lock() {
  RETURN_IF_ERROR(Prepare());
  while (flock(lock_fd_, LOCK_EX) != 0) {
    if (errno != EINTR) return PosixError("ledger anchor lock " + lock_path_, errno);
  }
  return Status::OK();
}

void LedgerAnchor::Unlock() { flock(lock_fd_, LOCK_UN); }

// REQUIRES: the lock is held (the temporary file's name is shared).
Status LedgerAnchor::WriteLocked(const AnchorState& state) {
  std::string text = ToJson(state).dump() + "\n";
  int fd = open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return PosixError("ledger anchor " + temp_path_, errno);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return PosixError("ledger anchor " + temp_path_, err);
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0) return PosixError("ledger anchor " + temp_path_, errno);
  if (rename(temp_path_.c_str(), path_.c_str()) != 0) return PosixError("ledger anchor " + path_, errno);
  return Status::OK();
}

Status LedgerAnchor::Advance(int64_t generation, int64_t seq, const std::string& hash) {
  return Update([&](const std::optional<AnchorState>& now) -> StatusOr<std::optional<AnchorState>> {
    AnchorState next;
    if (now) {
      if (now->generation > generation) {
        const std::string moved = now->resets.empty() ? "" : now->resets.back().moved_to;
        return Status::FailedPrecondition(
            "ledger " + ledger_, "was reset (odin ledger reset) after this process opened it" +
                                     (moved.empty() ? std::string() : "; this process wrote to the old ledger, now " + moved));
      }
      if (now->generation == generation && now->seq >= seq) {
        if (now->seq == seq && now->hash != hash) {
          return Status::Corruption("ledger " + ledger_, "record " + std::to_string(seq) +
                                                             " differs from the anchored one: records were removed "
                                                             "from the ledger while it was in use");
        }
        return std::optional<AnchorState>();  // another writer is already past us
      }
      next = *now;
    }
    next.ledger = ledger_;
    next.generation = generation;
    next.seq = seq;
    next.hash = hash;
    return std::optional<AnchorState>(std::move(next));
  });
}

Status LedgerAnchor::Update(
    const std::function<StatusOr<std::optional<AnchorState>>(const std::optional<AnchorState>&)>& fn) {
  RETURN_IF_ERROR(Lock());
  Status s;
  StatusOr<std::optional<AnchorState>> now = Read();
  if (!now.ok()) {
    s = now.status();
  } else {
    StatusOr<std::optional<AnchorState>> next = fn(*now);
    if (!next.ok()) s = next.status();
    else if (next->has_value()) s = WriteLocked(**next);
  }
  Unlock();
  return s;
}

}  // namespace odin

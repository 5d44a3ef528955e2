#include "ledger/ledger_anchor.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/json_input.h"
#include "base/sha256.h"

namespace odin {
namespace {

using nlohmann::json;

// The file: two slots of kSlotBytes at offsets 0 and kSlotBytes, each holding
// one line "SHA256HEX JSON\n" (or nothing yet). The JSON carries "n", a write
// counter: the valid slot with the larger n is the anchor. A write goes to
// the other slot.
constexpr size_t kSlotBytes = 16384;

struct Slot {
  bool valid = false;
  uint64_t n = 0;
  AnchorState state;
};

std::string Line(const AnchorState& s, uint64_t n) {
  json resets = json::array();
  for (const AnchorReset& r : s.resets) {
    resets.push_back({{"at_ms", r.at_ms},
                      {"anchored_seq", r.anchored_seq},
                      {"anchored_hash", r.anchored_hash},
                      {"found_seq", r.found_seq},
                      {"moved_to", r.moved_to}});
  }
  std::string payload = json{{"version", 2}, {"n", n},         {"ledger", s.ledger}, {"generation", s.generation},
                             {"seq", s.seq}, {"hash", s.hash}, {"resets", resets}}
                            .dump();
  return Sha256Hex(payload) + " " + payload + "\n";
}

// Parses one slot's bytes; invalid if empty, torn or not an anchor.
Slot ParseSlot(std::string_view bytes) {
  Slot slot;
  size_t nl = bytes.find('\n');
  size_t space = bytes.find(' ');
  if (nl == std::string_view::npos || space != 64 || space > nl) return slot;
  std::string_view payload = bytes.substr(65, nl - 65);
  if (Sha256Hex(payload) != bytes.substr(0, 64)) return slot;
  json j = ParseJson(payload);
  if (!j.is_object() || j.value("version", 0) != 2) return slot;
  try {
    slot.n = j.at("n").get<uint64_t>();
    slot.state.ledger = j.at("ledger").get<std::string>();
    slot.state.generation = j.at("generation").get<int64_t>();
    slot.state.seq = j.at("seq").get<int64_t>();
    slot.state.hash = j.at("hash").get<std::string>();
    for (const json& r : j.at("resets")) {
      slot.state.resets.push_back({r.at("at_ms").get<int64_t>(), r.at("anchored_seq").get<int64_t>(),
                                   r.at("anchored_hash").get<std::string>(), r.at("found_seq").get<int64_t>(),
                                   r.at("moved_to").get<std::string>()});
    }
  } catch (const json::exception&) {
    return slot;
  }
  slot.valid = slot.state.seq >= 0 && slot.state.generation >= 0;
  return slot;
}

// Reads both slots of fd: the newer valid one, nullopt if the file holds no
// anchor yet; Corruption if it holds bytes but no valid slot.
// Reads up to size bytes at offset; fewer at the end of the file.
StatusOr<std::string> ReadAt(int fd, const std::string& path, off_t offset, size_t size) {
  std::string bytes(size, '\0');
  size_t got = 0;
  while (got < size) {
    ssize_t r = pread(fd, bytes.data() + got, size - got, offset + static_cast<off_t>(got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return PosixError("ledger anchor " + path, errno);
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  bytes.resize(got);
  return bytes;
}

// Reads both slots of fd: the newer valid one, nullopt if the file holds no
// anchor yet; Corruption if it holds bytes but no valid slot.
StatusOr<std::optional<AnchorState>> ReadSlots(int fd, const std::string& path, const std::string& ledger,
                                               uint64_t* n) {
  // A slot's line is a few hundred bytes unless resets fill it: read a page
  // of each, and the whole slot only if its line goes on.
  constexpr size_t kFirstRead = 4096;
  Slot slots[2];
  bool empty = true;
  for (int i = 0; i < 2; ++i) {
    off_t offset = static_cast<off_t>(i * kSlotBytes);
    ASSIGN_OR_RETURN(std::string bytes, ReadAt(fd, path, offset, kFirstRead));
    if (bytes.empty() || bytes[0] == '\0') continue;
    empty = false;
    if (bytes.find('\n') == std::string::npos && bytes.size() == kFirstRead) {
      ASSIGN_OR_RETURN(bytes, ReadAt(fd, path, offset, kSlotBytes));
    }
    slots[i] = ParseSlot(bytes);
  }
  *n = 0;
  if (empty) return std::optional<AnchorState>();
  Slot& a = slots[0];
  Slot& b = slots[1];
  if (!a.valid && !b.valid) {
    return Status::Corruption("ledger anchor " + path,
                              "not a ledger anchor (remove it to anchor the ledger at its current head again)");
  }
  Slot& best = !b.valid || (a.valid && a.n > b.n) ? a : b;
  if (best.state.ledger != ledger) {
    return Status::Corruption("ledger anchor " + path, "belongs to " + best.state.ledger + ", not " + ledger);
  }
  *n = best.n;
  return std::optional<AnchorState>(std::move(best.state));
}

}  // namespace

StatusOr<std::string> LedgerAnchor::DefaultDir() {
  std::string state = OdinStateDir();
  if (state.empty()) return Status::NotFound("ledger anchor", "neither XDG_STATE_HOME nor HOME is set");
  return JoinPath(state, "ledgers");
}

LedgerAnchor::LedgerAnchor(std::string dir, std::string ledger_path)
    : dir_(std::move(dir)), ledger_(std::move(ledger_path)) {
  // 128 bits of the path's hash name it; the file holds the path, checked on read.
  path_ = JoinPath(dir_, Sha256Hex(ledger_).substr(0, 32) + ".anchor");
}

LedgerAnchor::~LedgerAnchor() {
  if (fd_ >= 0) close(fd_);
}

StatusOr<std::optional<AnchorState>> LedgerAnchor::Read() const {
  int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::optional<AnchorState>();
    return PosixError("ledger anchor " + path_, errno);
  }
  // Shared: never half of a write in progress.
  while (flock(fd, LOCK_SH) != 0 && errno == EINTR) {
  }
  uint64_t n = 0;
  StatusOr<std::optional<AnchorState>> state = ReadSlots(fd, path_, ledger_, &n);
  close(fd);
  return state;
}

Status LedgerAnchor::Prepare() {
  if (fd_ >= 0) return Status::OK();
  // 0700: the anchors say which workspaces the user works in.
  if (Status s = MakeDirs(dir_, 0700); !s.ok()) return s.WithContext("ledger anchor directory");
  fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) return PosixError("ledger anchor " + path_, errno);
  return Status::OK();
}

Status LedgerAnchor::Lock() {
  RETURN_IF_ERROR(Prepare());
  for (int attempt = 0;; ++attempt) {
    while (flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) return PosixError("ledger anchor " + path_, errno);
    }
    // Removed while we held it open (someone deleting the anchor to start
    // it again): follow the new file, not the deleted one.
    struct stat st;
    if (fstat(fd_, &st) != 0) return PosixError("ledger anchor " + path_, errno);
    if (st.st_nlink > 0 || attempt > 0) return Status::OK();
    close(fd_);
    fd_ = -1;
    RETURN_IF_ERROR(Prepare());
  }
}

void LedgerAnchor::Unlock() { flock(fd_, LOCK_UN); }

Status LedgerAnchor::Advance(int64_t generation, int64_t seq, const std::string& hash) {
  return Update([&](const std::optional<AnchorState>& now) -> StatusOr<std::optional<AnchorState>> {
    AnchorState next;
    if (now) {
      if (now->generation > generation) {
        const std::string moved = now->resets.empty() ? "" : now->resets.back().moved_to;
        return Status::FailedPrecondition(
            "ledger " + ledger_,
            "was reset (odin ledger reset) after this process opened it" +
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
  StatusOr<std::optional<AnchorState>> now = ReadSlots(fd_, path_, ledger_, &writes_);
  if (!now.ok()) {
    s = now.status();
  } else if (StatusOr<std::optional<AnchorState>> next = fn(*now); !next.ok()) {
    s = next.status();
  } else if (next->has_value()) {
    AnchorState& state = **next;
    if (state.resets.size() > kKeptResets) state.resets.erase(state.resets.begin(), state.resets.end() - kKeptResets);
    std::string line = Line(state, writes_ + 1);
    if (line.size() > kSlotBytes) {
      s = Status::InvalidArgument("ledger anchor " + path_, "the ledger's path is too long to anchor");
    } else {
      // The slot the newest is not in (the first write goes to slot 0).
      off_t offset = writes_ % 2 == 0 ? 0 : static_cast<off_t>(kSlotBytes);
      ssize_t n = pwrite(fd_, line.data(), line.size(), offset);
      if (n != static_cast<ssize_t>(line.size()))
        s = PosixError("ledger anchor " + path_, n < 0 ? errno : EIO);
      else
        ++writes_;
    }
  }
  Unlock();
  return s;
}

}  // namespace odin

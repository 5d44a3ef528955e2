#include "workspace/entry_table.h"

#include <random>

namespace odin {

EntryTable::EntryTable() {
  uint32_t root = NewId();
  at(root).live = true;
  live_ = 1;
  slots_.assign(1024, kNone);
}

uint32_t EntryTable::NewId() {
  if (!free_.empty()) {
    uint32_t id = free_.back();
    free_.pop_back();
    at(id) = Entry();
    return id;
  }
  if ((end_ & (kChunk - 1)) == 0) chunks_.push_back(std::make_unique<Entry[]>(kChunk));
  return end_++;
}

std::string_view EntryTable::name(uint32_t id) const {
  const Entry& e = at(id);
  return std::string_view(names_).substr(e.name_at, e.name_len);
}

namespace {

// A seed of this process's: a repository cannot pick names that all land in
// one run of slots (the table would then be slow for every look at them).
uint64_t Seed() {
  static const uint64_t seed = [] {
    std::random_device r;
    return (uint64_t{r()} << 32 | r()) | 1;
  }();
  return seed;
}

}  // namespace

uint64_t EntryTable::Hash(uint32_t parent, std::string_view name) const {
  // FNV-1a over the seed, the parent and the name, then mixed.
  uint64_t h = 0xcbf29ce484222325ull ^ Seed();
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  h ^= uint64_t{parent} * 0x9E3779B97F4A7C15ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

size_t EntryTable::Slot(uint32_t parent, std::string_view name) const {
  size_t mask = slots_.size() - 1;
  size_t slot = Hash(parent, name) & mask;
  size_t tomb = SIZE_MAX;
  for (;;) {
    uint32_t id = slots_[slot];
    if (id == kNone) return tomb != SIZE_MAX ? tomb : slot;
    if (id == kTomb) {
      if (tomb == SIZE_MAX) tomb = slot;
    } else if (at(id).parent == parent && this->name(id) == name) {
      return slot;
    }
    slot = (slot + 1) & mask;
  }
}

uint32_t EntryTable::Find(uint32_t parent, std::string_view name) const {
  if (parent >= end_ || !at(parent).live) return kNone;
  uint32_t id = slots_[Slot(parent, name)];
  return id == kTomb ? kNone : id;
}

uint32_t EntryTable::FindPath(std::string_view rel) const {
  uint32_t id = kRoot;
  while (!rel.empty() && id != kNone) {
    size_t slash = rel.find('/');
    id = Find(id, rel.substr(0, slash));
    rel = slash == std::string_view::npos ? std::string_view() : rel.substr(slash + 1);
  }
  return id;
}

void EntryTable::Grow() {
  // Past half full (tombstones count): twice the size, tombstones gone.
  std::vector<uint32_t> old;
  old.swap(slots_);
  size_t size = old.size();
  while (live_ * 4 >= size) size *= 2;
  slots_.assign(size, kNone);
  used_slots_ = 0;
  for (uint32_t id : old) {
    if (id == kNone || id == kTomb) continue;
    slots_[Slot(at(id).parent, name(id))] = id;
    ++used_slots_;
  }
}

uint32_t EntryTable::Add(uint32_t parent, std::string_view name) {
  if ((used_slots_ + 1) * 2 > slots_.size()) Grow();
  if (dead_name_bytes_ > (1u << 20) && dead_name_bytes_ * 2 > names_.size()) CompactNames();
  uint32_t id = NewId();
  Entry& e = at(id);
  e.live = true;
  e.parent = parent;
  e.name_at = static_cast<uint32_t>(names_.size());
  e.name_len = static_cast<uint16_t>(name.size());
  names_.append(name);
  Entry& p = at(parent);
  e.next = p.first_child;
  if (p.first_child != kNone) at(p.first_child).prev = id;
  p.first_child = id;
  size_t slot = Slot(parent, name);
  if (slots_[slot] == kNone) ++used_slots_;
  slots_[slot] = id;
  ++live_;
  return id;
}

void EntryTable::Unlink(uint32_t id) {
  Entry& e = at(id);
  if (e.prev != kNone) {
    at(e.prev).next = e.next;
  } else if (e.parent != kNone) {
    at(e.parent).first_child = e.next;
  }
  if (e.next != kNone) at(e.next).prev = e.prev;
  e.prev = e.next = kNone;
}

void EntryTable::Drop(uint32_t id) {
  Entry& e = at(id);
  slots_[Slot(e.parent, name(id))] = kTomb;
  dead_name_bytes_ += e.name_len;
  e.live = false;
  e.first_child = kNone;
  free_.push_back(id);
  --live_;
}

void EntryTable::CompactNames() {
  std::string kept;
  kept.reserve(names_.size() - dead_name_bytes_);
  for (uint32_t id = 0; id < end_; ++id) {
    Entry& e = at(id);
    if (!e.live) continue;
    uint32_t at = static_cast<uint32_t>(kept.size());
    kept.append(names_, e.name_at, e.name_len);
    e.name_at = at;
  }
  names_.swap(kept);
  dead_name_bytes_ = 0;
}

std::string EntryTable::PathOf(uint32_t id) const {
  std::vector<std::string_view> parts;
  for (uint32_t up = id; up != kRoot && up != kNone; up = at(up).parent) parts.push_back(name(up));
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (!out.empty()) out.push_back('/');
    out.append(*it);
  }
  return out;
}

size_t EntryTable::bytes() const {
  return chunks_.size() * kChunk * sizeof(Entry) + slots_.capacity() * sizeof(uint32_t) + names_.capacity() +
         free_.capacity() * sizeof(uint32_t);
}

}  // namespace odin

#pragma once
// EntryTable: the change tracker's picture of a tree, compact enough for a
// million entries (about 90 bytes each, against 450 for a map of paths).
//
// Each entry names its parent and its own name (kept once, in an arena),
// and is found by (parent, name) in one open-addressing table; a
// directory's entries are a linked list from it, so a subtree is dropped
// without looking at the rest. Ids are small integers, reused once freed.
// The root is id 0, named "".
//
// Thread-safety: none.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace odin {

class EntryTable {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr uint32_t kRoot = 0;

  // What stat said of an entry.
  struct Meta {
    int64_t size = 0;
    int64_t mtime_ns = 0;
    int64_t ctime_ns = 0;
    uint64_t ino = 0;
    uint16_t mode = 0;  // permission bits (07777)
    uint8_t type = 0;   // the tracker's EntryType
  };

  EntryTable();

  // The entry called name in the directory parent, or kNone.
  uint32_t Find(uint32_t parent, std::string_view name) const;
  // The entry at rel ("a/b/c", relative to the root; "" is the root), or kNone.
  uint32_t FindPath(std::string_view rel) const;
  // A new entry called name in parent (which must not have one). name must
  // not point into the table (name() of another entry).
  uint32_t Add(uint32_t parent, std::string_view name);
  // Drops the entry and everything under it, calling gone(id) for each
  // (children before their directory) while it is still readable.
  template <typename Gone>
  void Erase(uint32_t id, Gone&& gone);

  Meta& meta(uint32_t id) { return at(id).meta; }
  const Meta& meta(uint32_t id) const { return at(id).meta; }
  uint32_t& scan(uint32_t id) { return at(id).scan; }
  bool live(uint32_t id) const { return id < end_ && at(id).live; }
  uint32_t parent(uint32_t id) const { return at(id).parent; }
  std::string_view name(uint32_t id) const;
  std::string PathOf(uint32_t id) const;
  // The entries directly under id.
  template <typename Visit>
  void ForEachChild(uint32_t id, Visit&& visit) const;
  // Every live entry but the root, in no particular order.
  template <typename Visit>
  void ForEach(Visit&& visit) const;

  // Entries, the root not counted.
  size_t size() const { return live_ - 1; }
  // Bytes held (for the benchmark's account).
  size_t bytes() const;

 private:
  struct Entry {
    Meta meta;
    uint32_t parent = kNone;
    uint32_t name_at = 0;
    uint32_t first_child = kNone;
    uint32_t next = kNone;  // siblings
    uint32_t prev = kNone;
    uint32_t scan = 0;
    uint16_t name_len = 0;
    bool live = false;
  };
  uint64_t Hash(uint32_t parent, std::string_view name) const;
  // The slot of (parent, name): where it is, or the empty slot it would go to.
  size_t Slot(uint32_t parent, std::string_view name) const;
  void Grow();
  void Unlink(uint32_t id);
  void Drop(uint32_t id);  // one entry, from the table and the lists
  void CompactNames();

  // In chunks of kChunk: a table of a million grows without a copy of
  // itself (a vector's doubling would hold both for a moment).
  static constexpr uint32_t kChunkBits = 12, kChunk = 1u << kChunkBits;
  Entry& at(uint32_t id) { return chunks_[id >> kChunkBits][id & (kChunk - 1)]; }
  const Entry& at(uint32_t id) const { return chunks_[id >> kChunkBits][id & (kChunk - 1)]; }
  uint32_t NewId();
  std::vector<std::unique_ptr<Entry[]>> chunks_;
  uint32_t end_ = 0;  // ids below it have been handed out
  std::vector<uint32_t> free_;
  std::vector<uint32_t> slots_;  // entry ids; kNone empty, kTomb a deleted one
  size_t used_slots_ = 0;        // live and tombstones
  size_t live_ = 0;
  std::string names_;
  size_t dead_name_bytes_ = 0;
  static constexpr uint32_t kTomb = UINT32_MAX - 1;
};

template <typename Gone>
void EntryTable::Erase(uint32_t id, Gone&& gone) {
  if (id == kRoot || id >= end_ || !at(id).live) return;
  // Depth first, without recursion: a tree may be deep.
  std::vector<uint32_t> stack{id};
  std::vector<uint32_t> order;
  while (!stack.empty()) {
    uint32_t top = stack.back();
    stack.pop_back();
    order.push_back(top);
    for (uint32_t c = at(top).first_child; c != kNone; c = at(c).next) stack.push_back(c);
  }
  // Children before their directory: the reverse of a pre-order.
  for (auto it = order.rbegin(); it != order.rend(); ++it) gone(*it);
  Unlink(id);
  for (auto it = order.rbegin(); it != order.rend(); ++it) Drop(*it);
}

template <typename Visit>
void EntryTable::ForEachChild(uint32_t id, Visit&& visit) const {
  for (uint32_t c = at(id).first_child; c != kNone; c = at(c).next) visit(c);
}

template <typename Visit>
void EntryTable::ForEach(Visit&& visit) const {
  for (uint32_t id = 1; id < end_; ++id) {
    if (at(id).live) visit(id);
  }
}

}  // namespace odin

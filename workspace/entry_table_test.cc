#include "workspace/entry_table.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace odin {
namespace {

std::set<std::string> Paths(const EntryTable& t) {
  std::set<std::string> out;
  t.ForEach([&](uint32_t id) { out.insert(t.PathOf(id)); });
  return out;
}

TEST(EntryTableTest, FindsEntriesByParentAndName) {
  EntryTable t;
  EXPECT_EQ(t.size(), 0u);
  uint32_t src = t.Add(EntryTable::kRoot, "src");
  uint32_t a = t.Add(src, "a.cc");
  uint32_t b = t.Add(EntryTable::kRoot, "a.cc");  // the same name elsewhere
  EXPECT_EQ(t.Find(EntryTable::kRoot, "src"), src);
  EXPECT_EQ(t.Find(src, "a.cc"), a);
  EXPECT_EQ(t.Find(EntryTable::kRoot, "a.cc"), b);
  EXPECT_EQ(t.Find(src, "b.cc"), EntryTable::kNone);
  EXPECT_EQ(t.FindPath("src/a.cc"), a);
  EXPECT_EQ(t.FindPath(""), EntryTable::kRoot);
  EXPECT_EQ(t.FindPath("src/a.cc/x"), EntryTable::kNone);
  EXPECT_EQ(t.PathOf(a), "src/a.cc");
  EXPECT_EQ(t.parent(a), src);
  EXPECT_EQ(t.size(), 3u);
  t.meta(a).size = 42;
  EXPECT_EQ(t.meta(t.FindPath("src/a.cc")).size, 42);
}

TEST(EntryTableTest, ErasingADirectoryDropsEverythingUnderItChildrenFirst) {
  EntryTable t;
  uint32_t src = t.Add(EntryTable::kRoot, "src");
  uint32_t lib = t.Add(src, "lib");
  t.Add(lib, "x.cc");
  t.Add(src, "main.cc");
  t.Add(EntryTable::kRoot, "srcx");  // a sibling whose name starts the same
  std::vector<std::string> gone;
  t.Erase(src, [&](uint32_t id) { gone.push_back(t.PathOf(id)); });
  EXPECT_EQ(gone.back(), "src");
  EXPECT_LT(std::find(gone.begin(), gone.end(), "src/lib/x.cc") - gone.begin(),
            std::find(gone.begin(), gone.end(), "src/lib") - gone.begin());
  EXPECT_EQ(std::set<std::string>(gone.begin(), gone.end()),
            std::set<std::string>({"src", "src/lib", "src/lib/x.cc", "src/main.cc"}));
  EXPECT_EQ(Paths(t), std::set<std::string>({"srcx"}));
  EXPECT_EQ(t.FindPath("src/lib/x.cc"), EntryTable::kNone);
  // The names may come back, as new entries.
  uint32_t again = t.Add(EntryTable::kRoot, "src");
  EXPECT_EQ(t.FindPath("src"), again);
  EXPECT_EQ(t.meta(again).size, 0);
  std::vector<uint32_t> children;
  t.ForEachChild(again, [&](uint32_t c) { children.push_back(c); });
  EXPECT_TRUE(children.empty());
}

// Against a map of paths, through many random additions and erasures (the
// table grows, reuses ids and slots, and compacts its names on the way).
TEST(EntryTableTest, AgreesWithAMapOfPathsThroughChurn) {
  EntryTable t;
  std::set<std::string> model;
  std::mt19937 rng(7);
  std::vector<std::string> dirs = {""};
  for (int step = 0; step < 200000; ++step) {
    int op = static_cast<int>(rng() % 10);
    if (op < 7 || model.empty()) {
      const std::string& dir = dirs[rng() % dirs.size()];
      uint32_t parent = t.FindPath(dir);
      if (parent == EntryTable::kNone) continue;
      std::string name = "n" + std::to_string(rng() % 5000) + std::string(rng() % 40, 'x');
      std::string path = dir.empty() ? name : dir + "/" + name;
      if (t.Find(parent, name) != EntryTable::kNone) {
        EXPECT_EQ(model.count(path), 1u) << path;
        continue;
      }
      t.Add(parent, name);
      model.insert(path);
      if (rng() % 8 == 0) dirs.push_back(path);
    } else {
      auto it = model.begin();
      std::advance(it, rng() % std::min<size_t>(model.size(), 64));
      std::string victim = *it;
      size_t before = model.size();
      t.Erase(t.FindPath(victim), [](uint32_t) {});
      for (auto m = model.lower_bound(victim); m != model.end() && m->compare(0, victim.size(), victim) == 0;) {
        bool under = m->size() == victim.size() || (*m)[victim.size()] == '/';
        m = under ? model.erase(m) : std::next(m);
      }
      EXPECT_LT(model.size(), before);
    }
  }
  EXPECT_EQ(t.size(), model.size());
  EXPECT_EQ(Paths(t), model);
  for (const std::string& p : model) ASSERT_NE(t.FindPath(p), EntryTable::kNone) << p;
}

TEST(EntryTableTest, AMillionEntriesTakeAboutNinetyBytesEach) {
  EntryTable t;
  for (int d = 0; d < 4000; ++d) {
    uint32_t dir = t.Add(EntryTable::kRoot, "d" + std::to_string(d));
    for (int f = 0; f < 250; ++f) t.Add(dir, "f" + std::to_string(d * 250 + f) + ".txt");
  }
  EXPECT_EQ(t.size(), 1004000u);
  EXPECT_LT(t.bytes() / t.size(), 110u) << t.bytes();
}

}  // namespace
}  // namespace odin

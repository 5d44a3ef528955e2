#include "coordinator/change_numbers.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

TEST(ChangeNumbersTest, ACommandSeesWhatChangedAfterItStartedAsAConflict) {
  ChangeNumbers n;
  n.Path("src/a.c");
  uint64_t start = n.now();  // a command starts
  EXPECT_FALSE(n.ChangedSince("src/a.c", start));
  EXPECT_FALSE(n.PathSince("src/a.c", start));
  n.Path("src/b.c");
  n.Tree("vendor/lib");          // landed whole: counted, not listed
  n.IgnoredDir("node_modules");  // the tracker knows only which directory
  EXPECT_TRUE(n.ChangedSince("src/b.c", start));
  EXPECT_TRUE(n.PathSince("src/b.c", start));
  EXPECT_TRUE(n.ChangedSince("vendor/lib/x/y.c", start));
  EXPECT_FALSE(n.ChangedSince("vendor/libz/y.c", start));  // not below it
  EXPECT_FALSE(n.PathSince("vendor/lib/x/y.c", start));    // gone only by its own number
  EXPECT_TRUE(n.ChangedSince("node_modules", start));
  EXPECT_TRUE(n.ChangedSince("node_modules/p/index.js", start));
  EXPECT_FALSE(n.ChangedSince("node_modules2/p.js", start));
  EXPECT_FALSE(n.ChangedSince("src/a.c", start));
  // A command that started after all of it sees none of it.
  EXPECT_FALSE(n.ChangedSince("src/b.c", n.now()));
  EXPECT_FALSE(n.ChangedSince("node_modules/p/index.js", n.now()));
}

TEST(ChangeNumbersTest, OldNumbersAreForgottenOnlyOnceThereAreMany) {
  ChangeNumbers n;
  for (int i = 0; i < 10; ++i) n.Path("f" + std::to_string(i));
  uint64_t oldest = 5;  // the oldest running command started then
  n.ForgetUpTo(oldest, /*many=*/100);
  EXPECT_EQ(n.size(), 10u);  // few: kept
  n.ForgetUpTo(oldest, /*many=*/10);
  EXPECT_EQ(n.size(), 5u);
  EXPECT_TRUE(n.ChangedSince("f9", oldest));  // what it may ask about stays
  EXPECT_EQ(n.now(), 10u);                    // numbering goes on
}

}  // namespace
}  // namespace odin

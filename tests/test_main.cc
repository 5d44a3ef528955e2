// The main of every test binary: gtest's, run with the user's own directories
// (XDG_STATE_HOME, XDG_CONFIG_HOME, XDG_RUNTIME_DIR) pointed at a fresh
// temporary directory, removed at the end, so that neither a test nor anything
// it starts (odin writes ledger anchors, daemon sockets and trust into them)
// touches the real home. tests/test_util.cc gives the odin processes it
// starts directories of their own as well.

#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "base/file_util.h"

int main(int argc, char** argv) {
  odin::StatusOr<std::string> dir = odin::MakeTempDir("odin-test-home");
  if (!dir.ok()) {
    fprintf(stderr, "test main: %s\n", dir.status().ToString().c_str());
    return 1;
  }
  for (const char* name : {"XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR"}) {
    std::string sub = *dir + "/" + name;
    mkdir(sub.c_str(), 0700);
    setenv(name, sub.c_str(), 1);
  }
  ::testing::InitGoogleTest(&argc, argv);
  int rc = RUN_ALL_TESTS();
  odin::RemoveTree(*dir);
  return rc;
}

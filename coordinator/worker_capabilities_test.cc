#include "coordinator/worker_capabilities.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

TEST(WorkerCapabilitiesTest, NeitherIsUsedUntilAWorkerSaysItHasItAndOneWithoutTurnsItOff) {
  WorkerCapabilities caps;
  EXPECT_FALSE(caps.overlays());  // nobody has said yet
  EXPECT_FALSE(caps.view());
  EXPECT_TRUE(caps.overlay_not_lost());
  WorkerCapabilities::Lost first = caps.Hello(/*has_overlay=*/true, /*has_view=*/true);
  EXPECT_FALSE(first.overlay);
  EXPECT_FALSE(first.view);
  EXPECT_TRUE(caps.overlays());
  EXPECT_TRUE(caps.view());

  WorkerCapabilities::Lost second = caps.Hello(/*has_overlay=*/false, /*has_view=*/true);
  EXPECT_TRUE(second.overlay);  // told once
  EXPECT_FALSE(caps.overlays());
  EXPECT_FALSE(caps.overlay_not_lost());
  EXPECT_TRUE(caps.view());
  EXPECT_FALSE(caps.Hello(false, true).overlay);
  EXPECT_FALSE(caps.Hello(true, true).overlay);
  EXPECT_FALSE(caps.overlays());  // off for the session

  EXPECT_TRUE(caps.LoseView());  // a worker could not make one after all
  EXPECT_FALSE(caps.LoseView());
  EXPECT_FALSE(caps.view());
}

}  // namespace
}  // namespace odin

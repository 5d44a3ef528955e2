#pragma once
// OverlayKeeper: the tool worker's thread that makes and lets go of
// workspace overlays (sandbox/workspace_overlay.h).

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sandbox/workspace_overlay.h"

namespace odin {

// Makes the next command's workspace overlay, and lets go of used ones, on
// a thread of its own. Each costs the worker a millisecond or more (the
// overlay's mount; a mount namespace's teardown, which unmounts its tree),
// and neither needs to be on a command's way: the next overlay is made
// while this command runs, and the last one's namespaces go after the next
// has started.
//
// Only the worker's own thread calls it. The keeper's thread runs with
// every signal blocked (the worker takes SIGTERM through a signalfd).
class OverlayKeeper {
 public:
  // ready: an overlay made (and checked) already, or null. Preparing stops
  // after `tries` failures in a row.
  OverlayKeeper(std::string workspace, std::string mounts, std::unique_ptr<PreparedOverlay> ready, int tries);
  // Stops the thread, then lets go of everything it holds (the unclaimed
  // overlay's directories are removed).
  ~OverlayKeeper();
  OverlayKeeper(const OverlayKeeper&) = delete;
  OverlayKeeper& operator=(const OverlayKeeper&) = delete;

  // Starts making the next overlay unless one is ready or being made.
  void Prepare();
  // The overlay made, waiting for one being made; null if there is none
  // (not asked for, failed, or preparing has stopped).
  std::unique_ptr<PreparedOverlay> Take();
  // Its namespaces (and directories, unless claimed) go on the thread.
  void Release(std::unique_ptr<PreparedOverlay> used);
  // From now on nothing is prepared (joining failed too often).
  void StopPreparing();

 private:
  void Run();

  const std::string workspace_, mounts_;
  const int tries_;
  std::mutex mu_;
  std::condition_variable wake_;  // the thread: asked to make one, to let go, or to stop
  std::condition_variable made_;  // Take: the one being made is done
  std::unique_ptr<PreparedOverlay> ready_;
  std::vector<std::unique_ptr<PreparedOverlay>> used_;
  bool wanted_ = false, making_ = false, stop_ = false, enabled_ = true;
  int failures_ = 0;  // in a row
  std::thread thread_;
};

}  // namespace odin

#pragma once
// OverlayKeeper: the tool worker's thread that makes and lets go of
// workspace overlays (sandbox/workspace_overlay.h).

#include <functional>
#include <memory>
#include <thread>

#include "base/status.h"
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
  // Makes one overlay (PreparedOverlay::Make); runs on the keeper's thread.
  using MakeFn = std::function<StatusOr<std::unique_ptr<PreparedOverlay>>()>;

  // ready: an overlay made (and checked) already, or null. Preparing stops
  // after `tries` failures in a row (a Take that found the one being made
  // still unfinished counts as one).
  OverlayKeeper(MakeFn make, std::unique_ptr<PreparedOverlay> ready, int tries);
  // Stops the thread, then lets go of everything it holds (the unclaimed
  // overlay's directories are removed). Never waits long on a mount that
  // hangs: it kills the child making it, and at worst leaves the thread
  // to the process's exit.
  ~OverlayKeeper();
  OverlayKeeper(const OverlayKeeper&) = delete;
  OverlayKeeper& operator=(const OverlayKeeper&) = delete;

  // Starts making the next overlay unless one is ready or being made.
  void Prepare();
  // The overlay made, waiting a little for one being made; null if there
  // is none (not asked for, failed, unfinished, or preparing has stopped).
  std::unique_ptr<PreparedOverlay> Take();
  // Its namespaces (and directories, unless claimed) go on the thread.
  void Release(std::unique_ptr<PreparedOverlay> used);
  // From now on nothing is prepared (joining failed too often).
  void StopPreparing();
  // Whether overlays are still prepared.
  bool preparing() const;

 private:
  // Shared with the thread, which may outlive us (a mount that hangs).
  struct State;
  static void Run(const std::shared_ptr<State>& s);

  std::shared_ptr<State> s_;
  std::thread thread_;
};

}  // namespace odin

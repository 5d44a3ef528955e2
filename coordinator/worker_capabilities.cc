#include "coordinator/worker_capabilities.h"

namespace odin {

WorkerCapabilities::Lost WorkerCapabilities::Hello(bool has_overlay, bool has_view) {
  Lost lost;
  if (has_overlay) overlay_seen_ = true;
  if (has_view) view_seen_ = true;
  if (!has_view && !view_absent_) view_absent_ = lost.view = true;
  if (!has_overlay && !overlay_absent_) overlay_absent_ = lost.overlay = true;
  return lost;
}

bool WorkerCapabilities::LoseView() {
  if (view_absent_) return false;
  view_absent_ = true;
  return true;
}

}  // namespace odin

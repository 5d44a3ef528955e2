#pragma once
// What the writable tool workers have said they offer in their Hello: the
// overlay a command runs over, and the read-only view a command judged to
// only read runs in. Until one says it has it, neither is used; once one
// says it has not, it is off for the session (commands then write into the
// workspace itself and run alone; reading commands go over overlays).

namespace odin {

class WorkerCapabilities {
 public:
  struct Lost {
    bool overlay = false;  // this Hello turned the overlay off
    bool view = false;     // this Hello turned the view off
  };
  // A writable tool worker's Hello.
  Lost Hello(bool has_overlay, bool has_view);
  // A worker had no view after all (it could not make one): true the first
  // time.
  bool LoseView();

  // Every command that can write gets an overlay of its own.
  bool overlays() const { return overlay_seen_ && !overlay_absent_; }
  // No worker has said it lacks the overlay (yet).
  bool overlay_not_lost() const { return !overlay_absent_; }
  bool view() const { return view_seen_ && !view_absent_; }

 private:
  bool overlay_seen_ = false, overlay_absent_ = false;
  bool view_seen_ = false, view_absent_ = false;
};

}  // namespace odin

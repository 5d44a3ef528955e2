#pragma once
// The isolated sessions' views of a workspace, for odin doctor
// (cli_views.cc; odin diff, apply and discard are there too).

#include <nlohmann/json_fwd.hpp>

namespace odin {

class Ledger;
struct Workspace;

// One object per view: session_id, view, path, bytes (on disk), state
// (running, ended, applied, ...). ledger may be null (none yet).
nlohmann::json IsolatedViews(const Workspace& ws, Ledger* ledger);

}  // namespace odin

#include "ledger/forks.h"

#include <nlohmann/json.hpp>

#include "base/ids.h"
#include "base/json_input.h"

namespace odin {

using nlohmann::json;

GateEvent ForkRecord(const std::string& fork_id, const ForkOrigin& origin) {
  json detail = {{"from_session", origin.session_id}, {"forked_at_ms", origin.at_ms}};
  return {NewId("gate"),
          fork_id,
          "main",
          "",
          kForkRecordKind,
          "",
          detail.dump(-1, ' ', false, json::error_handler_t::replace),
          origin.at_ms};
}

std::optional<ForkOrigin> ForkOriginIn(const GateEvent& event) {
  if (event.kind != kForkRecordKind) return std::nullopt;
  json d = ParseJson(event.detail_json);
  if (!d.is_object() || !d.contains("from_session") || !d["from_session"].is_string()) return std::nullopt;
  int64_t at =
      d.contains("forked_at_ms") && d["forked_at_ms"].is_number_integer() ? d["forked_at_ms"].get<int64_t>() : 0;
  return ForkOrigin{d["from_session"].get<std::string>(), at};
}

}  // namespace odin

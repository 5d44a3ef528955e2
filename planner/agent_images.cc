// A Read of an image, for the model: the image itself after the turn's
// results for a model that sees images, a note for one that does not
// (Agent::AttachReadImage).

#include <nlohmann/json.hpp>

#include "base/image_type.h"
#include "base/json_input.h"
#include "base/sha256.h"
#include "odin/v1/worker.pb.h"
#include "planner/agent.h"
#include "workspace/workspace_files.h"

namespace odin {

using nlohmann::json;

void DropOldToolImages(std::vector<ChatMessage>* history) {
  size_t kept = 0;
  for (auto m = history->rbegin(); m != history->rend(); ++m) {
    if (m->role != ChatMessage::Role::kToolResults) continue;
    for (auto image = m->images.begin(); image != m->images.end();) {
      if (kept + image->bytes.size() > kMaxToolImageBytes) {
        image = m->images.erase(image);
      } else {
        kept += image->bytes.size();
        ++image;
      }
    }
  }
}

void Agent::AttachReadImage(size_t index, const v1::ToolResult& r) {
  json out = ParseJson(r.output_json());
  if (!out.is_object() || !out.contains("image") || r.files_read_size() != 1) return;
  Current& c = *current_;
  ToolResultMessage& m = *c.results[index];
  json record = ParseJson(m.content);
  if (!record.is_object()) return;
  const v1::FileSnapshot& snap = r.files_read(0);
  std::string root = o_.workspace + "/";
  std::string rel = snap.path().rfind(root, 0) == 0 ? snap.path().substr(root.size()) : "";
  auto note = [&](const std::string& text) {
    record["image"] = text;
    m.content = record.dump(-1, ' ', false, json::error_handler_t::replace);
  };
  if (!o_.vision) return note("not sent: the model in use cannot see images (llm.vision says which can)");
  if (rel.empty()) return note("not sent: only images inside the workspace are sent");
  if (c.images.size() >= kMaxImagesPerMessage) {
    return note("not sent: over " + std::to_string(kMaxImagesPerMessage) + " images in one turn");
  }
  size_t turn_bytes = snap.size_bytes();
  for (const ImageData& image : c.images) turn_bytes += image.bytes.size();
  if (turn_bytes > kMaxToolImageBytes) {
    return note("not sent: the turn's images are over " + std::to_string(kMaxToolImageBytes / 1'000'000) + " MB");
  }
  if (snap.size_bytes() > kMaxImageBytes) {
    return note("not sent: over " + std::to_string(kMaxImageBytes / 1000) + " kB, more than the models accept");
  }
  // Again through the safe file layer, and only the very bytes the worker
  // read and the ledger has the hash of.
  StatusOr<WorkspaceFiles> files = WorkspaceFiles::Open(o_.workspace);
  StatusOr<std::string> bytes = files.ok() ? files->ReadFile(rel, kMaxImageBytes + 1) : files.status();
  if (!bytes.ok()) return note("not sent: " + bytes.status().message());
  std::optional<std::string> type = ImageMediaType(*bytes);
  if (Sha256Hex(*bytes) != snap.sha256() || !type) return note("not sent: it changed after it was read; read it again");
  c.images.push_back({*type, std::move(*bytes), rel});
  note("sent: it follows the tool results as an image");
}

}  // namespace odin

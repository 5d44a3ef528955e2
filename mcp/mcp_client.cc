#include "mcp/mcp_client.h"

#include <nlohmann/json.hpp>
#include "base/base64.h"
#include "base/canonical_json.h"  // IsValidUtf8
#include "base/json_input.h"

namespace odin {

using nlohmann::json;

const char* const kMcpProtocolVersions[3] = {"2025-06-18", "2025-03-26", "2024-11-05"};

namespace {

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string Str(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : "";
}

// A tool call's content as text: text parts verbatim, the rest described.
std::string ContentText(const json& content) {
  std::string out;
  if (!content.is_array()) return out;
  for (const json& c : content) {
    if (!c.is_object()) continue;
    std::string type = Str(c, "type");
    std::string part;
    if (type == "text") {
      part = Str(c, "text");
    } else if (type == "image" || type == "audio") {
      part = "[" + type + " " + Str(c, "mimeType") + ", " + std::to_string(Str(c, "data").size()) + " bytes base64]";
    } else if (type == "resource" && c.contains("resource") && c["resource"].is_object()) {
      const json& r = c["resource"];
      part = r.contains("text") ? Str(r, "text") : "[resource " + Str(r, "uri") + "]";
    } else if (type == "resource_link") {
      part = "[resource link " + Str(c, "uri") + "]";
    } else {
      part = "[content of type " + type + "]";
    }
    out += (out.empty() ? "" : "\n") + part;
  }
  return out;
}

// A resources/read answer as text: each part in a <resource> element, a
// blob of text in UTF-8 decoded, any other blob described.
std::string ResourceText(const json& contents) {
  std::string out;
  if (!contents.is_array()) return out;
  for (const json& c : contents) {
    if (!c.is_object()) continue;
    std::string uri = Str(c, "uri"), mime = Str(c, "mimeType");
    std::string body;
    if (c.contains("text")) {
      body = Str(c, "text");
    } else {
      std::optional<std::string> bytes = Base64Decode(Str(c, "blob"));
      bool text = mime.rfind("text/", 0) == 0 || mime == "application/json" || mime.empty();
      if (bytes && text && IsValidUtf8(*bytes) && bytes->find('\0') == std::string::npos) {
        body = *bytes;
      } else {
        body = "[blob " + (mime.empty() ? std::string("of unknown type") : mime) + ", " +
               (bytes ? std::to_string(bytes->size()) + " bytes" : std::string("not valid base64")) + "]";
      }
    }
    out += (out.empty() ? "" : "\n") + std::string("<resource uri=") + Dump(uri) +
           (mime.empty() ? "" : " mimeType=" + Dump(mime)) + ">\n" + body +
           (body.empty() || body.back() == '\n' ? "" : "\n") + "</resource>";
  }
  return out;
}

// A prompts/get answer as text: the messages in order, an assistant's turn
// marked, content as a tool's (an embedded resource as a read shows it).
std::string PromptText(const json& messages) {
  std::string out;
  if (!messages.is_array()) return out;
  for (const json& m : messages) {
    if (!m.is_object() || !m.contains("content") || !m["content"].is_object()) continue;
    const json& c = m["content"];
    std::string part = Str(c, "type") == "resource" && c.contains("resource")
                           ? ResourceText(json::array({c["resource"]}))
                           : ContentText(json::array({c}));
    if (Str(m, "role") == "assistant") part = "[the prompt's assistant turn]\n" + part;
    out += (out.empty() ? "" : "\n\n") + part;
  }
  return out;
}

}  // namespace

McpClient::McpClient(std::string client_name, std::string client_version, Callbacks callbacks)
    : client_name_(std::move(client_name)), client_version_(std::move(client_version)), cb_(std::move(callbacks)) {}

void McpClient::Send(const std::string& json_line) { out_ += json_line + "\n"; }

std::string McpClient::TakeOutput() {
  std::string out;
  out.swap(out_);
  return out;
}

void McpClient::Fail(const std::string& why) {
  if (failed_) return;
  failed_ = true;
  ready_ = false;
  // Calls in flight end with the session.
  std::map<uint64_t, Pending> pending;
  pending.swap(pending_);
  for (auto [id, kind] : pending) {
    if (IsCall(kind) && cb_.on_result) cb_.on_result(id, {true, "", "", "the MCP session failed: " + why});
  }
  if (cb_.on_failed) cb_.on_failed(why);
}

void McpClient::Start() {
  uint64_t id = next_id_++;
  pending_[id] = Pending::kInitialize;
  json capabilities = json::object();
  // The workspace never changes in a session: no roots list_changed.
  if (!roots_.empty()) capabilities["roots"] = {{"listChanged", false}};
  // Asked of the user where someone can answer, declined where nobody can
  // (the coordinator decides, and records it).
  capabilities["elicitation"] = json::object();
  Send(Dump({{"jsonrpc", "2.0"},
             {"id", id},
             {"method", "initialize"},
             {"params",
              {{"protocolVersion", kMcpProtocolVersions[0]},
               {"capabilities", capabilities},
               {"clientInfo", {{"name", client_name_}, {"version", client_version_}}}}}}));
}

void McpClient::List(Pending kind, const std::string& cursor) {
  if (cursor.empty()) pages_[kind] = 0;
  ++pages_[kind];
  uint64_t id = next_id_++;
  pending_[id] = kind;
  json params = json::object();
  if (!cursor.empty()) params["cursor"] = cursor;
  const char* method = kind == Pending::kToolsList       ? "tools/list"
                       : kind == Pending::kResourcesList ? "resources/list"
                       : kind == Pending::kPromptsList   ? "prompts/list"
                                                         : "resources/templates/list";
  Send(Dump({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}));
}

void McpClient::Listed(Pending kind) {
  if (kind == Pending::kToolsList) {
    tools_ = std::move(listing_);
    listing_.clear();
  } else if (kind == Pending::kResourcesList) {
    resources_ = std::move(resources_listing_);
    resources_listing_.clear();
  } else if (kind == Pending::kTemplatesList) {
    templates_ = std::move(templates_listing_);
    templates_listing_.clear();
  } else {
    prompts_ = std::move(prompts_listing_);
    prompts_listing_.clear();
  }
  pages_.erase(kind);
  // The session's first listing goes on to the next kind; a later one (a
  // list_changed) is news at once.
  if (!ready_) {
    if (kind == Pending::kToolsList && offers_resources_) return List(Pending::kResourcesList, "");
    if (kind == Pending::kResourcesList) return List(Pending::kTemplatesList, "");
    if (kind != Pending::kPromptsList && offers_prompts_) return List(Pending::kPromptsList, "");
  }
  bool first = !ready_;
  ready_ = true;
  if (first && cb_.on_ready) cb_.on_ready();
  // What changed while a listing was under way (or before the first was
  // done) is listed once more.
  for (Pending again : {Pending::kToolsList, Pending::kResourcesList, Pending::kPromptsList}) {
    if (listing_again_[again] && !pages_.count(again)) {
      listing_again_[again] = false;
      ListChanged(again);
    }
  }
  // Listings that overlap (a server that says its tools and its resources
  // changed) make one piece of news, once all are in.
  if (!first && pages_.empty() && cb_.on_listing_changed) cb_.on_listing_changed();
}

void McpClient::ListChanged(Pending kind) {
  if ((kind == Pending::kResourcesList && !offers_resources_) || (kind == Pending::kPromptsList && !offers_prompts_)) {
    return;
  }
  if (!ready_ || pages_.count(kind)) {
    listing_again_[kind] = true;
    return;
  }
  if (relists_ >= kMaxRelists) return;  // a server that never stops changing is not followed for ever
  ++relists_;
  List(kind, "");
}

void McpClient::OnListPage(Pending kind, const json& result) {
  const char* field = kind == Pending::kToolsList       ? "tools"
                      : kind == Pending::kResourcesList ? "resources"
                      : kind == Pending::kPromptsList   ? "prompts"
                                                        : "resourceTemplates";
  if (!result.contains(field) || !result[field].is_array()) {
    // A server's tools are its session; its resources are extra.
    if (kind == Pending::kToolsList) return Fail(std::string("tools/list: no ") + field + " array");
    return Listed(kind);
  }
  for (const json& t : result[field]) {
    if (!t.is_object()) continue;
    if (kind == Pending::kToolsList) {
      if (Str(t, "name").empty()) return Fail("tools/list: a tool without a name");
      if (listing_.size() >= kMaxItems) break;
      McpTool tool;
      tool.name = Str(t, "name");
      tool.description = Str(t, "description");
      tool.input_schema_json =
          t.contains("inputSchema") && t["inputSchema"].is_object() ? Dump(t["inputSchema"]) : R"({"type":"object"})";
      if (t.contains("annotations") && t["annotations"].is_object()) {
        const json& a = t["annotations"];
        if (a.contains("readOnlyHint") && a["readOnlyHint"].is_boolean()) tool.read_only = a["readOnlyHint"];
        if (a.contains("destructiveHint") && a["destructiveHint"].is_boolean()) {
          tool.destructive = a["destructiveHint"];
        }
      }
      listing_.push_back(std::move(tool));
    } else if (kind == Pending::kResourcesList) {
      if (Str(t, "uri").empty() || resources_listing_.size() >= kMaxItems) continue;
      McpResource r{Str(t, "uri"), Str(t, "name"), Str(t, "description"), Str(t, "mimeType")};
      if (t.contains("size") && t["size"].is_number_integer()) r.size = t["size"].get<int64_t>();
      resources_listing_.push_back(std::move(r));
    } else if (kind == Pending::kPromptsList) {
      if (Str(t, "name").empty() || prompts_listing_.size() >= kMaxItems) continue;
      McpPrompt prompt{Str(t, "name"), Str(t, "description"), {}};
      if (t.contains("arguments") && t["arguments"].is_array()) {
        for (const json& a : t["arguments"]) {
          if (!a.is_object() || Str(a, "name").empty()) continue;
          prompt.arguments.push_back(
              {Str(a, "name"), Str(a, "description"),
               a.contains("required") && a["required"].is_boolean() && a["required"].get<bool>()});
        }
      }
      prompts_listing_.push_back(std::move(prompt));
    } else {
      if (Str(t, "uriTemplate").empty() || templates_listing_.size() >= kMaxItems) continue;
      templates_listing_.push_back({Str(t, "uriTemplate"), Str(t, "name"), Str(t, "description"), Str(t, "mimeType")});
    }
  }
  std::string cursor = Str(result, "nextCursor");
  if (!cursor.empty() && pages_[kind] < kMaxPages) return List(kind, cursor);
  Listed(kind);
}

uint64_t McpClient::ReadResource(const std::string& uri) {
  uint64_t id = next_id_++;
  pending_[id] = Pending::kResourceRead;
  Send(Dump({{"jsonrpc", "2.0"}, {"id", id}, {"method", "resources/read"}, {"params", {{"uri", uri}}}}));
  return id;
}

uint64_t McpClient::GetPrompt(const std::string& name, const std::string& arguments_json) {
  uint64_t id = next_id_++;
  pending_[id] = Pending::kPromptGet;
  json arguments = ParseJson(arguments_json);
  if (!arguments.is_object()) arguments = json::object();
  Send(Dump({{"jsonrpc", "2.0"},
             {"id", id},
             {"method", "prompts/get"},
             {"params", {{"name", name}, {"arguments", arguments}}}}));
  return id;
}

uint64_t McpClient::CallTool(const std::string& name, const std::string& arguments_json) {
  uint64_t id = next_id_++;
  pending_[id] = Pending::kToolCall;
  // The arguments pass through as the coordinator checked them (canonical
  // JSON, at Submit): spliced into the request, never parsed here. What is
  // not one line of an object's text goes as {}.
  bool object = arguments_json.size() >= 2 && arguments_json.front() == '{' && arguments_json.back() == '}' &&
                arguments_json.find_first_of("\r\n") == std::string::npos;          // one line, as the transport needs
  std::string params = Dump({{"name", name}, {"_meta", {{"progressToken", id}}}});  // {"_meta":..,"name":..}
  params = "{\"arguments\":" + (object ? arguments_json : std::string("{}")) + "," + params.substr(1);
  std::string request = Dump({{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"}});
  request.back() = ',';
  Send(request + "\"params\":" + params + "}");
  return id;
}

void McpClient::AnswerRequest(const std::string& request_id_json, const std::string& result_json) {
  json id = ParseJson(request_id_json);
  json result = ParseJson(result_json);
  if (!(id.is_number_integer() || id.is_string()) || !result.is_object() || failed_) return;
  Send(Dump({{"jsonrpc", "2.0"}, {"id", id}, {"result", result}}));
}

void McpClient::Cancel(uint64_t call, const std::string& reason) {
  auto it = pending_.find(call);
  if (it == pending_.end() || !IsCall(it->second)) return;
  pending_.erase(it);
  Send(Dump({{"jsonrpc", "2.0"},
             {"method", "notifications/cancelled"},
             {"params", {{"requestId", call}, {"reason", reason}}}}));
}

void McpClient::Feed(std::string_view bytes) {
  in_.append(bytes);
  size_t start = 0;
  for (size_t nl; !failed_ && (nl = in_.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string line = in_.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    HandleMessage(line);
  }
  in_.erase(0, start);
  if (in_.size() > kMaxLineBytes) Fail("a message longer than " + std::to_string(kMaxLineBytes >> 20) + " MiB");
}

void McpClient::HandleMessage(const std::string& message) {
  if (failed_) return;
  json m = ParseJson(message);
  if (!m.is_object()) return Fail("the server wrote something that is not a JSON-RPC message");
  std::string method = Str(m, "method");
  bool has_id = m.contains("id") && (m["id"].is_number_integer() || m["id"].is_string());
  if (!method.empty() && has_id) {
    // The server's request.
    json reply = {{"jsonrpc", "2.0"}, {"id", m["id"]}};
    if (method == "ping") {
      reply["result"] = json::object();
    } else if (method == "elicitation/create") {
      const json params = m.value("params", json::object());
      if (!params.is_object() || !params.contains("requestedSchema") || !params["requestedSchema"].is_object()) {
        reply["error"] = {{"code", -32602}, {"message", "elicitation/create needs a requestedSchema object"}};
      } else if (!cb_.on_elicitation) {
        reply["result"] = {{"action", "decline"}};
      } else {
        return cb_.on_elicitation(Dump(m["id"]), Str(params, "message"), Dump(params["requestedSchema"]));
      }
    } else if (method == "roots/list" && !roots_.empty()) {
      json roots = json::array();
      for (const McpRoot& r : roots_) roots.push_back({{"uri", r.uri}, {"name", r.name}});
      reply["result"] = {{"roots", roots}};
    } else {
      reply["error"] = {{"code", -32601}, {"message", "method not found: " + method}};
    }
    return Send(Dump(reply));
  }
  if (!method.empty()) {
    // A notification.
    if (method == "notifications/progress" && m.contains("params") && m["params"].is_object()) {
      const json& p = m["params"];
      if (!p.contains("progressToken") || !p["progressToken"].is_number_unsigned()) return;
      uint64_t call = p["progressToken"].get<uint64_t>();
      auto it = pending_.find(call);
      if (it == pending_.end() || it->second != Pending::kToolCall || !cb_.on_progress) return;
      double progress = p.contains("progress") && p["progress"].is_number() ? p["progress"].get<double>() : 0;
      double total = p.contains("total") && p["total"].is_number() ? p["total"].get<double>() : 0;
      cb_.on_progress(call, progress, total, Str(p, "message"));
    } else if (method == "notifications/tools/list_changed") {
      ListChanged(Pending::kToolsList);
    } else if (method == "notifications/resources/list_changed") {
      ListChanged(Pending::kResourcesList);
    } else if (method == "notifications/prompts/list_changed") {
      ListChanged(Pending::kPromptsList);
    }
    return;  // others (logging, resources) are not used
  }
  if (!m.contains("id") || !m["id"].is_number_unsigned()) return;  // not an answer to us
  OnResponse(m["id"].get<uint64_t>(), m);
}

void McpClient::OnResponse(uint64_t id, const json& m) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;  // cancelled, or never asked
  Pending kind = it->second;
  pending_.erase(it);
  bool is_error = m.contains("error");
  std::string error;
  if (is_error) {
    const json& e = m["error"];
    error = e.is_object() ? Str(e, "message") : "an error";
    if (e.is_object() && e.contains("code") && e["code"].is_number_integer()) {
      error += " (code " + std::to_string(e["code"].get<int64_t>()) + ")";
    }
  } else if (!m.contains("result") || !m["result"].is_object()) {
    return Fail("an answer without a result object");
  }
  const json& result = is_error ? json::object() : m["result"];
  switch (kind) {
    case Pending::kInitialize: {
      if (is_error) return Fail("initialize: " + error);
      std::string version = Str(result, "protocolVersion");
      bool known = false;
      for (const char* v : kMcpProtocolVersions) known = known || version == v;
      if (!known) return Fail("the server speaks protocol revision '" + version + "', which Odin does not");
      protocol_version_ = version;
      if (result.contains("serverInfo") && result["serverInfo"].is_object()) {
        server_name_ = Str(result["serverInfo"], "name");
      }
      bool caps = result.contains("capabilities") && result["capabilities"].is_object();
      offers_resources_ = caps && result["capabilities"].contains("resources");
      offers_prompts_ = caps && result["capabilities"].contains("prompts");
      Send(Dump({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}));
      listing_.clear();
      return List(Pending::kToolsList, "");
    }
    case Pending::kToolsList:
    case Pending::kResourcesList:
    case Pending::kTemplatesList:
    case Pending::kPromptsList:
      // A refused resources listing leaves that kind empty; tools are the
      // session.
      if (is_error && kind == Pending::kToolsList) return Fail("tools/list: " + error);
      if (is_error) return Listed(kind);
      return OnListPage(kind, result);
    case Pending::kResourceRead:
    case Pending::kPromptGet:
    case Pending::kToolCall: {
      McpCallResult r;
      if (is_error) {
        r.is_error = true;
        r.error = error;
      } else {
        r.is_error = result.contains("isError") && result["isError"].is_boolean() && result["isError"].get<bool>();
        r.text = kind == Pending::kResourceRead ? ResourceText(result.value("contents", json::array()))
                 : kind == Pending::kPromptGet  ? PromptText(result.value("messages", json::array()))
                                                : ContentText(result.value("content", json::array()));
        if (result.contains("structuredContent")) r.structured_json = Dump(result["structuredContent"]);
      }
      if (cb_.on_result) cb_.on_result(id, r);
      return;
    }
  }
}

}  // namespace odin

// fake_lsp_server: a scripted language server for tests of the lsp client,
// the lsp host and the validation gate.
//
// Speaks LSP over stdin/stdout. After initialize, every didOpen/didChange is
// answered with publishDiagnostics: one error per line that contains "ERROR"
// (its message is the rest of the line), one warning per line with "WARN".
// Behaviour by --mode:
//   versioned    diagnostics carry the document version (default)
//   unversioned  no version; also a stale empty publish first, then the real one
//   silent       answers initialize, never publishes
//   no_init      never answers initialize
//   crash        exits when a document changes
//   stale_first  before each real publish, one for the previous version
//                claiming an error "stale diagnostics"
//   disk_first   as gopls: after a didOpen, first the diagnostics of the file
//                as it is on disk, without a version, and 600 ms later the
//                versioned ones of the text sent; didChange as versioned
// --delay-ms N delays every publish. --log FILE appends each method received.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

using nlohmann::json;

namespace {

bool ReadMessage(std::string* body) {
  size_t length = 0;
  std::string line;
  for (;;) {
    line.clear();
    int c;
    while ((c = std::getchar()) != EOF && c != '\n') line += static_cast<char>(c);
    if (c == EOF) return false;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) break;
    if (line.rfind("Content-Length:", 0) == 0) length = std::stoul(line.substr(15));
  }
  body->resize(length);
  return std::fread(body->data(), 1, length, stdin) == length;
}

void Write(const json& m) {
  std::string body = m.dump();
  std::printf("Content-Length: %zu\r\n\r\n%s", body.size(), body.c_str());
  std::fflush(stdout);
}

json Diagnose(const std::string& text) {
  json items = json::array();
  size_t start = 0;
  int line = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string l = text.substr(start, end - start);
    for (auto [word, severity] : {std::pair<const char*, int>{"ERROR", 1}, {"WARN", 2}}) {
      size_t at = l.find(word);
      if (at == std::string::npos) continue;
      std::string message = l.substr(at + std::string(word).size());
      size_t first = message.find_first_not_of(" :");
      message = first == std::string::npos ? std::string(word) : message.substr(first);
      items.push_back(
          {{"range",
            {{"start", {{"line", line}, {"character", at}}}, {"end", {{"line", line}, {"character", at + 1}}}}},
           {"severity", severity},
           {"code", "fake" + std::to_string(severity)},
           {"source", "fake"},
           {"message", message}});
    }
    ++line;
    start = end + 1;
  }
  return items;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = "versioned";
  std::string log_path;
  int delay_ms = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--mode") mode = argv[i + 1];
    if (flag == "--delay-ms") delay_ms = std::stoi(argv[i + 1]);
    if (flag == "--log") log_path = argv[i + 1];
  }
  std::string body;
  while (ReadMessage(&body)) {
    json m = json::parse(body, nullptr, false);
    if (!m.is_object()) continue;
    std::string method = m.value("method", "");
    if (!log_path.empty()) std::ofstream(log_path, std::ios::app) << method << "\n";
    if (method == "initialize") {
      if (mode == "no_init") continue;
      Write({{"jsonrpc", "2.0"}, {"id", m["id"]}, {"result", {{"capabilities", {{"textDocumentSync", 1}}}}}});
      // Servers ask for configuration; the client must answer.
      Write({{"jsonrpc", "2.0"},
             {"id", 900},
             {"method", "workspace/configuration"},
             {"params", {{"items", json::array({{{"section", "fake"}}})}}}});
      continue;
    }
    if (method == "shutdown") {
      Write({{"jsonrpc", "2.0"}, {"id", m["id"]}, {"result", nullptr}});
      continue;
    }
    if (method == "exit") return 0;
    if (method != "textDocument/didOpen" && method != "textDocument/didChange") continue;
    if (mode == "crash" && method == "textDocument/didChange") return 3;
    if (mode == "silent") continue;
    const json& doc = m["params"]["textDocument"];
    std::string text = method == "textDocument/didOpen" ? doc["text"].get<std::string>()
                                                        : m["params"]["contentChanges"][0]["text"].get<std::string>();
    if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    json params = {{"uri", doc["uri"]}, {"diagnostics", Diagnose(text)}};
    if (mode == "disk_first" && method == "textDocument/didOpen") {
      std::string uri = doc["uri"];
      std::ifstream disk(uri.substr(uri.find("://") + 3));
      std::string on_disk((std::istreambuf_iterator<char>(disk)), std::istreambuf_iterator<char>());
      Write({{"jsonrpc", "2.0"},
             {"method", "textDocument/publishDiagnostics"},
             {"params", {{"uri", doc["uri"]}, {"diagnostics", Diagnose(on_disk)}}}});
      std::this_thread::sleep_for(std::chrono::milliseconds(600));
    }
    if (mode == "stale_first") {
      json stale = json::array(
          {{{"range", {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 0}, {"character", 1}}}}},
            {"severity", 1},
            {"source", "fake"},
            {"message", "stale diagnostics"}}});
      Write({{"jsonrpc", "2.0"},
             {"method", "textDocument/publishDiagnostics"},
             {"params", {{"uri", doc["uri"]}, {"version", doc["version"].get<int>() - 1}, {"diagnostics", stale}}}});
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (mode == "versioned" || mode == "stale_first" || mode == "disk_first") {
      params["version"] = doc["version"];
    } else {
      Write({{"jsonrpc", "2.0"},
             {"method", "textDocument/publishDiagnostics"},
             {"params", {{"uri", doc["uri"]}, {"diagnostics", json::array()}}}});
    }
    Write({{"jsonrpc", "2.0"}, {"method", "textDocument/publishDiagnostics"}, {"params", params}});
  }
  return 0;
}

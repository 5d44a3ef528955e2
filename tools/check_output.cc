#include "tools/check_output.h"

#include <charconv>
#include <cstring>
#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>
#include "base/json_input.h"

namespace odin {

namespace {

// A line or column number; 0 for one that does not fit.
uint32_t Number(const std::string& digits) {
  uint32_t n = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  return ec == std::errc() ? n : 0;
}

// Lines longer than this are not matched (std::regex recurses per character).
constexpr size_t kMaxLineForRegex = 4096;

uint32_t Severity(const std::string& word) {
  if (word == "warning") return 2;
  if (word == "note") return 3;
  return 1;  // error, fatal error
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  for (size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
  return text;
}

std::string Normal(const std::string& dir, const std::string& path) {
  std::filesystem::path p =
      !path.empty() && path[0] != '/' ? std::filesystem::path(dir) / path : std::filesystem::path(path);
  return p.lexically_normal().string();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

}  // namespace

std::vector<CheckDiagnostic> ParseCheckOutput(const std::string& raw, int exit_code, const std::string& copy_path,
                                              const std::string& real_path, const std::string& source,
                                              const std::string& relative_to) {
  std::string output = Replace(raw, copy_path, real_path);
  std::vector<CheckDiagnostic> out;
  static const std::regex kGcc(
      R"(^(.+?):(\d+):(?:(\d+):)? (fatal error|error|warning|note)(?:\[([A-Za-z0-9_:-]{1,64})\])?: (.*)$)");
  static const std::regex kPythonFile(R"re(^\s*File "(.+)", line (\d+))re");
  static const std::regex kNodeFile(R"(^(/.+):(\d+)$)");
  static const std::regex kErrorLine(R"(^(?:Sorry: )?([A-Za-z_]*Error): (.*)$)");
  std::vector<std::string> lines = Lines(output);
  std::string pending_path;
  uint32_t pending_line = 0;
  for (const std::string& line : lines) {
    if (line.size() > kMaxLineForRegex) continue;
    std::smatch m;
    if (std::regex_match(line, m, kGcc)) {
      CheckDiagnostic d;
      d.path = m[1];
      if (!relative_to.empty() && d.path[0] != '/') d.path = Normal(relative_to, d.path);
      d.diag.line = Number(m[2]);
      d.diag.column = m[3].matched ? Number(m[3]) : 1;
      d.diag.severity = Severity(m[4]);
      d.diag.code = m[5];
      d.diag.message = m[6];
      d.diag.source = source;
      if (d.diag.severity != 3) out.push_back(std::move(d));  // notes belong to the error before them
      continue;
    }
    if (std::regex_search(line, m, kPythonFile) || std::regex_match(line, m, kNodeFile)) {
      pending_path = m[1];
      pending_line = Number(m[2]);
      continue;
    }
    if (!pending_path.empty() && std::regex_match(line, m, kErrorLine)) {
      CheckDiagnostic d;
      d.path = pending_path;
      d.diag.line = pending_line;
      d.diag.column = 1;
      d.diag.severity = 1;
      d.diag.code = m[1];
      d.diag.message = m[2];
      d.diag.source = source;
      out.push_back(std::move(d));
      pending_path.clear();
    }
  }
  if (exit_code != 0 && out.empty()) {
    std::string first;
    for (const std::string& line : lines) {
      if (line.find_first_not_of(" \t") != std::string::npos) {
        first = line;
        break;
      }
    }
    CheckDiagnostic d;
    d.path = real_path;
    d.diag.line = 1;
    d.diag.column = 1;
    d.diag.severity = 1;
    d.diag.message = first.empty() ? "the check failed with exit code " + std::to_string(exit_code) : first;
    d.diag.source = source;
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<std::string> SplitCommandLine(const std::string& command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < command.size(); ++i) {
    char c = command[i];
    if (quote == '\'') {
      if (c == '\'') {
        quote = 0;
      } else {
        word += c;
      }
      continue;
    }
    if (quote == '"') {
      if (c == '"') {
        quote = 0;
      } else if (c == '\\' && i + 1 < command.size() && strchr("\"\\$`", command[i + 1]) != nullptr) {
        word += command[++i];
      } else {
        word += c;
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '\\' && i + 1 < command.size()) {
      word += command[++i];
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

std::vector<std::string> SyntaxCheckFromCompileDb(const std::string& compile_db, const std::string& file,
                                                  const std::string& check_copy, std::string* directory) {
  using nlohmann::json;
  json db = ParseJson(compile_db);
  if (!db.is_array()) return {};
  for (const json& entry : db) {
    if (!entry.is_object() || !entry.contains("file") || !entry["file"].is_string()) continue;
    std::string dir = entry.contains("directory") && entry["directory"].is_string() ? entry["directory"] : "";
    std::string entry_file = Normal(dir, entry["file"]);
    if (entry_file != Normal("/", file)) continue;
    std::vector<std::string> args;
    if (entry.contains("arguments") && entry["arguments"].is_array()) {
      for (const json& a : entry["arguments"]) {
        if (a.is_string()) args.push_back(a);
      }
    } else if (entry.contains("command") && entry["command"].is_string()) {
      args = SplitCommandLine(entry["command"]);
    }
    if (args.empty()) return {};
    std::vector<std::string> out = {args[0], "-fsyntax-only"};
    for (size_t i = 1; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (a == "-o" || a == "-MF" || a == "-MT" || a == "-MQ") {
        ++i;
        continue;
      }
      if (a == "-c" || a == "-MD" || a == "-MMD" || a.rfind("-o", 0) == 0) continue;
      if (!a.empty() && a[0] != '-' && Normal(dir, a) == entry_file) continue;
      out.push_back(a);
    }
    out.push_back(check_copy);
    *directory = dir;
    return out;
  }
  return {};
}

}  // namespace odin

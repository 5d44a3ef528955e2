#include "gates/validators.h"

#include <unistd.h>

#include <algorithm>
#include <memory>

#include "base/file_util.h"
#include "base/subprocess.h"

namespace odin {

namespace {

std::string Extension(const std::string& path) {
  size_t slash = path.find_last_of('/');
  size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

}  // namespace

ValidationOptions DefaultValidationOptions() {
  ValidationOptions o;
  o.servers = {
      {"clangd",
       {"clangd", "--background-index=false", "--log=error"},
       {".c", ".h", ".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".ipp"}},
      {"pyright", {"pyright-langserver", "--stdio"}, {".py", ".pyi"}},
      {"typescript", {"typescript-language-server", "--stdio"}, {".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs"}},
      {"gopls", {"gopls"}, {".go"}},
      {"rust-analyzer", {"rust-analyzer"}, {".rs"}},
  };
  o.check_commands[".c"] = {"gcc", "-fsyntax-only", "{file}"};
  for (const char* ext : {".cc", ".cpp", ".cxx", ".c++"}) o.check_commands[ext] = {"g++", "-fsyntax-only", "{file}"};
  for (const char* ext : {".h", ".hh", ".hpp", ".hxx"}) {
    o.check_commands[ext] = {"g++", "-fsyntax-only", "-x", "c++", "{file}"};
  }
  o.check_commands[".py"] = {"python3", "-m", "py_compile", "{file}"};
  for (const char* ext : {".js", ".mjs", ".cjs"}) o.check_commands[ext] = {"node", "--check", "{file}"};
  // Checks the file's crate (a copy of it, workers/cargo_mirror.h): where
  // rust-analyzer is missing, as on Debian 12, which ships none.
  o.check_commands[".rs"] = {"cargo", "check", "--workspace", "--offline", "--message-format=short", "--quiet"};
  return o;
}

std::string LanguageIdFor(const std::string& path) {
  static const std::map<std::string, std::string> kIds = {
      {".c", "c"},
      {".h", "cpp"},
      {".cc", "cpp"},
      {".cpp", "cpp"},
      {".cxx", "cpp"},
      {".c++", "cpp"},
      {".hh", "cpp"},
      {".hpp", "cpp"},
      {".hxx", "cpp"},
      {".ipp", "cpp"},
      {".py", "python"},
      {".pyi", "python"},
      {".ts", "typescript"},
      {".tsx", "typescriptreact"},
      {".js", "javascript"},
      {".mjs", "javascript"},
      {".cjs", "javascript"},
      {".jsx", "javascriptreact"},
      {".go", "go"},
      {".rs", "rust"},
  };
  auto it = kIds.find(Extension(path));
  return it == kIds.end() ? "plaintext" : it->second;
}

ProgramLookup DefaultProgramLookup(const std::string& path_value, const std::string& bin_dir) {
  auto cache = std::make_shared<std::map<std::string, std::string>>();
  return [=](const std::string& name) -> std::string {
    auto it = cache->find(name);
    if (it != cache->end()) return it->second;
    std::string found;
    if (name.find('/') != std::string::npos) {
      found = access(name.c_str(), X_OK) == 0 ? name : "";
    } else {
      found = SearchPath(name, path_value);
      if (found.empty() && !bin_dir.empty()) {
        std::string bundled = JoinPath(bin_dir, "../lsp/node_modules/.bin/" + name);
        if (access(bundled.c_str(), X_OK) == 0) found = bundled;
      }
    }
    (*cache)[name] = found;
    return found;
  };
}

FileValidator ResolveValidator(const ValidationOptions& o, const std::string& path, const ProgramLookup& lookup) {
  FileValidator v;
  std::string ext = Extension(path);
  v.language_id = LanguageIdFor(path);
  for (const ServerSpec& s : o.servers) {
    if (s.command.empty() || std::find(s.extensions.begin(), s.extensions.end(), ext) == s.extensions.end()) {
      continue;
    }
    std::string program = lookup(s.command[0]);
    if (program.empty()) continue;  // not installed: the next one, or the check command
    v.server_name = s.name;
    v.server_command = s.command;
    v.server_command[0] = program;
    v.start_timeout_ms = s.start_timeout_ms != 0 ? s.start_timeout_ms : o.start_timeout_ms;
    v.file_timeout_ms = s.file_timeout_ms != 0 ? s.file_timeout_ms : o.file_timeout_ms;
    v.settle_ms = s.settle_ms != 0 ? s.settle_ms : o.settle_ms;
    break;
  }
  auto check = o.check_commands.find(ext);
  if (check != o.check_commands.end() && !check->second.empty()) {
    std::string program = lookup(check->second[0]);
    if (!program.empty()) {
      v.check_command = check->second;
      v.check_command[0] = program;
    }
  }
  if (v.start_timeout_ms == 0) v.start_timeout_ms = o.start_timeout_ms;
  if (v.file_timeout_ms == 0) v.file_timeout_ms = o.file_timeout_ms;
  if (v.settle_ms == 0) v.settle_ms = o.settle_ms;
  return v;
}

std::string FallbackChecks(const ValidationOptions& o, const std::vector<std::string>& extensions,
                           const ProgramLookup& lookup) {
  std::string out;
  for (const std::string& e : extensions) {
    auto check = o.check_commands.find(e);
    if (check == o.check_commands.end() || check->second.empty() || lookup(check->second[0]).empty()) continue;
    std::string shown;
    for (const std::string& a : check->second) shown += (shown.empty() ? "" : " ") + a;
    if (out.find(shown) == std::string::npos) out += (out.empty() ? "" : ", ") + shown;
  }
  return out;
}

}  // namespace odin

#pragma once
// Which validator serves which file: language servers by file extension, and
// a check command per extension for files no server serves (or whose server
// is not installed). Defaults below; odinconfig.json's "validation" section
// adds servers, replaces them by name, or disables them with an empty command.
//
//   clangd                      .c .h .cc .cpp .cxx .c++ .hh .hpp .hxx .ipp
//   pyright-langserver --stdio  .py .pyi
//   typescript-language-server  .ts .tsx .js .jsx .mjs .cjs
//   gopls, rust-analyzer        .go, .rs (used when found)
//   check commands: gcc/g++ -fsyntax-only, python3 -m py_compile, node --check
//
// Programs are looked up on PATH, then in <odin's bin>/../lsp/node_modules/.bin
// (where the setup installs pyright and typescript-language-server).

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace odin {

struct ServerSpec {
  std::string name;
  std::vector<std::string> command;     // empty: disabled
  std::vector<std::string> extensions;  // with the dot: ".cc"
  uint32_t start_timeout_ms = 0;        // 0: ValidationOptions' default
  uint32_t file_timeout_ms = 0;
  uint32_t settle_ms = 0;  // for servers without versioned diagnostics
};

struct ValidationOptions {
  bool enabled = true;                  // validation.enabled
  uint32_t start_timeout_ms = 45000;    // a server's start, to its answer to initialize
  uint32_t file_timeout_ms = 5000;      // one version of a file, to its diagnostics
  uint32_t settle_ms = 150;             // servers without versioned diagnostics only
  uint32_t check_timeout_ms = 30000;    // a check command
  bool revert_on_new_errors = false;    // roll back an edit that brings new errors
  bool fail_open = false;               // a backpressure check that could not run does not block
  uint32_t max_files_per_command = 50;  // files of one command's change set that are validated
  std::vector<ServerSpec> servers;      // in order of preference
  std::map<std::string, std::vector<std::string>> check_commands;  // ".py" -> argv with {file}; empty: none
};

ValidationOptions DefaultValidationOptions();

// What validates one file, programs resolved to absolute paths.
struct FileValidator {
  std::string server_name;  // "" when no installed server serves it
  std::vector<std::string> server_command;
  std::string language_id;  // LSP languageId: "cpp", "python", ...
  uint32_t start_timeout_ms = 0;
  uint32_t file_timeout_ms = 0;
  uint32_t settle_ms = 0;
  std::vector<std::string> check_command;  // "" when none; "{file}" for the copy
  bool any() const { return !server_name.empty() || !check_command.empty(); }
};

// Resolves a program name to an absolute path, or "" if it is not installed.
using ProgramLookup = std::function<std::string(const std::string& name)>;
// PATH, then bin_dir/../lsp/node_modules/.bin. Remembers answers.
ProgramLookup DefaultProgramLookup(const std::string& path_value, const std::string& bin_dir);

FileValidator ResolveValidator(const ValidationOptions& options, const std::string& path, const ProgramLookup& lookup);

// The check commands files of these extensions fall back to, installed ones
// only, as "g++ -fsyntax-only {file}, gcc ..." ("" if none), for odin doctor.
std::string FallbackChecks(const ValidationOptions& options, const std::vector<std::string>& extensions,
                           const ProgramLookup& lookup);

// The LSP languageId for a file name ("a.cc" -> "cpp"); "plaintext" if unknown.
std::string LanguageIdFor(const std::string& path);

}  // namespace odin

#pragma once
// Which TypeScript and JavaScript files import a file: where a change to what
// it exports shows its errors, so the lsp host asks the server about them too.

#include <cstddef>
#include <string>
#include <vector>

namespace odin {

// A TypeScript or JavaScript source (.ts, .tsx, .mts, .cts, .js, .jsx, .mjs,
// .cjs; not a .d.ts declaration file).
bool IsScriptFile(const std::string& path);

// The script files of the workspace that import path by a relative
// specifier (import, export ... from, require, import()), at most max of
// them, sorted, from a bounded walk that skips dependencies, build output
// and hidden directories.
std::vector<std::string> Importers(const std::string& workspace, const std::string& path, size_t max);

}  // namespace odin

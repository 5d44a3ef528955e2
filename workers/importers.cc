#include "workers/importers.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <regex>

#include "base/file_util.h"

namespace odin {

namespace {

// Whether the relative specifier spec, imported from a file in dir, names
// path: "./heap", "./heap.js" (TypeScript's ESM style, for heap.ts),
// "./heap/index".
bool Names(const std::string& dir, const std::string& spec, const std::string& path) {
  std::string target = std::filesystem::path(dir + "/" + spec).lexically_normal().string();
  if (target == path) return true;
  std::string stem = path.substr(0, path.find_last_of('.'));
  std::string target_stem = target;
  for (const char* ext : {".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx"}) {
    if (target.ends_with(ext)) {
      target_stem = target.substr(0, target.size() - strlen(ext));
      break;
    }
  }
  return target_stem == stem || target + "/index" == stem;
}

}  // namespace

bool IsScriptFile(const std::string& path) {
  static const char* kExtensions[] = {".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"};
  return std::any_of(std::begin(kExtensions), std::end(kExtensions),
                     [&](const char* ext) { return path.ends_with(ext) && !path.ends_with(".d.ts"); });
}

// The TypeScript and JavaScript files of the workspace that import path by a
// relative specifier (import, export ... from, require, import()), at most
// max of them, from a bounded walk that skips dependencies, build output and
// hidden directories: where a change to what path exports shows its errors.
std::vector<std::string> Importers(const std::string& workspace, const std::string& path, size_t max) {
  static const std::regex kSpecifier(
      // Bounded repetitions: libstdc++'s matcher recurses per character, and
      // a file is anyone's bytes.
      R"re((?:\bfrom\s{0,8}|\bimport\s{0,8}\(\s{0,8}|\brequire\s{0,8}\(\s{0,8}|\bimport\s{1,8})['"](\.{1,2}/[^'"\n]{1,400})['"])re");
  std::vector<std::string> out;
  std::error_code ec;
  std::filesystem::recursive_directory_iterator it(workspace,
                                                   std::filesystem::directory_options::skip_permission_denied, ec);
  int looked = 0, entries = 0;  // script files read, entries seen: bounded in a tree of any size
  for (; !ec && it != std::filesystem::recursive_directory_iterator() && out.size() < max && looked < 5000 &&
         entries < 50000;
       it.increment(ec)) {
    ++entries;
    const std::filesystem::directory_entry& e = *it;
    std::string name = e.path().filename().string();
    if (e.is_directory(ec)) {
      if (name.starts_with(".") || name == "node_modules" || name == "dist" || name == "build" || name == "out") {
        it.disable_recursion_pending();
      }
      continue;
    }
    std::string file = e.path().string();
    if (!e.is_regular_file(ec) || file == path || !IsScriptFile(file)) continue;
    ++looked;
    StatusOr<std::string> text = ReadRegularFile(file, 512 * 1024);
    if (!text.ok()) continue;
    std::string dir = e.path().parent_path().string();
    for (std::sregex_iterator m(text->begin(), text->end(), kSpecifier), end; m != end; ++m) {
      if (Names(dir, (*m)[1].str(), path)) {
        out.push_back(file);
        break;
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace odin

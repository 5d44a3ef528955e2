#include "gates/validation.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "tools/workspace_path.h"

namespace odin {

namespace {

std::tuple<uint32_t, std::string, std::string> Key(const Diag& d) { return {d.severity, d.code, d.message}; }

}  // namespace

std::vector<bool> MarkNew(const std::vector<Diag>& baseline, const std::vector<Diag>& after, const std::string& path,
                          const std::vector<MovedLine>& line_map) {
  std::vector<bool> is_new(after.size(), true);
  std::vector<bool> used(baseline.size(), false);
  auto moved = [&](const Diag& b) -> MovedLine {
    if (b.path != path || b.line == 0) return {true, b.line, b.line};  // in place
    if (b.line >= 1 && b.line <= line_map.size()) return line_map[b.line - 1];
    // Past the end (a diagnostic at EOF): it follows the end of the file.
    return {false, 1, UINT32_MAX};
  };
  // First, diagnostics on lines the edit kept; then those on rewritten lines.
  for (bool exact : {true, false}) {
    for (size_t a = 0; a < after.size(); ++a) {
      if (!is_new[a]) continue;
      for (size_t b = 0; b < baseline.size(); ++b) {
        if (used[b] || baseline[b].path != after[a].path || Key(baseline[b]) != Key(after[a])) continue;
        MovedLine m = moved(baseline[b]);
        bool match =
            exact ? m.kept && m.first == after[a].line : !m.kept && after[a].line >= m.first && after[a].line <= m.last;
        if (match) {
          used[b] = true;
          is_new[a] = false;
          break;
        }
      }
    }
  }
  return is_new;
}

std::string SummarizeDiagnostics(std::vector<Diag> d, const std::string& workspace, const SummaryLimits& limits) {
  if (limits.errors_only) {
    d.erase(std::remove_if(d.begin(), d.end(), [](const Diag& x) { return x.severity != 1; }), d.end());
  }
  auto order = [](const Diag& a, const Diag& b) {
    return std::tie(a.path, a.line, a.column, a.code, a.message, a.severity) <
           std::tie(b.path, b.line, b.column, b.code, b.message, b.severity);
  };
  std::sort(d.begin(), d.end(), order);
  d.erase(std::unique(d.begin(), d.end(),
                      [](const Diag& a, const Diag& b) {
                        return std::tie(a.path, a.line, a.column, a.code, a.message, a.severity) ==
                               std::tie(b.path, b.line, b.column, b.code, b.message, b.severity);
                      }),
          d.end());
  std::string out;
  size_t shown = 0;
  std::map<std::string, size_t> per_file;
  for (const Diag& x : d) {
    if (shown >= limits.total || per_file[x.path] >= limits.per_file) continue;
    ++per_file[x.path];
    ++shown;
    std::string message = x.message.substr(0, x.message.find('\n'));
    if (message.size() > 300) message = message.substr(0, 300) + "...";
    out += DisplayPath(x.path, workspace) + ":" + std::to_string(x.line) + ":" + std::to_string(x.column) + " ";
    if (!limits.errors_only) out += x.severity == 1 ? "error " : x.severity == 2 ? "warning " : "note ";
    if (!x.code.empty()) out += "[" + x.code + "] ";
    out += message + "\n";
  }
  if (d.size() > shown) out += "... and " + std::to_string(d.size() - shown) + " more\n";
  return out;
}

}  // namespace odin

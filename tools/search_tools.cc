#include "tools/search_tools.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/json_input.h"
#include "base/sha256.h"
#include "odin/v1/worker.pb.h"
#include "tools/file_tool_args.h"
#include "tools/tool_input.h"
#include "tools/text_file.h"
#include "tools/tool_result.h"
#include "tools/workspace_path.h"

namespace odin {
namespace {

using nlohmann::json;

constexpr size_t kMaxTextBytes = 100 * 1024;  // what the model sees of one search
constexpr size_t kMaxGlobResults = 1000;
constexpr size_t kMaxLsEntries = 1000;
constexpr size_t kMaxSortByMtime = 10000;

std::string Fail(v1::ToolResult* r, const Status& s) { return FailResult(r, v1::TOOL_STATUS_ERROR, s); }

void Ok(v1::ToolResult* r, json output) {
  r->set_status(v1::TOOL_STATUS_OK);
  r->set_exit_reason(v1::EXIT_REASON_NORMAL);
  r->set_output_json(output.dump(-1, ' ', false, json::error_handler_t::replace));
}

std::vector<std::string> SplitNul(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\0', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Newest first, as a user scanning for what they just touched expects.
void SortByMtime(std::vector<std::string>* paths) {
  if (paths->size() > kMaxSortByMtime) return;
  std::vector<std::pair<int64_t, std::string>> keyed;
  keyed.reserve(paths->size());
  for (std::string& p : *paths) {
    struct stat st;
    int64_t t = stat(p.c_str(), &st) == 0 ? st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec : 0;
    keyed.push_back({t, std::move(p)});
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  paths->clear();
  for (auto& [t, p] : keyed) paths->push_back(std::move(p));
}

// rg exits 1 for "nothing found" and 2 for errors (possibly with results).
// Returns an error iff there is nothing to show and rg complained.
Status RgStatus(int exit_code, const std::string& out, const std::string& err) {
  if (exit_code == 2 && out.empty()) {
    std::string first = err.substr(0, err.find('\n'));
    return Status::InvalidArgument("rg", first.empty() ? "ripgrep failed" : first);
  }
  return Status::OK();
}

// approved: a path outside the workspace the user approved for this call.
std::string SearchRoot(const std::string& given, const std::string& ws, const std::string& approved, Status* error) {
  if (given.empty()) return ws;
  StatusOr<std::string> p = ResolveToolPath(given, ws, approved);
  if (!p.ok()) {
    *error = p.status();
    return "";
  }
  if (!PathExists(*p)) {
    *error = Status::NotFound(given, IsInsideDir(*p, ws) ? "no such file or directory"
                                                         : "no such file or directory in the sandbox (it hides HOME, "
                                                           "/root and sandbox.hide)");
    return "";
  }
  return *p;
}

// ---- Grep ------------------------------------------------------------------

struct ShownLine {
  uint32_t number;
  bool match;
  std::string text;  // without the line terminator
};

// Parses rg --json into lines per file, in rg's order.
std::vector<std::pair<std::string, std::vector<ShownLine>>> ParseRgJson(const std::string& out, size_t* skipped) {
  std::vector<std::pair<std::string, std::vector<ShownLine>>> files;
  std::map<std::string, size_t> index;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    json msg = ParseJson(std::string_view(out).substr(start, end - start));
    start = end + 1;
    if (msg.is_discarded() || !msg.contains("type")) continue;
    std::string type = msg["type"].get<std::string>();
    if (type != "match" && type != "context") continue;
    const json& data = msg["data"];
    if (!data.contains("path") || !data["path"].contains("text") || !data["lines"].contains("text")) {
      ++*skipped;  // non-UTF-8 paths or lines come base64-encoded; not shown
      continue;
    }
    std::string path = data["path"]["text"].get<std::string>();
    auto [it, fresh] = index.emplace(path, files.size());
    if (fresh) files.push_back({path, {}});
    std::vector<ShownLine>& lines = files[it->second].second;
    std::string text = data["lines"]["text"].get<std::string>();
    uint32_t number = data["line_number"].is_number() ? data["line_number"].get<uint32_t>() : 0;
    // A multiline match spans several lines.
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      size_t stop = nl == std::string::npos ? text.size() : nl;
      std::string line = text.substr(pos, stop - pos);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (lines.empty() || lines.back().number < number) {
        lines.push_back({number, type == "match", std::move(line)});
      } else if (lines.back().number == number && type == "match") {
        lines.back().match = true;
      }
      ++number;
      pos = nl == std::string::npos ? text.size() : nl + 1;
    }
  }
  return files;
}

// Records the lines of one file the model was shown. The file is read again
// here, after rg: a line counts as read only if its bytes now are the ones rg
// showed, so a change in between cannot pass unseen bytes off as read.
void AddShownFile(const std::string& path, const std::vector<const ShownLine*>& shown, v1::ToolResult* r) {
  struct stat st;
  if (shown.empty() || stat(path.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_size) > kMaxFileBytes) return;
  StatusOr<std::string> content = ReadFileToString(path);
  if (!content.ok()) return;
  LineIndex index(*content);
  v1::FileSnapshot* snap = r->add_files_read();
  snap->set_path(path);
  snap->set_sha256(Sha256Hex(*content));
  snap->set_size_bytes(content->size());
  snap->set_mtime_ns(st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec);
  snap->set_total_lines(index.lines());
  // Runs of consecutive shown lines become segments.
  std::vector<std::pair<uint32_t, uint32_t>> runs;
  for (const ShownLine* line : shown) {
    uint32_t n = line->number;
    if (n == 0 || n > index.lines()) continue;
    std::string_view now(content->data() + index.Start(n), index.Start(n + 1) - index.Start(n));
    while (!now.empty() && (now.back() == '\n' || now.back() == '\r')) now.remove_suffix(1);
    if (now != line->text) continue;
    if (!runs.empty() && runs.back().second + 1 >= n) {
      runs.back().second = std::max(runs.back().second, n);
    } else {
      runs.push_back({n, n});
    }
  }
  if (runs.empty()) {
    r->mutable_files_read()->RemoveLast();
    return;
  }
  if (runs.size() == 1 && runs[0].first == 1 && runs[0].second == index.lines()) {
    snap->set_full(true);
    snap->set_content(*content);
    return;
  }
  for (auto [a, b] : runs) {
    v1::Segment* seg = snap->add_segments();
    seg->set_start_line(a);
    seg->set_end_line(b);
    seg->set_content(content->substr(index.Start(a), index.Start(b + 1) - index.Start(a)));
  }
}

// Whether the request's Read deny patterns cover path.
bool Hidden(const v1::ToolRequest& req, const std::string& path) {
  for (const std::string& pattern : req.unreadable()) {
    if (PathPatternCovers(pattern, path)) return true;
  }
  return false;
}

std::vector<std::string> Shown(const v1::ToolRequest& req, std::vector<std::string> paths) {
  std::erase_if(paths, [&req](const std::string& p) { return Hidden(req, p); });
  return paths;
}

std::string FinishGrep(const v1::ToolRequest& req, const GrepArgs& a, const std::string& ws, const std::string& out,
                       bool truncated, v1::ToolResult* r) {
  std::string text;
  json summary = {{"mode", a.output_mode}};
  if (a.output_mode == "files_with_matches") {
    std::vector<std::string> paths = Shown(req, SplitNul(out));
    SortByMtime(&paths);
    size_t total = paths.size();
    if (a.head_limit != 0 && paths.size() > a.head_limit) paths.resize(a.head_limit);
    text =
        total == 0 ? "No files found\n" : "Found " + std::to_string(total) + " file" + (total == 1 ? "" : "s") + "\n";
    for (const std::string& p : paths) {
      if (text.size() > kMaxTextBytes) {
        text += "(output cut at " + std::to_string(kMaxTextBytes) + " bytes; narrow the search)\n";
        break;
      }
      text += DisplayPath(p, ws) + "\n";
    }
    if (paths.size() < total) text += "(showing the first " + std::to_string(paths.size()) + ")\n";
    summary["files"] = total;
  } else if (a.output_mode == "count") {
    std::vector<std::string> parts = SplitNul(out);
    uint64_t matches = 0;
    size_t files = 0;
    // "path\0N\n" pairs: after the first, each part is "N\npath".
    std::string path = parts.empty() ? "" : parts[0];
    for (size_t i = 1; i < parts.size(); ++i) {
      size_t nl = parts[i].find('\n');
      uint64_t n = std::strtoull(parts[i].substr(0, nl).c_str(), nullptr, 10);
      if (!Hidden(req, path)) {
        if (a.head_limit == 0 || files < a.head_limit) text += DisplayPath(path, ws) + ":" + std::to_string(n) + "\n";
        matches += n;
        ++files;
      }
      path = nl == std::string::npos ? "" : parts[i].substr(nl + 1);
    }
    text += "Found " + std::to_string(matches) + " matching line" + (matches == 1 ? "" : "s") + " in " +
            std::to_string(files) + " file" + (files == 1 ? "" : "s") + "\n";
    summary["files"] = files;
    summary["matching_lines"] = matches;
  } else {
    size_t skipped = 0;
    auto files = ParseRgJson(out, &skipped);
    std::erase_if(files, [&req](const auto& file) { return Hidden(req, file.first); });
    bool context = a.after > 0 || a.before > 0 || a.context > 0;
    uint32_t first = a.offset, last = a.limit != 0 ? (a.offset == 0 ? 1 : a.offset) + a.limit - 1 : UINT32_MAX;
    if (first == 0) first = 1;
    size_t shown = 0, match_lines = 0;
    bool cut = false;
    for (auto& [path, lines] : files) {
      std::string display = DisplayPath(path, ws);
      std::vector<const ShownLine*> numbers;
      uint32_t previous = 0;
      for (const ShownLine& line : lines) {
        if (line.number < first || line.number > last) continue;
        if ((a.head_limit != 0 && shown >= a.head_limit) || text.size() > kMaxTextBytes) {
          cut = true;
          break;
        }
        if (context && !text.empty() && (previous == 0 || line.number != previous + 1)) text += "--\n";
        text += display;
        text += line.match ? ':' : '-';
        if (a.line_numbers) {
          text += std::to_string(line.number);
          text += line.match ? ':' : '-';
        }
        text += ToDisplayText(line.text);
        text += '\n';
        numbers.push_back(&line);
        previous = line.number;
        ++shown;
        match_lines += line.match;
      }
      AddShownFile(path, numbers, r);
      if (cut) break;
    }
    if (shown == 0) text = "No matches found\n";
    if (cut) text += "(output cut after " + std::to_string(shown) + " lines; narrow the search or use head_limit)\n";
    if (skipped > 0) {
      text += "(" + std::to_string(skipped) + " matching lines not shown: their bytes are not UTF-8; Read the file)\n";
    }
    summary["lines_shown"] = shown;
    summary["matching_lines_shown"] = match_lines;
    summary["files"] = files.size();
  }
  if (truncated) text += "(ripgrep's output was cut at " + std::to_string(kMaxRgOutputBytes) + " bytes)\n";
  Ok(r, summary);
  return text;
}

// ---- Glob and LS -----------------------------------------------------------

std::string FinishGlob(const v1::ToolRequest& req, const std::string& ws, const std::string& out, v1::ToolResult* r) {
  std::vector<std::string> paths = Shown(req, SplitNul(out));
  SortByMtime(&paths);
  size_t total = paths.size();
  if (paths.size() > kMaxGlobResults) paths.resize(kMaxGlobResults);
  std::string text = total == 0 ? "No files found\n" : "";
  for (const std::string& p : paths) text += DisplayPath(p, ws) + "\n";
  if (paths.size() < total) {
    text += "(" + std::to_string(total) + " files match; showing the " + std::to_string(paths.size()) +
            " most recently modified. Use a more specific pattern.)\n";
  }
  Ok(r, {{"files", total}});
  return text;
}

std::string FinishLs(const v1::ToolRequest& req, const std::string& root, const std::string& ws, const std::string& out,
                     v1::ToolResult* r) {
  std::vector<std::string> files = Shown(req, SplitNul(out));
  // Relative paths, sorted, so a directory's entries follow it.
  std::vector<std::string> rel;
  for (const std::string& f : files) {
    if (IsInsideDir(f, root) && f != root) rel.push_back(f.substr(root == "/" ? 1 : root.size() + 1));
  }
  std::sort(rel.begin(), rel.end());
  std::string text = "- " + DisplayPath(root, ws) + "/\n";
  size_t entries = 0;
  std::vector<std::string> open_dirs;  // the directory path we are inside, by depth
  for (const std::string& path : rel) {
    if (entries >= kMaxLsEntries) break;
    // Walk the components: print directories not printed yet.
    size_t depth = 0, start = 0;
    for (;;) {
      size_t slash = path.find('/', start);
      if (slash == std::string::npos) break;
      std::string dir = path.substr(0, slash);
      if (depth >= open_dirs.size() || open_dirs[depth] != dir) {
        open_dirs.resize(depth);
        open_dirs.push_back(dir);
        text += std::string(2 * (depth + 1), ' ') + "- " + path.substr(start, slash - start) + "/\n";
        ++entries;
      }
      ++depth;
      start = slash + 1;
    }
    open_dirs.resize(depth);
    text += std::string(2 * (depth + 1), ' ') + "- " + path.substr(start) + "\n";
    ++entries;
  }
  if (entries >= kMaxLsEntries) {
    text += "(listing cut at " + std::to_string(kMaxLsEntries) + " entries; list a subdirectory or use Glob)\n";
  }
  if (rel.empty()) text += "  (no files, or all of them ignored)\n";
  Ok(r, {{"files", rel.size()}});
  return text;
}

}  // namespace

StatusOr<std::vector<std::string>> PlanSearch(const v1::ToolRequest& req, const std::string& ws,
                                              const std::string& rg) {
  // --no-config: a RIPGREP_CONFIG_PATH must not change what the tool does
  // (say, add --follow and lead the search out of the workspace).
  std::vector<std::string> argv = {rg, "--no-config"};
  Status error;
  const v1::ToolInput& in = req.input();
  if (in.has_grep()) {
    GrepArgs a = ArgsOf(in.grep());
    std::string root = SearchRoot(a.path, ws, req.approved_outside_path(), &error);
    RETURN_IF_ERROR(error);
    if ((a.offset != 0 || a.limit != 0) && IsDirectory(root)) {
      return Status::InvalidArgument(kGrepTool, "offset and limit need 'path' to be a single file");
    }
    if (a.output_mode == "content") {
      argv.push_back("--json");
      if (a.context >= 0) argv.insert(argv.end(), {"-C", std::to_string(a.context)});
      if (a.after >= 0) argv.insert(argv.end(), {"-A", std::to_string(a.after)});
      if (a.before >= 0) argv.insert(argv.end(), {"-B", std::to_string(a.before)});
    } else if (a.output_mode == "count") {
      argv.insert(argv.end(), {"--count", "--null", "--with-filename"});
    } else {
      argv.insert(argv.end(), {"--files-with-matches", "--null"});
    }
    if (a.ignore_case) argv.push_back("-i");
    if (a.multiline) argv.insert(argv.end(), {"-U", "--multiline-dotall"});
    if (!a.glob.empty()) argv.insert(argv.end(), {"--glob", a.glob});
    if (!a.type.empty()) argv.insert(argv.end(), {"--type", a.type});
    argv.insert(argv.end(), {"-e", a.pattern, "--", root});
    return argv;
  }
  if (in.has_glob()) {
    GlobArgs a = ArgsOf(in.glob());
    std::string root = SearchRoot(a.path, ws, req.approved_outside_path(), &error);
    RETURN_IF_ERROR(error);
    if (!IsDirectory(root)) return Status::InvalidArgument(kGlobTool, a.path + " is not a directory");
    argv.insert(argv.end(), {"--files", "--null", "--glob", a.pattern, "--", root});
    return argv;
  }
  if (!in.has_ls()) return MissingInput(req.tool());
  LsArgs a = ArgsOf(in.ls());
  std::string root = SearchRoot(a.path, ws, req.approved_outside_path(), &error);
  RETURN_IF_ERROR(error);
  if (!IsDirectory(root)) return Status::InvalidArgument(kLsTool, a.path + " is not a directory");
  argv.insert(argv.end(), {"--files", "--null"});
  for (const std::string& ignore : a.ignore) argv.insert(argv.end(), {"--glob", "!" + ignore});
  argv.insert(argv.end(), {"--", root});
  return argv;
}

std::string FinishSearch(const v1::ToolRequest& req, const std::string& ws, const std::string& out,
                         const std::string& err, int exit_code, bool truncated, v1::ToolResult* r) {
  r->set_execution_id(req.execution_id());
  Status s = RgStatus(exit_code, out, err);
  if (!s.ok()) return Fail(r, s.WithContext(req.tool()));
  const v1::ToolInput& in = req.input();
  if (in.has_grep()) return FinishGrep(req, ArgsOf(in.grep()), ws, out, truncated, r);
  if (in.has_glob()) return FinishGlob(req, ws, out, r);
  Status error;
  std::string root = SearchRoot(in.ls().path(), ws, req.approved_outside_path(), &error);
  return FinishLs(req, root, ws, out, r);
}

}  // namespace odin

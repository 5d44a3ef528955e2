#include "gates/read_only_commands.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace odin {

namespace {

// Programs and builtins that write nothing, whatever their arguments (a
// date -s or a chmod-less stat cannot change a file).
const char* const kReaders[] = {
    "cat",    "head",  "tail",   "wc",       "ls",      "pwd",      "echo",      "printf",  "true",      "false",
    "test",   "[",     "grep",   "egrep",    "fgrep",   "stat",     "du",        "df",      "which",     "type",
    "whoami", "id",    "uname",  "basename", "dirname", "realpath", "readlink",  "nl",      "cut",       "tr",
    "diff",   "cmp",   "comm",   "column",   "seq",     "printenv", "sha256sum", "sha1sum", "sha512sum", "md5sum",
    "cksum",  "b2sum", "od",     "hexdump",  "strings", "date",     "sleep",     "cd",      "pushd",     "popd",
    ":",      "set",   "export", "unset",    "jq",      "rg",       "find",      "fd",      "fdfind",    "sort",
    "uniq",   "tree",  "file",   "sed",      "git",
};

// git's subcommands that only read (status's index refresh is skipped
// where the index cannot be written).
const char* const kGitReaders[] = {
    "status",  "diff",     "log",      "show",     "ls-files",   "rev-parse", "blame",        "describe", "cat-file",
    "ls-tree", "shortlog", "rev-list", "show-ref", "merge-base", "name-rev",  "for-each-ref", "grep",     "branch",
};

// `git branch` lists with these alone.
const char* const kGitBranchListing[] = {"--list",     "-l",      "-a",         "--all",     "-r",
                                         "--remotes",  "-v",      "-vv",        "--verbose", "--show-current",
                                         "--no-color", "--color", "--no-column"};

template <size_t N>
bool In(const char* const (&list)[N], const std::string& word) {
  return std::any_of(std::begin(list), std::end(list), [&](const char* w) { return word == w; });
}

// A cluster of short options (-rno) that holds letter.
bool ShortCluster(const std::string& w, char letter) {
  return w.size() > 1 && w[0] == '-' && w[1] != '-' && w.find(letter) != std::string::npos;
}

// Whether w may be the long option `option` ("--output"): getopt_long and
// git take any prefix of one (--out, --o=FILE), so any prefix counts.
bool LongOption(const std::string& w, const char* option) {
  if (w.size() < 3 || w[0] != '-' || w[1] != '-') return false;
  size_t eq = w.find('=');
  std::string given = w.substr(0, eq);
  return std::string(option).compare(0, given.size(), given) == 0;
}

// Whether any of args may be one of the long options.
bool AnyLongOption(const std::vector<std::string>& args, std::initializer_list<const char*> options) {
  return std::any_of(args.begin(), args.end(), [&](const std::string& w) {
    return std::any_of(options.begin(), options.end(), [&](const char* o) { return LongOption(w, o); });
  });
}

// A sed script of line addresses and p, d, q, = commands (`1,200p`,
// `$p`, `10q`, `5,10d;20p`): nothing that writes (w, W), runs (e) or
// reads another file (r, R).
bool PrintingSedScript(const std::string& script) {
  size_t i = 0, n = script.size();
  auto spaces = [&] {
    while (i < n && (script[i] == ' ' || script[i] == '\t' || script[i] == '\n')) ++i;
  };
  auto line = [&] {
    if (i < n && script[i] == '$') return ++i, true;
    size_t from = i;
    while (i < n && script[i] >= '0' && script[i] <= '9') ++i;
    return i > from;
  };
  bool any = false;
  for (;;) {
    spaces();
    if (i == n) return any;
    if (line()) {
      spaces();
      if (i < n && script[i] == ',') {
        ++i;
        spaces();
        if (!line()) return false;
        spaces();
      }
    }
    if (i == n || strchr("pdq=", script[i]) == nullptr) return false;
    ++i;
    any = true;
    spaces();
    if (i < n && script[i] != ';') return false;
    if (i < n) ++i;
  }
}

// Whether one simple command only reads.
bool PartOnlyReads(const CommandPart& part) {
  if (part.dynamic || part.input_arguments || part.programs.size() != 1 || part.words.empty()) return false;
  const std::string& name = part.words[0];
  // By its bare name: ./cat is the workspace's own program.
  if (name.find('/') != std::string::npos || !In(kReaders, name)) return false;
  const std::vector<std::string> args(part.words.begin() + 1, part.words.end());
  bool all_known = std::all_of(part.known.begin(), part.known.end(), [](bool k) { return k; });
  auto any = [&](auto&& pred) { return std::any_of(args.begin(), args.end(), pred); };
  if (name == "sort") {
    return all_known && !any([](const std::string& w) { return ShortCluster(w, 'o') || ShortCluster(w, 'T'); }) &&
           !AnyLongOption(args, {"--output", "--temporary-directory", "--compress-program"});
  }
  if (name == "uniq") {  // uniq IN OUT writes OUT ("-" is standard input, an operand too)
    return all_known && std::count_if(args.begin(), args.end(),
                                      [](const std::string& w) { return w.empty() || w[0] != '-' || w == "-"; }) <= 1;
  }
  if (name == "find") {
    return all_known && !any([](const std::string& w) {
             return w == "-delete" || w == "-exec" || w == "-execdir" || w == "-ok" || w == "-okdir" ||
                    w == "-fprint" || w == "-fprint0" || w == "-fprintf" || w == "-fls";
           });
  }
  if (name == "fd" || name == "fdfind") {
    return all_known && !any([](const std::string& w) { return ShortCluster(w, 'x') || ShortCluster(w, 'X'); }) &&
           !AnyLongOption(args, {"--exec", "--exec-batch"});
  }
  // --pre and --hostname-bin run a program.
  if (name == "rg") return all_known && !AnyLongOption(args, {"--pre", "--pre-glob", "--hostname-bin"});
  // -o FILE writes the listing; -R (with -H) writes 00Tree.html files.
  if (name == "tree") {
    return all_known && !any([](const std::string& w) { return ShortCluster(w, 'o') || ShortCluster(w, 'R'); });
  }
  if (name == "file") {
    return all_known && !any([](const std::string& w) { return ShortCluster(w, 'C'); }) &&
           !AnyLongOption(args, {"--compile"});
  }
  if (name == "sed") {
    if (!all_known || part.inline_code.empty()) return false;
    if (any([](const std::string& w) { return ShortCluster(w, 'i') || ShortCluster(w, 'f'); }) ||
        AnyLongOption(args, {"--in-place", "--file"})) {
      return false;
    }
    return std::all_of(part.inline_code.begin(), part.inline_code.end(), PrintingSedScript);
  }
  if (name == "git") {
    if (!all_known || !part.git_config.empty() || args.empty() || !In(kGitReaders, args[0])) return false;
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (AnyLongOption(rest, {"--output"})) return false;
    if (args[0] == "grep") {  // -O runs a pager (any program) on the files found
      return std::none_of(rest.begin(), rest.end(), [](const std::string& w) { return ShortCluster(w, 'O'); }) &&
             !AnyLongOption(rest, {"--open-files-in-pager"});
    }
    if (args[0] == "branch") {
      return std::all_of(rest.begin(), rest.end(), [](const std::string& w) { return In(kGitBranchListing, w); });
    }
    return true;
  }
  return true;
}

}  // namespace

bool CommandOnlyReads(const ParsedCommand& parsed) {
  if (parsed.unreadable != Unreadable::kNo || !parsed.complete || parsed.redirect_writes || parsed.parts.empty()) {
    return false;
  }
  // Quoted text that may run later (arithmetic on 'a[$(cmd)]').
  if (!parsed.literals.empty()) return false;
  // Which program a name runs.
  for (const Assignment& a : parsed.assignments) {
    if (a.name == "PATH") return false;
  }
  return std::all_of(parsed.parts.begin(), parsed.parts.end(), PartOnlyReads);
}

}  // namespace odin

#include "gates/command_wrappers.h"

// Long file: a table of the programs that run other programs (env, nice,
// timeout, xargs, find -exec, sudo, bash -c, git's global options, ...) and
// how each one's options are skipped to reach the command it runs. The table
// is data; splitting it would not make any entry easier to find.

#include <cctype>
#include <algorithm>
#include <cstring>

namespace odin {

namespace {

// What follows a wrapper's options.
enum class Then {
  kArgs,    // the next program and its arguments
  kEnv,     // NAME=VALUE words, then the program; -S STRING is split into words
  kJoined,  // watch: the rest joined by spaces is a command line for sh -c (unless -x)
  kSu,      // su, runuser: -c's value is a command line; runuser -u runs the rest;
            // otherwise a shell that reads its input
  kScript,  // script: -c's value is a command line; otherwise a shell reading its input
  kCoproc,  // coproc [NAME] command
};

struct Wrapper {
  const char* names;     // base names, space separated
  const char* valued;    // options that take a value, attached or the next word
  const char* optional;  // options whose value can only be attached (-i[R], --mount[=FILE])
  const char* command;   // options whose value is a command line
  int positionals;       // operands before the program (timeout's duration, flock's file)
  Then then;
};

// Wrappers run the program that follows their options (getopt with "+":
// options end at the first operand).
const Wrapper kWrappers[] = {
    {"env", "-u -C -S --unset --chdir --split-string", "--block-signal --default-signal --ignore-signal", "", 0,
     Then::kEnv},
    {"timeout", "-s -k --signal --kill-after", "", "", 1, Then::kArgs},
    {"nice", "-n --adjustment", "", "", 0, Then::kArgs},
    {"nohup setsid unbuffer catchsegv nocache eatmydata chronic ifne torsocks tsocks linux32 linux64 ccache distcc "
     "icecc builtin",
     "", "", "", 0, Then::kArgs},
    {"xargs",
     "-I -n -P -L -d -a -E -s --max-args --max-procs --max-lines --delimiter --arg-file --process-slot-var "
     "--max-chars",
     "-i -e -l --replace --eof", "", 0, Then::kArgs},
    {"sudo",
     "-u -g -C -h -p -r -t -U -D -R -T --user --group --close-from --host --prompt --role --type --other-user "
     "--chdir --chroot --command-timeout",
     "--preserve-env", "", 0, Then::kEnv},
    {"doas", "-u -C -a", "", "", 0, Then::kArgs},
    {"pkexec", "--user", "", "", 0, Then::kArgs},
    {"command", "", "", "", 0, Then::kArgs},
    {"exec", "-a", "", "", 0, Then::kArgs},
    {"time", "-o -f --output --format", "", "", 0, Then::kArgs},
    {"stdbuf", "-i -o -e --input --output --error", "", "", 0, Then::kArgs},
    {"ionice", "-c -n -p -P -u --class --classdata --pid --pgid --uid", "", "", 0, Then::kArgs},
    {"chrt", "-T -P -D --sched-runtime --sched-period --sched-deadline", "", "", 1, Then::kArgs},
    {"taskset", "", "", "", 1, Then::kArgs},
    {"busybox toybox", "", "", "", 0, Then::kArgs},
    {"parallel",
     "-j -P -S -a -d -E -I -N -n -L -C --jobs --sshlogin --sshloginfile --arg-file --delimiter --colsep "
     "--max-args --max-replace-args --timeout --joblog --results --tmpdir --workdir --env --retries --delay "
     "--memfree --load --nice --basefile --return",
     "", "", 0, Then::kArgs},
    {"flock", "-w -E --timeout --conflict-exit-code", "", "-c --command", 1, Then::kArgs},
    {"unshare",
     "-S -G -R -w --setuid --setgid --root --wd --propagation --setgroups --map-user --map-group --map-users "
     "--map-groups",
     "--mount --uts --ipc --net --pid --user --cgroup --time --kill-child --mount-proc --monotonic --boottime", "", 0,
     Then::kArgs},
    {"prlimit", "-p -o --pid --output",
     "-c -d -e -f -i -l -m -n -q -r -s -t -u -v -x -y --core --data --nice --fsize --sigpending --memlock --rss "
     "--nofile --msgqueue --rtprio --stack --cpu --nproc --as --locks --rttime",
     "", 0, Then::kArgs},
    {"nsenter", "-t -S -G --target --setuid --setgid --env",
     "-m -u -i -n -p -C -U -T -r -w --mount --uts --ipc --net --pid --cgroup --user --time --root --wd", "", 0,
     Then::kArgs},
    {"setpriv",
     "--reuid --regid --ruid --rgid --euid --egid --groups --inh-caps --ambient-caps --bounding-set --securebits "
     "--pdeathsig --selinux-label --apparmor-profile --landlock-access --landlock-rule",
     "", "", 0, Then::kArgs},
    {"fakeroot", "-l -i -s -b --lib --faked", "", "", 0, Then::kArgs},
    {"valgrind", "", "", "", 0, Then::kArgs},
    {"strace", "-e -o -p -s -u -E -a -b -I -O -P -S -X -U --output --attach --string-limit --user --env", "", "", 0,
     Then::kArgs},
    {"ltrace", "-e -o -p -s -u -a -n -A -D -F -l -x --output --library", "", "", 0, Then::kArgs},
    {"setarch", "", "", "", 1, Then::kArgs},
    {"chroot", "--userspec --groups", "", "", 1, Then::kArgs},
    {"numactl", "-i -m -N -C -p --interleave --membind --cpunodebind --physcpubind --preferred --preferred-many", "",
     "", 0, Then::kArgs},
    {"proxychains proxychains4", "-f", "", "", 0, Then::kArgs},
    {"faketime", "-f -m", "", "", 1, Then::kArgs},
    {"sg", "", "", "-c", 1, Then::kArgs},
    {"systemd-run",
     "-u -p -E -M -H --unit --property --setenv --machine --host --slice --description --uid --gid --nice "
     "--working-directory --on-active --on-calendar",
     "", "", 0, Then::kArgs},
    {"runuser", "-u -g -G -s -w --user --group --supp-group --shell --whitelist-environment", "",
     "-c --command --session-command", 0, Then::kSu},
    {"su", "-g -G -s -w --group --supp-group --shell --whitelist-environment", "", "-c --command --session-command", 0,
     Then::kSu},
    {"script", "-E -I -O -B -T -m -o --echo --log-in --log-out --log-io --log-timing --logging-format --output-limit",
     "-t --timing", "-c --command", 0, Then::kScript},
    {"watch", "-n -q --interval --equexit", "-d --differences", "", 0, Then::kJoined},
    {"coproc", "", "", "", 0, Then::kCoproc},
};

// Interpreters whose inline code the rules look into.
struct Interpreter {
  const char* names;   // base names without a version suffix (python3.11 is python)
  const char* code;    // options whose value is code (exact words, e.g. gdb's -ex)
  const char* valued;  // other options that take a value
  bool program_first;  // awk, sed: the first operand is the program, unless an option gave it
};

const Interpreter kInterpreters[] = {
    {"python pypy", "-c", "-m -W -X -Q", false},
    {"perl", "-e -E", "-I -M -m", false},
    {"ruby", "-e", "-I -r -C -E", false},
    {"node nodejs bun", "-e -p --eval --print", "-r --require --import --loader", false},
    {"php", "-r -B -R -E", "-c -d -z", false},
    {"lua luajit", "-e", "-l", false},
    {"Rscript julia osascript", "-e -E", "", false},
    {"awk gawk mawk nawk", "-e --source", "-F -v -f --field-separator --assign --file", true},
    {"sed gsed", "-e --expression", "-f -l --file --line-length", true},
    {"gdb", "-ex -iex --eval-command --init-eval-command -eval-command", "", false},
    {"vim vi nvim ex view gvim vimdiff", "-c --cmd", "", false},
    {"emacs", "--eval -eval", "", false},
    {"expect", "-c", "-f", false},
};

const char* const kShells[] = {"bash", "sh",  "dash", "zsh",   "ksh",   "mksh", "yash",  "ash",  "posh",
                               "fish", "csh", "tcsh", "rbash", "ksh93", "oksh", "loksh", "pdksh"};

// Whether word is one of list's space-separated entries.
bool InList(const char* list, const std::string& word) {
  if (word.empty()) return false;
  for (const char* p = list; (p = strstr(p, word.c_str())) != nullptr; p += word.size()) {
    bool starts = p == list || p[-1] == ' ';
    bool ends = p[word.size()] == ' ' || p[word.size()] == '\0';
    if (starts && ends) return true;
  }
  return false;
}

bool IsName(const std::string& s) {
  if (s.empty() || !(isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// NAME=VALUE (as env and sudo read their arguments).
bool IsAssignmentWord(const std::string& w) {
  size_t eq = w.find('=');
  return eq != std::string::npos && eq > 0 && IsName(w.substr(0, eq));
}

std::string Quoted(const std::string& w) {
  std::string q = "'";
  for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::vector<std::string> Tail(const std::vector<std::string>& words, size_t from) {
  return std::vector<std::string>(words.begin() + static_cast<std::ptrdiff_t>(std::min(from, words.size())),
                                  words.end());
}

// A long option as getopt_long reads it: an unambiguous prefix of a known one.
std::string ResolveLong(const std::string& given, const std::vector<const char*>& lists) {
  std::string found;
  int matches = 0;
  for (const char* list : lists) {
    std::string all = list;
    size_t pos = 0;
    while (pos < all.size()) {
      size_t end = all.find(' ', pos);
      if (end == std::string::npos) end = all.size();
      std::string opt = all.substr(pos, end - pos);
      pos = end + 1;
      if (opt.rfind("--", 0) != 0) continue;
      if (opt == given) return opt;
      if (opt.compare(0, given.size(), given) == 0) {
        if (opt != found) ++matches;
        found = opt;
      }
    }
  }
  return matches == 1 ? found : given;
}

// The options of a program (a wrapper or an interpreter), read like getopt
// with "+" reads them.
struct Options {
  const char* valued = "";
  const char* optional = "";
  const char* special = "";  // options whose value the caller wants (a command line, code)
  bool env_words = false;    // NAME=VALUE words are options too (env, sudo)
};

struct Scanned {
  size_t rest = 0;                                     // the first word after the options
  std::vector<std::string> seen;                       // options seen: "-x" or "--long"
  std::vector<std::pair<std::string, bool>> specials;  // the special options' values, and whether known
  bool unknown_option = false;                         // a computed word where an option may be
};

Scanned ScanOptions(const Options& o, const std::vector<std::string>& words, const std::vector<bool>& known,
                    size_t from, ProgramChain* out) {
  Scanned s;
  size_t i = from;
  auto value_of_next = [&](std::string* value, bool* value_known) {
    if (i + 1 < words.size()) {
      ++i;
      *value = words[i];
      *value_known = known[i];
      out->operands.push_back(words[i]);
    }
  };
  while (i < words.size()) {
    const std::string& w = words[i];
    if (w == "--") {
      out->operands.push_back(w);
      ++i;
      break;
    }
    if (o.env_words && known[i] && IsAssignmentWord(w)) {
      out->operands.push_back(w);
      out->environment.push_back(w);
      ++i;
      continue;
    }
    if (w.size() < 2 || w[0] != '-') {
      if (w == "-") {  // su -, env -: an option
        out->operands.push_back(w);
        ++i;
        continue;
      }
      break;
    }
    if (!known[i]) {
      s.unknown_option = true;
      break;
    }
    out->operands.push_back(w);
    if (InList(o.special, w) && w.rfind("--", 0) != 0 && w.size() > 2) {
      // A single-dash long option (gdb -ex): its value is the next word.
      std::string value;
      bool value_known = true;
      value_of_next(&value, &value_known);
      s.seen.push_back(w);
      s.specials.push_back({value, value_known});
      ++i;
      continue;
    }
    if (w.rfind("--", 0) == 0) {
      size_t eq = w.find('=');
      std::string name = ResolveLong(w.substr(0, eq), {o.valued, o.optional, o.special});
      s.seen.push_back(name);
      bool special = InList(o.special, name), valued = InList(o.valued, name);
      std::string value;
      bool value_known = true;
      if (eq != std::string::npos) {
        value = w.substr(eq + 1);
      } else if (special || valued) {
        value_of_next(&value, &value_known);
      }
      if (special) s.specials.push_back({value, value_known});
      ++i;
      continue;
    }
    // A cluster of short options: the first that takes a value takes the
    // rest of the word, or the next word.
    for (size_t k = 1; k < w.size(); ++k) {
      std::string opt = std::string("-") + w[k];
      s.seen.push_back(opt);
      bool special = InList(o.special, opt), valued = InList(o.valued, opt);
      if (special || valued) {
        std::string value = w.substr(k + 1);
        bool value_known = true;
        if (value.empty()) value_of_next(&value, &value_known);
        if (special) s.specials.push_back({value, value_known});
        break;
      }
      if (InList(o.optional, opt)) break;
    }
    ++i;
  }
  s.rest = i;
  return s;
}

bool Seen(const Scanned& s, const char* options) {
  for (const std::string& o : s.seen) {
    if (InList(options, o)) return true;
  }
  return false;
}

void AddCommandLine(const std::string& line, bool known, const std::string& what, ProgramChain* out) {
  if (!known) {
    out->dynamic = what + " is given a command line computed when it runs";
    return;
  }
  out->command_lines.push_back(line);
}

void AddOperands(const std::vector<std::string>& words, size_t from, ProgramChain* out) {
  for (size_t i = from; i < words.size(); ++i) out->operands.push_back(words[i]);
}

std::string VersionlessName(const std::string& base) {
  size_t end = base.size();
  while (end > 0 && (isdigit(static_cast<unsigned char>(base[end - 1])) || base[end - 1] == '.')) --end;
  return base.substr(0, end);
}

// A shell: its -c string is a command line; without one it runs a script
// file, or the commands on its input.
void ReadShell(const std::vector<std::string>& words, const std::vector<bool>& known, size_t start, ProgramChain* out) {
  const std::string& name = words[start];
  bool dash_c = false, reads_input = false;
  size_t i = start + 1;
  while (i < words.size()) {
    const std::string& w = words[i];
    if (!known[i]) break;
    if (w == "--" || w == "-") {
      ++i;
      break;
    }
    if (w.size() < 2 || (w[0] != '-' && w[0] != '+')) break;
    if (w.rfind("--", 0) == 0) {
      if (w == "--rcfile" || w == "--init-file") ++i;
      if (w == "--command") dash_c = true;  // fish
      if (w.rfind("--command=", 0) == 0) AddCommandLine(w.substr(10), true, name, out);
      ++i;
      continue;
    }
    for (size_t k = 1; k < w.size(); ++k) {
      if (w[k] == 'c') dash_c = true;
      if (w[k] == 's' || w[k] == 'i') reads_input = true;
      if (w[k] == 'o' || w[k] == 'O') {
        if (k + 1 == w.size()) ++i;  // -o OPTION
        break;
      }
    }
    ++i;
  }
  AddOperands(words, start + 1, out);
  if (dash_c) {
    if (i < words.size()) {
      AddCommandLine(words[i], known[i], name, out);
    } else if (out->input_arguments) {
      out->dynamic = "its command line comes from its input";  // echo 'rm x' | xargs sh -c
    }
    return;
  }
  if (!out->command_lines.empty()) return;
  if (reads_input || i >= words.size()) {
    out->dynamic = "it runs the commands on its input";
    return;
  }
  const std::string& script = words[i];
  if (!known[i] || script.rfind("/dev/", 0) == 0 || script.rfind("/proc/", 0) == 0) {
    out->dynamic = "it runs a script that exists only when it runs";
  }
}

// git [global options] SUBCOMMAND ...: the global options are skipped, what
// -c and --config-env set is kept.
std::vector<std::string> ReadGit(const std::vector<std::string>& words, const std::vector<bool>& known, size_t start,
                                 ProgramChain* out) {
  std::string base = ProgramBaseName(words[start]);
  if (base != "git") {  // git-push: what git itself runs for `git push`
    std::vector<std::string> prog = {"git", base.substr(4)};
    for (size_t i = start + 1; i < words.size(); ++i) prog.push_back(words[i]);
    AddOperands(words, start + 1, out);
    return prog;
  }
  auto setting = [out](const std::string& text, bool text_known, bool from_env) {
    GitConfigSetting s;
    size_t eq = text.find('=');
    s.key = text.substr(0, eq);
    s.value = eq == std::string::npos ? (from_env ? "" : "true") : text.substr(eq + 1);
    s.from_env = from_env || !text_known;
    if (from_env) s.value.clear();
    out->git_config.push_back(s);
  };
  size_t i = start + 1;
  while (i < words.size()) {
    const std::string& w = words[i];
    if (!known[i]) {
      // git $OPTS push: which word is the subcommand is known only then.
      out->dynamic = "git's options or subcommand are computed when it runs";
      break;
    }
    if (w.size() < 2 || w[0] != '-') break;
    out->operands.push_back(w);
    if (w == "-c" || w == "--config-env") {
      if (i + 1 < words.size()) {
        setting(words[i + 1], known[i + 1], w == "--config-env");
        out->operands.push_back(words[i + 1]);
      }
      i += 2;
      continue;
    }
    if (w.rfind("--config-env=", 0) == 0) setting(w.substr(13), true, true);
    if (w.rfind("--exec-path=", 0) == 0) out->git_config.push_back({"--exec-path", w.substr(12), false});
    bool separate_value = w == "-C" || w == "--git-dir" || w == "--work-tree" || w == "--namespace" ||
                          w == "--super-prefix" || w == "--attr-source" || w == "--list-cmds";
    if (separate_value && i + 1 < words.size()) {
      out->operands.push_back(words[i + 1]);
      ++i;
    }
    ++i;
  }
  std::vector<std::string> prog = {"git"};
  for (size_t j = i; j < words.size(); ++j) prog.push_back(words[j]);
  AddOperands(words, i, out);
  if (prog.size() > 1 && prog[1] == "grep") {
    // git grep -O<pager> runs the pager on the files it finds.
    for (size_t j = 2; j < prog.size(); ++j) {
      const std::string& w = prog[j];
      if (w.rfind("-O", 0) == 0 && w.size() > 2)
        out->git_config.push_back({"grep --open-files-in-pager", w.substr(2), false});
      if (w.rfind("--open-files-in-pager=", 0) == 0) {
        out->git_config.push_back({"grep --open-files-in-pager", w.substr(22), false});
      }
    }
  }
  return prog;
}

const Interpreter* FindInterpreter(const std::string& base) {
  std::string name = VersionlessName(base);
  for (const Interpreter& in : kInterpreters) {
    if (InList(in.names, name) || InList(in.names, base)) return &in;
  }
  return nullptr;
}

void ReadInterpreter(const Interpreter& in, const std::vector<std::string>& words, const std::vector<bool>& known,
                     size_t start, ProgramChain* out) {
  size_t operands_before = out->operands.size();
  Options o;
  o.valued = in.valued;
  o.special = in.code;
  Scanned s = ScanOptions(o, words, known, start + 1, out);
  out->operands.resize(operands_before);
  AddOperands(words, start + 1, out);
  for (const auto& [code, code_known] : s.specials) {
    if (code_known) out->inline_code.push_back(code);
  }
  if (std::string(in.names).find("vim") != std::string::npos) {
    // vim reads its options anywhere: -c CMD, --cmd CMD, +CMD.
    out->inline_code.clear();
    for (size_t i = start + 1; i < words.size(); ++i) {
      if ((words[i] == "-c" || words[i] == "--cmd") && i + 1 < words.size() && known[i + 1]) {
        out->inline_code.push_back(words[++i]);
      } else if (words[i].size() > 1 && words[i][0] == '+' && known[i]) {
        out->inline_code.push_back(words[i].substr(1));
      }
    }
    return;
  }
  bool program_from_file = Seen(s, "-f --file");
  if (in.program_first && s.specials.empty() && !program_from_file && s.rest < words.size() && known[s.rest]) {
    out->inline_code.push_back(words[s.rest]);
  }
}

// The program a chain finally runs: shells, eval, find and git read further.
void ReadFinal(const std::vector<std::string>& words, const std::vector<bool>& known, size_t start, ProgramChain* out) {
  std::string base = ProgramBaseName(words[start]);
  std::vector<std::string> prog = Tail(words, start);
  if (IsShell(base)) {
    ReadShell(words, known, start, out);
  } else if (base == "eval") {
    size_t from = start + 1 < words.size() && words[start + 1] == "--" ? start + 2 : start + 1;
    std::string joined;
    bool all_known = true;
    for (size_t i = from; i < words.size(); ++i) {
      joined += (i > from ? " " : "") + words[i];
      all_known = all_known && known[i];
    }
    AddOperands(words, start + 1, out);
    AddCommandLine(joined, all_known, "eval", out);
  } else if (base == "source" || base == "." || base == "trap" || base == "alias" || base == "enable" || base == "fc" ||
             base == "at" || base == "batch" ||
             (base == "hash" && words.size() > start + 1 && words[start + 1] == "-p")) {
    AddOperands(words, start + 1, out);
    out->dynamic = "it runs commands that no rule sees beforehand";
  } else if (base == "find") {
    AddOperands(words, start + 1, out);
    for (size_t i = start + 1; i < words.size(); ++i) {
      const std::string& w = words[i];
      if (w != "-exec" && w != "-execdir" && w != "-ok" && w != "-okdir") continue;
      std::string line;
      bool all_known = true;
      size_t j = i + 1;
      for (; j < words.size() && words[j] != ";" && words[j] != "+"; ++j) {
        line += (line.empty() ? "" : " ") + Quoted(words[j]);
        all_known = all_known && known[j];
      }
      if (i + 1 < j && words[i + 1].find("{}") != std::string::npos) {
        out->dynamic = "find runs the files it finds";
        break;
      }
      if (!line.empty()) AddCommandLine(line, all_known, "find " + w, out);
      i = j;
    }
  } else if (base == "git" || base.rfind("git-", 0) == 0) {
    prog = ReadGit(words, known, start, out);
  } else if (base == "deno" && words.size() > start + 2 && words[start + 1] == "eval") {
    AddOperands(words, start + 1, out);
    if (known[start + 2]) out->inline_code.push_back(words[start + 2]);
  } else if (const Interpreter* in = FindInterpreter(base)) {
    ReadInterpreter(*in, words, known, start, out);
  } else {
    AddOperands(words, start + 1, out);
  }
  out->programs.push_back(std::move(prog));
}

const Wrapper* FindWrapper(const std::string& base) {
  for (const Wrapper& w : kWrappers) {
    if (InList(w.names, base)) return &w;
  }
  return nullptr;
}

}  // namespace

std::string ProgramBaseName(const std::string& word) { return word.substr(word.rfind('/') + 1); }

bool IsShell(const std::string& base_name) {
  for (const char* s : kShells) {
    if (base_name == s) return true;
  }
  return false;
}

ProgramChain ReadProgramChain(const std::vector<std::string>& words, const std::vector<bool>& known) {
  ProgramChain out;
  size_t start = 0;
  // Each round peels one wrapper off.
  while (start < words.size()) {
    if (out.programs.size() >= kMaxWrappers) {
      out.programs.push_back(Tail(words, start));
      AddOperands(words, start + 1, &out);
      out.dynamic = "it wraps more than " + std::to_string(kMaxWrappers) + " programs in one another";
      return out;
    }
    if (!known[start]) {
      out.programs.push_back(Tail(words, start));
      AddOperands(words, start + 1, &out);
      out.dynamic = "its name is computed when it runs";
      return out;
    }
    std::string base = ProgramBaseName(words[start]);
    if (base.find("{}") != std::string::npos) {
      // xargs -I{} {} ...: the name is given when it runs.
      out.programs.push_back(Tail(words, start));
      AddOperands(words, start + 1, &out);
      out.dynamic = "it runs a name it is given when it runs";
      return out;
    }
    const Wrapper* w = FindWrapper(base);
    if (w == nullptr) {
      ReadFinal(words, known, start, &out);
      return out;
    }
    if (base == "xargs" || base == "parallel") out.input_arguments = true;
    out.programs.push_back(Tail(words, start));
    Options o;
    o.valued = w->valued;
    o.optional = w->optional;
    o.special = w->command;
    o.env_words = w->then == Then::kEnv;
    if (base == "env") o.special = "-S --split-string";
    Scanned s = ScanOptions(o, words, known, start + 1, &out);
    if (s.unknown_option) {
      AddOperands(words, s.rest, &out);
      out.dynamic = base + " is given options computed when it runs";
      return out;
    }
    size_t rest = s.rest;
    for (int p = 0; p < w->positionals && rest < words.size(); ++p) out.operands.push_back(words[rest++]);
    if (w->positionals > 0 && rest < words.size() && words[rest].rfind("-", 0) == 0) {
      // Options after the operands: flock FILE -c CMD, setarch ARCH -R CMD.
      Scanned more = ScanOptions(o, words, known, rest, &out);
      for (auto& v : more.specials) s.specials.push_back(v);
      rest = std::max(rest, more.rest);
    }
    switch (w->then) {
      case Then::kEnv:
        if (!s.specials.empty()) {
          // env -S STRING ARGS: STRING split into words, then ARGS.
          std::string line = s.specials.back().first;
          bool all_known = s.specials.back().second;
          for (size_t i = rest; i < words.size(); ++i) {
            line += " " + Quoted(words[i]);
            all_known = all_known && known[i];
          }
          AddOperands(words, rest, &out);
          AddCommandLine(line, all_known, base + " -S", &out);
          return out;
        }
        break;
      case Then::kJoined:
        if (!Seen(s, "-x --exec")) {
          std::string line;
          bool all_known = true;
          for (size_t i = rest; i < words.size(); ++i) {
            line += (i > rest ? " " : "") + words[i];
            all_known = all_known && known[i];
          }
          AddOperands(words, rest, &out);
          if (!line.empty()) AddCommandLine(line, all_known, base, &out);
          return out;
        }
        break;
      case Then::kSu:
      case Then::kScript: {
        if (w->then == Then::kSu && base == "runuser" && Seen(s, "-u --user")) break;  // runuser -u USER CMD
        // su USER -c CMD: su reads options after the user too.
        Options again = o;
        for (size_t i = rest; i < words.size();) {
          Scanned more;
          more.rest = i;
          if (words[i].rfind("-", 0) == 0 && words[i].size() > 1) more = ScanOptions(again, words, known, i, &out);
          for (auto& v : more.specials) s.specials.push_back(v);
          if (more.rest > i) {
            i = more.rest;
          } else {
            out.operands.push_back(words[i++]);
          }
        }
        for (const auto& [line, line_known] : s.specials) AddCommandLine(line, line_known, base + " -c", &out);
        if (s.specials.empty()) out.dynamic = base + " starts a shell that runs the commands on its input";
        return out;
      }
      case Then::kCoproc:
        // coproc NAME { ...; } and coproc NAME ( ... ): the name goes.
        if (rest + 1 < words.size() && (words[rest + 1] == "{" || words[rest + 1].rfind("(", 0) == 0)) {
          out.operands.push_back(words[rest++]);
        }
        if (rest < words.size() && words[rest] == "{") ++rest;
        break;
      case Then::kArgs: break;
    }
    if (!s.specials.empty()) {  // flock FILE -c CMD, sg GROUP -c CMD
      for (const auto& [line, line_known] : s.specials) AddCommandLine(line, line_known, base + " -c", &out);
      AddOperands(words, rest, &out);
      return out;
    }
    if (rest >= words.size() && out.input_arguments && base != "xargs" && base != "parallel") {
      // echo rm x | xargs nice: the program comes from the input.
      out.dynamic = "the program it runs comes from its input";
      return out;
    }
    start = rest;
  }
  return out;
}

}  // namespace odin

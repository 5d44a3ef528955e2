#include "coordinator/command_parser.h"

#include <tree_sitter/api.h>

#include <cstring>
#include <set>

extern "C" const TSLanguage* tree_sitter_bash();

namespace odin {

namespace {

constexpr int kMaxDepth = 8;  // bash -c 'bash -c ...' nested this deep at most

std::string Text(TSNode n, const std::string& src) {
  uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
  return b > a && b <= src.size() ? src.substr(a, b - a) : "";
}

bool Is(TSNode n, const char* type) { return strcmp(ts_node_type(n), type) == 0; }

// The value of a word-like node, quotes removed, if it holds no expansion.
bool StaticWord(TSNode n, const std::string& src, std::string* out) {
  if (Is(n, "word") || Is(n, "number")) {
    std::string t = Text(n, src);
    // Unquoted glob and brace characters expand when it runs.
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i] == '\\') {
        ++i;
        continue;
      }
      if (t[i] == '*' || t[i] == '?' || t[i] == '[') return false;
      if (t[i] == '{') {  // {a,b} and {1..3} expand; {} alone does not
        size_t close = t.find('}', i);
        if (close != std::string::npos && (t.substr(i, close - i).find(',') != std::string::npos ||
                                           t.substr(i, close - i).find("..") != std::string::npos)) {
          return false;
        }
      }
    }
    std::string v;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i] == '\\' && i + 1 < t.size()) ++i;  // an escaped character stands for itself
      v += t[i];
    }
    *out = v;
    return true;
  }
  if (Is(n, "raw_string")) {
    std::string t = Text(n, src);
    *out = t.size() >= 2 ? t.substr(1, t.size() - 2) : "";
    return true;
  }
  if (Is(n, "string")) {
    std::string v;
    for (uint32_t i = 0; i < ts_node_named_child_count(n); ++i) {
      TSNode c = ts_node_named_child(n, i);
      if (!Is(c, "string_content")) return false;  // an expansion inside
      v += Text(c, src);
    }
    *out = v;
    return true;
  }
  if (Is(n, "concatenation")) {
    std::string v;
    for (uint32_t i = 0; i < ts_node_named_child_count(n); ++i) {
      std::string piece;
      if (!StaticWord(ts_node_named_child(n, i), src, &piece)) return false;
      v += piece;
    }
    *out = v;
    return true;
  }
  return false;
}

std::string Basename(const std::string& w) { return w.substr(w.rfind('/') + 1); }

// A word quoted for the shell, to parse a command made of words again.
std::string Quoted(const std::string& w) {
  std::string q = "'";
  for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct Wrapper {
  const char* name;
  const char* valued;     // options that take a value, space separated
  int positionals;        // arguments before the command (timeout's duration)
};

// Wrappers run the command that follows their options.
const Wrapper kWrappers[] = {
    {"env", "-u -C -S --unset --chdir --split-string", 0},
    {"timeout", "-s -k --signal --kill-after", 1},
    {"nice", "-n --adjustment", 0},
    {"nohup", "", 0},
    {"xargs", "-I -n -P -L -d -a -E -s --max-args --max-procs --max-lines --delimiter --arg-file --eof "
              "--max-chars --replace",
     0},
    {"sudo", "-u -g -C -h -p -r -t -U -D --user --group --close-from --host --prompt --role --type "
             "--other-user --chdir",
     0},
    {"doas", "-u -C", 0},
    {"command", "", 0},
    {"builtin", "", 0},
    {"exec", "-a", 0},
    {"time", "-o -f --output --format", 0},
    {"stdbuf", "-i -o -e --input --output --error", 0},
    {"setsid", "", 0},
    {"ionice", "-c -n -p --class --classdata --pid", 0},
    {"chrt", "", 1},
    {"taskset", "", 1},
    {"unbuffer", "", 0},
    {"busybox", "", 0},
    {"flock", "-w -E -c --timeout --conflict-exit-code", 1},
};

const Wrapper* FindWrapper(const std::string& name) {
  for (const Wrapper& w : kWrappers) {
    if (name == w.name) return &w;
  }
  return nullptr;
}

bool Valued(const Wrapper& w, const std::string& option) {
  std::string list = std::string(" ") + w.valued + " ";
  return list.find(" " + option + " ") != std::string::npos;
}

// Drops a wrapper and its options from the front of words; true if it did.
// env -S's string is a command line: *split gets it, to be parsed again.
bool Unwrap(std::vector<std::string>* words, std::string* split) {
  if (words->empty()) return false;
  const Wrapper* w = FindWrapper(Basename((*words)[0]));
  if (w == nullptr) return false;
  size_t i = 1;
  int positionals = w->positionals;
  while (i < words->size()) {
    const std::string& word = (*words)[i];
    if (word == "--") {
      ++i;
      break;
    }
    if (std::string(w->name) == "env" && word.find('=') != std::string::npos && word[0] != '-') {
      ++i;  // NAME=value
      continue;
    }
    if (word.size() > 1 && word[0] == '-') {
      std::string option = word.substr(0, word.find('='));
      bool takes_value = Valued(*w, option) && word.find('=') == std::string::npos;
      // A cluster of short options (-Eu): its last letter may take a value.
      if (!takes_value && word.size() > 2 && word[1] != '-' && word.find('=') == std::string::npos) {
        takes_value = Valued(*w, std::string("-") + word.back());
        if (std::string(w->name) == "env" && word.back() == 'S') option = "-S";
      }
      if (std::string(w->name) == "flock" && option == "-c") {
        if (i + 1 < words->size()) *split = (*words)[i + 1];  // flock FILE -c 'cmd'
      }
      if (std::string(w->name) == "env" && (option == "-S" || option == "--split-string")) {
        if (takes_value && i + 1 < words->size()) *split = (*words)[i + 1];
        if (!takes_value) *split = word.substr(word.find('=') + 1);
      }
      i += takes_value ? 2 : 1;
      continue;
    }
    if (positionals > 0) {
      --positionals;
      ++i;
      continue;
    }
    break;
  }
  words->erase(words->begin(), words->begin() + static_cast<std::ptrdiff_t>(std::min(i, words->size())));
  return true;
}

void Collect(const std::string& src, int depth, ParsedCommand* out);

// A simple command: its words, unwrapped; shells' -c strings and eval's
// arguments are parsed again.
void AddCommand(TSNode cmd, const std::string& src, int depth, ParsedCommand* out) {
  CommandPart part;
  part.text = Text(cmd, src);
  std::vector<bool> is_static;  // per word of part.words
  bool name_seen = false;
  for (uint32_t i = 0; i < ts_node_named_child_count(cmd); ++i) {
    TSNode c = ts_node_named_child(cmd, i);
    if (Is(c, "variable_assignment")) {
      // BASH_ENV and ENV make a shell run a file first.
      std::string assignment = Text(c, src);
      if (assignment.rfind("BASH_ENV=", 0) == 0 || assignment.rfind("ENV=", 0) == 0) part.dynamic = true;
      continue;
    }
    if (Is(c, "file_redirect") || Is(c, "herestring_redirect")) continue;
    TSNode word = c;
    if (Is(c, "command_name")) {
      if (ts_node_named_child_count(c) == 0) continue;
      word = ts_node_named_child(c, 0);
    }
    std::string value;
    if (StaticWord(word, src, &value)) {
      part.words.push_back(value);
      is_static.push_back(true);
    } else {
      part.words.push_back(Text(word, src));
      is_static.push_back(false);
      if (!name_seen) part.dynamic = true;
    }
    name_seen = true;
  }
  if (part.words.empty()) return;
  std::string split;
  while (!part.dynamic) {
    size_t before = part.words.size();
    if (!Unwrap(&part.words, &split)) break;
    is_static.erase(is_static.begin(), is_static.begin() + static_cast<std::ptrdiff_t>(before - part.words.size()));
    if (!split.empty()) {
      if (depth >= kMaxDepth) {
        part.dynamic = true;
        break;
      }
      Collect(split, depth + 1, out);  // env -S 'cmd args', flock -c 'cmd'
      return;
    }
    if (part.words.empty()) return;  // a wrapper alone (env, time)
    // The wrapped command's name may be computed: `exec $c`, `env "$c"`.
    if (!is_static[0]) part.dynamic = true;
  }
  std::string name = Basename(part.words[0]);
  // find -exec CMD ... ; runs CMD: a part of its own.
  if (name == "find") {
    for (size_t i = 1; i + 1 < part.words.size(); ++i) {
      const std::string& w = part.words[i];
      if (w != "-exec" && w != "-execdir" && w != "-ok" && w != "-okdir") continue;
      std::string inner;
      bool inner_static = true;
      for (size_t j = i + 1; j < part.words.size() && part.words[j] != ";" && part.words[j] != "+"; ++j) {
        inner += (inner.empty() ? "" : " ") + Quoted(part.words[j]);
        inner_static = inner_static && is_static[j];
      }
      if (inner.empty()) continue;
      if (!inner_static || depth >= kMaxDepth) {
        out->parts.push_back({{"find"}, part.text, true});
      } else {
        Collect(inner, depth + 1, out);  // its own wrappers and shells too
      }
    }
  }
  // Commands that run what they read: no rule can judge them beforehand.
  bool shell = name == "bash" || name == "sh" || name == "dash" || name == "zsh" || name == "ksh";
  if (name == "source" || name == "." || name == "trap" || name == "alias" || name == "enable" ||
      (name == "hash" && part.words.size() > 1 && part.words[1] == "-p")) {
    part.dynamic = true;
  }
  if (!part.dynamic && depth >= kMaxDepth && (shell || name == "eval")) part.dynamic = true;
  if (!part.dynamic && depth < kMaxDepth) {
    if (shell) {
      // bash [options] -c STRING, options before -c included (-x -c, -ec).
      for (size_t i = 1; i + 1 < part.words.size(); ++i) {
        const std::string& w = part.words[i];
        if (w.size() < 2 || w[0] != '-' || w[1] == '-') continue;
        if (w.find('c') != std::string::npos) {
          Collect(part.words[i + 1], depth + 1, out);
          return;
        }
      }
      // No -c: it runs a script file, or the commands on its input.
      bool script = false;
      for (size_t i = 1; i < part.words.size(); ++i) script = script || part.words[i][0] != '-';
      if (!script) part.dynamic = true;
    }
    if (name == "eval") {
      std::string joined;
      for (size_t i = 1; i < part.words.size(); ++i) joined += (i > 1 ? " " : "") + part.words[i];
      Collect(joined, depth + 1, out);
      return;
    }
  }
  out->parts.push_back(std::move(part));
}

void Walk(TSNode n, const std::string& src, int depth, ParsedCommand* out) {
  if (Is(n, "command")) AddCommand(n, src, depth, out);
  if (Is(n, "file_redirect")) {
    TSNode target = ts_node_child_by_field_name(n, "destination", 11);
    std::string value;
    if (!ts_node_is_null(target) && StaticWord(target, src, &value)) out->redirects.push_back(value);
  }
  // Every node below: the arguments' command substitutions, bodies of
  // loops, functions and subshells.
  for (uint32_t i = 0; i < ts_node_named_child_count(n); ++i) Walk(ts_node_named_child(n, i), src, depth, out);
}

void Collect(const std::string& src, int depth, ParsedCommand* out) {
  TSParser* parser = ts_parser_new();
  ts_parser_set_language(parser, tree_sitter_bash());
  TSTree* tree = ts_parser_parse_string(parser, nullptr, src.data(), static_cast<uint32_t>(src.size()));
  TSNode root = ts_tree_root_node(tree);
  if (ts_node_has_error(root)) out->complete = false;
  Walk(root, src, depth, out);
  ts_tree_delete(tree);
  ts_parser_delete(parser);
}

}  // namespace

StatusOr<ParsedCommand> ParseCommand(const std::string& command) {
  if (command.size() > kMaxParsedCommandBytes) {
    return Status::InvalidArgument("command", "longer than " + std::to_string(kMaxParsedCommandBytes) +
                                                  " characters: not parsed");
  }
  return ParseCommandUnchecked(command);
}

ParsedCommand ParseCommandUnchecked(const std::string& command) {
  ParsedCommand out;
  Collect(command, 0, &out);
  return out;
}

}  // namespace odin

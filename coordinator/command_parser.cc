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

// Drops a wrapper and its options from the front of words; true if it did.
bool Unwrap(std::vector<std::string>* words) {
  if (words->empty()) return false;
  std::string name = Basename((*words)[0]);
  // Options that take a value, per wrapper.
  static const std::set<std::string> kWrappers = {"env",  "timeout", "nice",   "nohup",  "xargs",  "sudo",
                                                  "doas", "command", "exec",   "time",   "stdbuf", "setsid",
                                                  "ionice", "builtin", "unbuffer", "chrt", "taskset"};
  if (kWrappers.count(name) == 0) return false;
  static const std::set<std::string> kValued = {"-u", "-g", "-C", "-s", "-k", "-n", "-I", "-P", "-L", "-d", "-a",
                                                "-E", "-o", "-e", "-i", "-c", "-p", "-h", "-U", "-r", "-t", "-D"};
  size_t i = 1;
  bool positional_done = false;
  while (i < words->size()) {
    const std::string& w = (*words)[i];
    if (w == "--") {
      ++i;
      break;
    }
    if (name == "env" && w.find('=') != std::string::npos && w[0] != '-') {
      ++i;  // NAME=value
      continue;
    }
    if (w.size() > 1 && w[0] == '-') {
      bool takes_value = kValued.count(w) != 0 && w.find('=') == std::string::npos;
      // command -v/-V and exec -c/-l take no value.
      if ((name == "command" || name == "exec" || name == "time" || name == "nohup") && w != "-a") takes_value = false;
      i += takes_value ? 2 : 1;
      continue;
    }
    // timeout DURATION, taskset MASK, chrt PRIORITY come before the command.
    if (!positional_done && (name == "timeout" || name == "taskset" || name == "chrt")) {
      positional_done = true;
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
  bool name_seen = false;
  for (uint32_t i = 0; i < ts_node_named_child_count(cmd); ++i) {
    TSNode c = ts_node_named_child(cmd, i);
    if (Is(c, "variable_assignment") || Is(c, "file_redirect") || Is(c, "herestring_redirect")) continue;
    TSNode word = c;
    if (Is(c, "command_name")) {
      if (ts_node_named_child_count(c) == 0) continue;
      word = ts_node_named_child(c, 0);
    }
    std::string value;
    if (StaticWord(word, src, &value)) {
      part.words.push_back(value);
    } else {
      part.words.push_back(Text(word, src));
      if (!name_seen) part.dynamic = true;
    }
    name_seen = true;
  }
  if (part.words.empty()) return;
  while (!part.dynamic && Unwrap(&part.words)) {
    if (part.words.empty()) return;  // a wrapper alone (env, time)
  }
  std::string name = Basename(part.words[0]);
  if (!part.dynamic && depth < kMaxDepth) {
    if ((name == "bash" || name == "sh" || name == "dash" || name == "zsh" || name == "ksh") ) {
      for (size_t i = 1; i + 1 < part.words.size(); ++i) {
        if (part.words[i] == "-c" || (part.words[i].size() > 1 && part.words[i][0] == '-' &&
                                      part.words[i].find('c') != std::string::npos && part.words[i][1] != '-')) {
          Collect(part.words[i + 1], depth + 1, out);
          return;
        }
      }
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
  ParsedCommand out;
  Collect(command, 0, &out);
  return out;
}

}  // namespace odin

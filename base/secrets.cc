#include "base/secrets.h"

#include <algorithm>
#include <cctype>

extern char** environ;

namespace odin {
namespace {

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
  return out;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool IsTokenChar(char c) {
  return isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

// A credential that starts with a fixed prefix followed by token characters.
struct Pattern {
  std::string_view prefix;
  size_t min_body;      // minimum number of token characters after the prefix
  bool upper_digits;    // body restricted to [A-Z0-9]
};

constexpr Pattern kPatterns[] = {
    {"sk-", 20, false},        {"ghp_", 30, false},   {"gho_", 30, false},
    {"ghu_", 30, false},       {"ghs_", 30, false},   {"ghr_", 30, false},
    {"github_pat_", 20, false}, {"AKIA", 16, true},   {"ASIA", 16, true},
    {"xoxb-", 10, false},      {"xoxp-", 10, false},  {"xoxa-", 10, false},
    {"xoxr-", 10, false},      {"xoxs-", 10, false},  {"AIza", 30, false},
    {"glpat-", 20, false},     {"Bearer ", 20, false},
};

using Span = std::pair<size_t, size_t>;  // [begin, end)

void FindPatterns(std::string_view text, std::vector<Span>* spans) {
  for (const Pattern& p : kPatterns) {
    size_t pos = text.find(p.prefix);
    while (pos != std::string_view::npos) {
      // Must start a token: "task-..." does not hold an "sk-" key.
      if (pos > 0 && IsTokenChar(text[pos - 1])) {
        pos = text.find(p.prefix, pos + 1);
        continue;
      }
      size_t end = pos + p.prefix.size();
      while (end < text.size() &&
             (p.upper_digits ? (isupper(static_cast<unsigned char>(text[end])) ||
                                isdigit(static_cast<unsigned char>(text[end])))
                             : IsTokenChar(text[end]) || text[end] == '.')) {
        ++end;
      }
      if (end - pos - p.prefix.size() >= p.min_body) spans->push_back({pos, end});
      // Resume after the scanned body, so each byte is scanned once per pattern.
      pos = text.find(p.prefix, std::max(end, pos + 1));
    }
  }
  // PEM private keys, header to footer.
  static constexpr std::string_view kBegin = "-----BEGIN ";
  for (size_t pos = text.find(kBegin); pos != std::string_view::npos; pos = text.find(kBegin, pos + 1)) {
    size_t header_end = text.find("-----", pos + kBegin.size());
    if (header_end == std::string_view::npos) break;
    std::string_view label = text.substr(pos + kBegin.size(), header_end - pos - kBegin.size());
    if (!EndsWith(label, "PRIVATE KEY") || label.size() > 40) continue;
    std::string footer = "-----END " + std::string(label) + "-----";
    size_t end = text.find(footer, header_end);
    if (end == std::string_view::npos) {  // unterminated: redact to the end, done
      spans->push_back({pos, text.size()});
      break;
    }
    end += footer.size();
    spans->push_back({pos, end});
    pos = end - 1;
  }
}

}  // namespace

bool IsSecretName(std::string_view name) {
  std::string n = Upper(name);
  static constexpr std::string_view kWords[] = {"KEY", "TOKEN", "SECRET", "PASSWORD",
                                                "PASSWD", "CREDENTIALS", "PAT"};
  for (std::string_view w : kWords) {
    if (n == w) return true;
    if (EndsWith(n, std::string("_") + std::string(w))) return true;
  }
  return false;
}

std::vector<std::string> ScrubEnvironment(const std::vector<std::string>& env) {
  std::vector<std::string> out;
  for (const std::string& e : env) {
    std::string_view name = std::string_view(e).substr(0, e.find('='));
    if (IsSecretName(name) || name == "SSH_AUTH_SOCK" || name == "GPG_AGENT_INFO") continue;
    out.push_back(e);
  }
  return out;
}

std::vector<std::string> CurrentEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

void Redactor::AddSecretsFromEnvironment(const std::vector<std::string>& env) {
  for (const std::string& e : env) {
    size_t eq = e.find('=');
    if (eq == std::string::npos) continue;
    std::string name = e.substr(0, eq);
    if (IsSecretName(name)) AddSecret(name, e.substr(eq + 1));
  }
}

void Redactor::AddSecret(std::string name, std::string value) {
  if (value.size() < 8) return;
  secrets_.emplace_back(std::move(name), std::move(value));
  // Longest first, so a secret containing another is replaced whole.
  std::stable_sort(secrets_.begin(), secrets_.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
}

std::string Redactor::Redact(std::string_view text) const {
  std::vector<Span> spans;
  std::vector<std::string_view> names;  // parallel to spans: "" for patterns
  for (const auto& [name, value] : secrets_) {
    for (size_t pos = text.find(value); pos != std::string_view::npos;
         pos = text.find(value, pos + value.size())) {
      spans.push_back({pos, pos + value.size()});
      names.push_back(name);
    }
  }
  size_t named = spans.size();
  FindPatterns(text, &spans);
  names.resize(spans.size());
  if (spans.empty()) return std::string(text);

  std::vector<size_t> order(spans.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (spans[a].first != spans[b].first) return spans[a].first < spans[b].first;
    return spans[a].second > spans[b].second;
  });
  std::string out;
  out.reserve(text.size());
  size_t cursor = 0;
  for (size_t i : order) {
    auto [begin, end] = spans[i];
    if (begin < cursor) {  // overlaps a span already replaced
      if (end > cursor) cursor = end;
      continue;
    }
    out.append(text.substr(cursor, begin - cursor));
    if (i < named) {
      out += "[REDACTED:";
      out += names[i];
      out += "]";
    } else {
      out += "[REDACTED]";
    }
    cursor = end;
  }
  out.append(text.substr(cursor));
  return out;
}

}  // namespace odin

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

bool IsTokenChar(char c) { return isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

// A credential that starts with a fixed prefix followed by token characters.
struct Pattern {
  std::string_view prefix;
  size_t min_body;    // minimum number of token characters after the prefix
  bool upper_digits;  // body restricted to [A-Z0-9]
};

constexpr Pattern kPatterns[] = {
    {"sk-", 20, false},    {"ghp_", 30, false},        {"gho_", 30, false},  {"ghu_", 30, false},  {"ghs_", 30, false},
    {"ghr_", 30, false},   {"github_pat_", 20, false}, {"AKIA", 16, true},   {"ASIA", 16, true},   {"xoxb-", 10, false},
    {"xoxp-", 10, false},  {"xoxa-", 10, false},       {"xoxr-", 10, false}, {"xoxs-", 10, false}, {"AIza", 30, false},
    {"glpat-", 20, false}, {"Bearer ", 20, false},
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
      while (end < text.size() && (p.upper_digits ? (isupper(static_cast<unsigned char>(text[end])) ||
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

// The userinfo password of every URL-like "scheme://user:password@host" in
// text: the bytes between the first ':' of the userinfo and its last '@'
// (a raw '@' in a password is common enough). The authority ends at '/', '?',
// '#', whitespace, a quote or a bracket, and is looked at for at most
// kMaxAuthority bytes, so the scan stays linear.
void FindUrlPasswords(std::string_view text, std::vector<Span>* spans) {
  constexpr size_t kMaxAuthority = 512;
  auto is_scheme_char = [](char c) {
    return isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
  };
  auto ends_authority = [](char c) {
    return c == '/' || c == '?' || c == '#' || c == '"' || c == '\'' || c == '`' || c == '<' || c == '>' || c == '\\' ||
           c == '(' || c == ')' || c == '[' || c == ']' || c == '{' || c == '}' ||
           isspace(static_cast<unsigned char>(c)) || c == '\0';
  };
  for (size_t p = text.find("://"); p != std::string_view::npos; p = text.find("://", p + 3)) {
    size_t scheme = p;
    while (scheme > 0 && is_scheme_char(text[scheme - 1])) --scheme;
    if (scheme == p || !isalpha(static_cast<unsigned char>(text[scheme]))) continue;
    size_t begin = p + 3, end = begin;
    while (end < text.size() && end - begin < kMaxAuthority && !ends_authority(text[end])) ++end;
    std::string_view authority = text.substr(begin, end - begin);
    size_t at = authority.rfind('@');
    if (at == std::string_view::npos) continue;
    size_t colon = authority.substr(0, at).find(':');
    if (colon == std::string_view::npos || colon + 1 == at) continue;  // a user name alone is no secret
    spans->push_back({begin + colon + 1, begin + at});
  }
}

// Percent-decodes a URL component ("p%40ss" -> "p@ss").
std::string PercentDecoded(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

bool HasUrlPassword(std::string_view value) {
  std::vector<Span> spans;
  FindUrlPasswords(value, &spans);
  return !spans.empty();
}

bool IsSecretName(std::string_view name) {
  std::string n = Upper(name);
  static constexpr std::string_view kWords[] = {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIALS", "PAT"};
  for (std::string_view w : kWords) {
    if (n == w) return true;
    if (EndsWith(n, std::string("_") + std::string(w))) return true;
  }
  // An OpenTelemetry collector's headers carry its API key.
  return n.rfind("OTEL_EXPORTER_OTLP", 0) == 0 && EndsWith(n, "_HEADERS");
}

std::vector<std::string> ScrubEnvironment(const std::vector<std::string>& env) {
  std::vector<std::string> out;
  for (const std::string& e : env) {
    size_t eq = e.find('=');
    std::string_view name = std::string_view(e).substr(0, eq);
    if (IsSecretName(name) || name == "SSH_AUTH_SOCK" || name == "GPG_AGENT_INFO") continue;
    // A value holding a URL with a password (DATABASE_URL, http_proxy, ...).
    if (eq != std::string::npos && HasUrlPassword(std::string_view(e).substr(eq + 1))) continue;
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
    std::string_view value = std::string_view(e).substr(eq + 1);
    if (IsSecretName(name)) AddSecret(name, std::string(value));
    // The passwords of URLs in any variable, as written and decoded (short
    // ones are still caught in URL form by Redact's pattern).
    std::vector<Span> spans;
    FindUrlPasswords(value, &spans);
    for (auto [begin, end] : spans) {
      std::string password(value.substr(begin, end - begin));
      std::string decoded = PercentDecoded(password);
      if (decoded != password) AddSecret(name, decoded);
      AddSecret(name, std::move(password));
    }
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
    for (size_t pos = text.find(value); pos != std::string_view::npos; pos = text.find(value, pos + value.size())) {
      spans.push_back({pos, pos + value.size()});
      names.push_back(name);
    }
  }
  size_t named = spans.size();
  FindPatterns(text, &spans);
  FindUrlPasswords(text, &spans);
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

std::map<std::string, std::string> EnvironmentMap() {
  std::map<std::string, std::string> env;
  for (const std::string& e : CurrentEnvironment()) {
    size_t eq = e.find('=');
    if (eq != std::string::npos) env[e.substr(0, eq)] = e.substr(eq + 1);
  }
  return env;
}

}  // namespace odin

#include "cli/line_editor.h"

#include <dirent.h>
#include <fcntl.h>
#include <histedit.h>
#include <langinfo.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <clocale>
#include <cstdio>
#include <cstring>

#include "base/file_util.h"
#include "base/sha256.h"

namespace odin {
namespace {

const std::string kPasteStart = "\033[200~";
const std::string kPasteEnd = "\033[201~";
// What the editor feeds libedit to have it draw the prompt and the line
// again: a key sequence no terminal sends, bound to odin-redraw.
const std::string kRedrawKeys = "\033[9907~";
constexpr Duration kEscapeWait = milliseconds(40);

LineEditor* Self(EditLine* el) {
  void* data = nullptr;
  el_get(el, EL_CLIENTDATA, &data);
  return static_cast<LineEditor*>(data);
}

int GetCharFn(EditLine* el, wchar_t* out) { return Self(el)->GetChar(out); }

unsigned char CompleteFn(EditLine* el, int) { return Self(el)->Complete(); }

unsigned char RedrawFn(EditLine*, int) { return CC_REDISPLAY; }

std::string g_prompt;  // libedit keeps the pointer until the next call
char* PromptFn(EditLine* el) {
  g_prompt = Self(el)->Prompt();
  return g_prompt.data();
}

void Write(const std::string& text) {
  fwrite(text.data(), 1, text.size(), stdout);
  fflush(stdout);
}

// libedit reads wide characters, so the locale must speak UTF-8.
void UseUtf8Locale() {
  const char* set = setlocale(LC_CTYPE, "");
  if (set == nullptr || strcmp(nl_langinfo(CODESET), "UTF-8") != 0) setlocale(LC_CTYPE, "C.UTF-8");
}

}  // namespace

std::string HistoryPath(const std::string& workspace) {
  std::string state = OdinStateDir();
  if (state.empty()) return "";
  return JoinPath(JoinPath(state, "history"), Sha256Hex(workspace).substr(0, 32));
}

LineEditor::LineEditor(Options options) : o_(std::move(options)) {
  UseUtf8Locale();
  el_ = el_init("odin", stdin, stdout, stderr);
  el_set(el_, EL_CLIENTDATA, this);
  el_set(el_, EL_EDITOR, "emacs");
  el_set(el_, EL_SIGNAL, 0);  // the session's signal pipe has them
  el_set(el_, EL_PROMPT_ESC, PromptFn, '\1');
  el_set(el_, EL_GETCFN, GetCharFn);
  el_set(el_, EL_ADDFN, "odin-complete", "Complete a slash command or a path", CompleteFn);
  el_set(el_, EL_BIND, "^I", "odin-complete", nullptr);
  el_set(el_, EL_ADDFN, "odin-redraw", "Draw the prompt and the line again", RedrawFn);
  el_set(el_, EL_BIND, "\\e[9907~", "odin-redraw", nullptr);
  hist_ = history_init();
  HistEvent ev;
  history(hist_, &ev, H_SETSIZE, 1000);
  history(hist_, &ev, H_SETUNIQUE, 1);
  if (!o_.history_path.empty()) history(hist_, &ev, H_LOAD, o_.history_path.c_str());
  el_set(el_, EL_HIST, history, hist_);
  // Bracketed paste: a pasted block arrives marked.
  Write("\033[?2004h");
}

LineEditor::~LineEditor() {
  Write("\033[?2004l");
  el_end(el_);
  history_end(hist_);
}

std::string LineEditor::Prompt() const { return o_.prompt ? o_.prompt() : "> "; }

bool LineEditor::ReadLine(std::string* line) {
  if (leave_) return false;
  reading_ = true;
  int count = 0;
  const char* got = el_gets(el_, &count);
  reading_ = false;
  if (got == nullptr || count <= 0 || leave_) return false;
  std::string text(got, static_cast<size_t>(count));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  *line = ExpandPastes(text);
  pastes_.clear();
  return true;
}

void LineEditor::Remember(const std::string& entry) {
  HistEvent ev;
  history(hist_, &ev, H_ENTER, entry.c_str());
  if (o_.history_path.empty()) return;
  // The history may hold what the user typed about their secrets: theirs only.
  if (!MakeDirs(DirName(o_.history_path), 0700).ok()) return;
  int fd = open(o_.history_path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return;
  close(fd);
  history(hist_, &ev, H_SAVE, o_.history_path.c_str());
}

void LineEditor::Print(const std::string& text) {
  if (reading_) {
    // Over the line being edited (in the prompt's colours no more); libedit
    // draws it again below.
    Write("\r\033[0m\033[K" + text);
    redraw_due_ = true;
  } else {
    Write(text);
  }
}

void LineEditor::Feed(const char* data, size_t size) {
  raw_.append(data, size);
  ProcessRaw();
}

void LineEditor::ProcessRaw() {
  for (;;) {
    if (in_paste_) {
      size_t end = raw_.find(kPasteEnd);
      if (end == std::string::npos) {
        // Keep what may be the start of the end marker.
        size_t keep = std::min(raw_.size(), kPasteEnd.size() - 1);
        paste_ += raw_.substr(0, raw_.size() - keep);
        raw_.erase(0, raw_.size() - keep);
        return;
      }
      paste_ += raw_.substr(0, end);
      raw_.erase(0, end + kPasteEnd.size());
      in_paste_ = false;
      Paste(paste_);
      paste_.clear();
      continue;
    }
    if (raw_.empty()) return;
    size_t esc = raw_.find('\033');
    if (esc == std::string::npos) {
      keys_ += raw_;
      raw_.clear();
      return;
    }
    keys_ += raw_.substr(0, esc);
    raw_.erase(0, esc);
    if (raw_.compare(0, kPasteStart.size(), kPasteStart) == 0) {
      raw_.erase(0, kPasteStart.size());
      in_paste_ = true;
      continue;
    }
    if (raw_.size() < kPasteStart.size() && kPasteStart.compare(0, raw_.size(), raw_) == 0) {
      // A lone Esc, or a paste marker still arriving: wait a little.
      if (escape_since_ == SteadyTime{}) escape_since_ = RealClock::Get()->Now();
      return;
    }
    // Any other sequence (arrows, Meta-key) is libedit's.
    keys_ += raw_[0];
    raw_.erase(0, 1);
  }
}

SteadyTime LineEditor::EscapeDeadline() const {
  return !raw_.empty() && !in_paste_ ? escape_since_ + kEscapeWait : SteadyTime::max();
}

void LineEditor::CheckEscape(SteadyTime now) {
  if (raw_.empty() || in_paste_ || now < escape_since_ + kEscapeWait) return;
  escape_since_ = SteadyTime{};
  if (raw_ == "\033") {
    raw_.clear();
    if (o_.on_escape) o_.on_escape();
    return;
  }
  keys_ += raw_;  // "\e[" and nothing more: libedit's
  raw_.clear();
}

void LineEditor::Paste(const std::string& pasted) {
  std::string text;
  for (size_t i = 0; i < pasted.size(); ++i) {
    char ch = pasted[i];
    if (ch == '\r') {
      text += '\n';
      if (i + 1 < pasted.size() && pasted[i + 1] == '\n') ++i;
    } else if (static_cast<unsigned char>(ch) >= 0x20 || ch == '\n' || ch == '\t') {
      text += ch;  // the user's own text; other control bytes are dropped
    }
  }
  while (!text.empty() && text.back() == '\n') text.pop_back();
  size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  if (lines == 1) {
    keys_ += text;
    return;
  }
  pastes_.push_back(text);
  keys_ += "[pasted " + std::to_string(lines) + " lines #" + std::to_string(pastes_.size()) + "]";
}

std::string LineEditor::ExpandPastes(const std::string& line) const {
  std::string out = line;
  for (size_t i = 0; i < pastes_.size(); ++i) {
    size_t lines = static_cast<size_t>(std::count(pastes_[i].begin(), pastes_[i].end(), '\n')) + 1;
    std::string mark = "[pasted " + std::to_string(lines) + " lines #" + std::to_string(i + 1) + "]";
    size_t at = out.find(mark);
    if (at != std::string::npos) out.replace(at, mark.size(), pastes_[i]);
  }
  return out;
}

int LineEditor::GetChar(wchar_t* out) {
  for (;;) {
    if (leave_) return 0;
    if (!keys_.empty()) {
      auto b = static_cast<unsigned char>(keys_[0]);
      size_t len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
      if (len == 0) {  // not a lead byte
        keys_.erase(0, 1);
        *out = 0xFFFD;
        return 1;
      }
      if (keys_.size() >= len || eof_) {
        if (keys_.size() < len) {
          keys_.clear();
          *out = 0xFFFD;
          return 1;
        }
        uint32_t cp = len == 1 ? b : b & (0x7F >> len);
        bool valid = true;
        for (size_t i = 1; i < len; ++i) {
          auto c = static_cast<unsigned char>(keys_[i]);
          valid = valid && (c >> 6) == 2;
          cp = (cp << 6) | (c & 0x3F);
        }
        keys_.erase(0, len);
        *out = valid ? static_cast<wchar_t>(cp) : 0xFFFD;
        return 1;
      }
    }
    if (redraw_due_ && keys_.empty()) {
      redraw_due_ = false;
      keys_ = kRedrawKeys;
      continue;
    }
    if (eof_ && raw_.empty() && keys_.empty()) return 0;
    SteadyTime now = RealClock::Get()->Now();
    Duration wait = milliseconds(200);
    SteadyTime escape = EscapeDeadline();
    if (escape != SteadyTime::max()) wait = std::max(Duration::zero(), std::min(wait, escape - now));
    if (o_.pump) o_.pump(wait);
    CheckEscape(RealClock::Get()->Now());
  }
}

unsigned char LineEditor::Complete() {
  const LineInfo* li = el_line(el_);
  std::string before(li->buffer, static_cast<size_t>(li->cursor - li->buffer));
  size_t space = before.find_last_of(" \t\n");
  size_t start = space == std::string::npos ? 0 : space + 1;
  std::string word = before.substr(start);
  std::string typed;
  std::vector<std::string> matches;
  if (start == 0 && !word.empty() && word[0] == '/') {
    typed = word;
    for (const std::string& c : o_.commands) {
      if (c.compare(0, word.size(), word) == 0) matches.push_back(c);
    }
  } else {
    typed = !word.empty() && word[0] == '@' ? word.substr(1) : word;
    size_t slash = typed.rfind('/');
    std::string dir = slash == std::string::npos ? "" : typed.substr(0, slash + 1);
    std::string base = typed.substr(dir.size());
    // Below the workspace only: no absolute paths, no way up.
    if (!dir.empty() && (dir[0] == '/' || dir.find("..") != std::string::npos)) return CC_ERROR;
    DIR* d = opendir(JoinPath(o_.workspace, dir.empty() ? "." : dir).c_str());
    if (d == nullptr) return CC_ERROR;
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name == "." || name == ".." || name == ".odin" || name == ".git") continue;
      // A repository's file names are its own: one with control characters
      // would write them to the terminal.
      if (std::any_of(name.begin(), name.end(), [](char ch) {
            return static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) == 0x7f;
          })) {
        continue;
      }
      if (name[0] == '.' && (base.empty() || base[0] != '.')) continue;
      if (name.compare(0, base.size(), base) != 0) continue;
      struct stat st;
      bool is_dir = stat(JoinPath(JoinPath(o_.workspace, dir), name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
      matches.push_back(dir + name + (is_dir ? "/" : ""));
      if (matches.size() > 1000) break;
    }
    closedir(d);
  }
  if (matches.empty()) return CC_ERROR;
  std::sort(matches.begin(), matches.end());
  std::string common = matches[0];
  for (const std::string& m : matches) {
    size_t n = 0;
    while (n < common.size() && n < m.size() && common[n] == m[n]) ++n;
    common.resize(n);
  }
  if (common.size() > typed.size()) {
    el_insertstr(el_, common.substr(typed.size()).c_str());
    return CC_REFRESH;
  }
  if (matches.size() == 1) return CC_REFRESH;
  std::string list = "\n";
  for (size_t i = 0; i < matches.size() && i < 60; ++i) list += matches[i] + (i + 1 < matches.size() ? "  " : "");
  if (matches.size() > 60) list += "  … " + std::to_string(matches.size() - 60) + " more";
  Write(list + "\n");
  return CC_REDISPLAY;
}

}  // namespace odin

#include "cli/pending_questions.h"

#include "config/approval_store.h"
#include "base/terminal_text.h"

namespace odin {

void PendingQuestions::AddApproval(const ApprovalRequest& a) {
  questions_.push_back(a);
  if (questions_.size() == 1) AskNext();
}

void PendingQuestions::AddMcpQuestion(const McpQuestionRequest& q) {
  StatusOr<ElicitationForm> parsed = ElicitationForm::Parse(q.schema_json);
  if (!parsed.ok()) {
    // Shown, and declined at once: nothing waits for a key.
    view_->Line(view_->Color("2", "MCP server " + q.server + " sent a form Odin cannot ask (" +
                                      VisibleControls(parsed.status().message(), Layout::kOneLine) + "): declined"));
    co_->AnswerMcpQuestion(q.execution_id, q.question_id, "decline", "");
    if (redraw_) redraw_();
    return;
  }
  Form f{q, std::move(*parsed), false};
  f.confirming = f.form->done();  // no fields: only "send it?"
  questions_.push_back(std::move(f));
  if (questions_.size() == 1) AskNext();
}

std::string PendingQuestions::Prompt() const {
  if (questions_.empty()) return "";
  if (const auto* a = std::get_if<ApprovalRequest>(&questions_.front())) {
    return a->saved_key.empty() ? "allow? [y/s/n] " : "allow? [y/s/w/A/n] ";
  }
  const Form& f = std::get<Form>(questions_.front());
  return f.confirming ? "send it? [y] send, [n] decline, [c] cancel " : "answer (/decline, /cancel): ";
}

void PendingQuestions::AskNext() {
  if (questions_.empty()) return;
  if (const auto* a = std::get_if<ApprovalRequest>(&questions_.front())) {
    view_->Line(view_->Color("33", "⚠ approval needed: `" + VisibleControls(a->command) + "`"));
    view_->Line(view_->Color("33", "  " + VisibleControls(a->reason)));
    if (a->saved_key.empty()) {
      view_->Line(view_->Color("1", "  Allow? [y] once, [s] for this session, [n] no"));
    } else {
      view_->Line(view_->Color("1",
                               "  Allow? [y] once, [s] for this session, [w] always in this workspace, [A] always, "
                               "[n] no"));
      view_->Line(view_->Color("2", "  (always saves exactly " +
                                        VisibleControls(DescribeApprovalKey(a->saved_key), Layout::kOneLine) +
                                        ": odin permissions lists and removes it)"));
    }
  } else {
    const Form& f = std::get<Form>(questions_.front());
    // The server's words, as its words, on one line (its newlines cannot
    // push this header away) and never in an approval's colours.
    view_->Line(view_->Color("36", "? MCP server " + f.request.server + " asks (its words): ") +
                VisibleControls(CutAtCharacter(f.request.message, 2000), Layout::kOneLine));
    if (f.confirming) {
      view_->Line(view_->Color("1", "  Send it to " + f.request.server + "? [y] send, [n] decline, [c] cancel"));
    } else {
      view_->Line(view_->Color("2", "  " + std::to_string(f.form->size()) +
                                        " field(s); an empty line takes the default; /decline or /cancel to refuse"));
      AskField(f);
    }
  }
  if (redraw_) redraw_();
}

void PendingQuestions::AskField(const Form& f) {
  if (!f.form->done()) view_->Line(view_->Color("1", "  " + VisibleControls(f.form->Question(), Layout::kOneLine)));
}

void PendingQuestions::Clear() {
  // The approvals' calls end with the turn; a form is answered "cancel",
  // so its call's deadline runs again and the answer is recorded.
  for (auto& q : questions_) {
    if (const Form* f = std::get_if<Form>(&q)) {
      co_->AnswerMcpQuestion(f->request.execution_id, f->request.question_id, "cancel", "");
    }
  }
  questions_.clear();
}

void PendingQuestions::Answer(const std::string& line) {
  if (questions_.empty()) return;
  if (auto* a = std::get_if<ApprovalRequest>(&questions_.front())) {
    ApprovalRequest asked = *a;
    questions_.pop_front();
    AnswerApproval(asked, line);
    return AskNext();
  }
  if (!AnswerForm(std::get<Form>(questions_.front()), line)) {
    if (redraw_) redraw_();
    return;
  }
  questions_.pop_front();
  AskNext();
}

void PendingQuestions::AnswerApproval(const ApprovalRequest& a, const std::string& line) {
  // "a" was this session's answer before "always" was saved: it stays so.
  ApprovalAnswer answer = line == "y" || line == "yes"                      ? ApprovalAnswer::kOnce
                          : line == "s" || line == "a" || line == "session" ? ApprovalAnswer::kSession
                          : line == "w" || line == "workspace"              ? ApprovalAnswer::kWorkspace
                          : line == "A" || line == "always"                 ? ApprovalAnswer::kAlways
                                                                            : ApprovalAnswer::kDeny;
  if (a.saved_key.empty() && (answer == ApprovalAnswer::kWorkspace || answer == ApprovalAnswer::kAlways)) {
    answer = ApprovalAnswer::kSession;
  }
  view_->Line(answer == ApprovalAnswer::kOnce        ? "  allowed once"
              : answer == ApprovalAnswer::kSession   ? "  allowed for this session"
              : answer == ApprovalAnswer::kWorkspace ? "  allowed always in this workspace (saved)"
              : answer == ApprovalAnswer::kAlways    ? "  allowed always (saved)"
                                                     : "  denied");
  co_->AnswerApproval(a.execution_id, answer);
}

bool PendingQuestions::AnswerForm(Form& f, const std::string& line) {
  auto finish = [&](const char* action, const std::string& content, const char* said) {
    view_->Line(said);
    if (!co_->AnswerMcpQuestion(f.request.execution_id, f.request.question_id, action, content)) {
      view_->Line(view_->Color("2", "  (its call had ended)"));
    }
    return true;
  };
  if (line == "/cancel" || (f.confirming && line == "c")) return finish("cancel", "", "  cancelled");
  if (line == "/decline" || (f.confirming && line != "y" && line != "yes")) {
    return finish("decline", "", "  declined");
  }
  if (f.confirming) return finish("accept", f.form->ContentJson(), "  sent");
  if (Status s = f.form->Answer(line); !s.ok()) {
    view_->Line(view_->Color("33", "  " + VisibleControls(s.message(), Layout::kOneLine)));
    AskField(f);
    return false;
  }
  if (f.form->done()) {
    f.confirming = true;
    view_->Line(view_->Color("1", "  Send it to " + f.request.server + "? [y] send, [n] decline, [c] cancel"));
  } else {
    AskField(f);
  }
  return false;
}

void PendingQuestions::Refuse() {
  while (!questions_.empty()) {
    if (const auto* a = std::get_if<ApprovalRequest>(&questions_.front())) {
      co_->AnswerApproval(a->execution_id, ApprovalAnswer::kDeny);
    } else {
      const Form& f = std::get<Form>(questions_.front());
      co_->AnswerMcpQuestion(f.request.execution_id, f.request.question_id, "cancel", "");
    }
    questions_.pop_front();
  }
}

}  // namespace odin

#pragma once
// What the interactive session asks the user while the agent works:
// commands that wait for approval, and MCP servers' forms (elicitation), in
// the order they came, one at a time. Each line the user types answers the
// one asked; a form takes a line per field, then asks to send it.

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <variant>

#include "cli/elicitation_form.h"
#include "cli/terminal_view.h"
#include "coordinator/coordinator.h"

namespace odin {

class PendingQuestions {
 public:
  // redraw: shows the prompt again (the line editor's), after a question.
  PendingQuestions(TerminalView* view, Coordinator* co, std::function<void()> redraw)
      : view_(view), co_(co), redraw_(std::move(redraw)) {}

  bool empty() const { return questions_.empty(); }
  void AddApproval(const ApprovalRequest& a);
  void AddMcpQuestion(const McpQuestionRequest& q);
  // The prompt for the question asked ("allow? [y/s/n] ", a form's field).
  std::string Prompt() const;
  // The user's line for the question asked; the next one is asked.
  void Answer(const std::string& line);
  // Nobody will answer: approvals denied, forms cancelled.
  void Refuse();
  // The turn was cancelled: approvals are dropped (their calls end), forms
  // answered "cancel".
  void Clear();

 private:
  struct Form {
    McpQuestionRequest request;
    std::optional<ElicitationForm> form;
    bool confirming = false;  // every field answered: "send?"
  };
  void AskNext();
  void AskField(const Form& f);
  void AnswerApproval(const ApprovalRequest& a, const std::string& line);
  // True when the form is done with (answered, declined or cancelled).
  bool AnswerForm(Form& f, const std::string& line);

  TerminalView* view_;
  Coordinator* co_;
  std::function<void()> redraw_;
  std::deque<std::variant<ApprovalRequest, Form>> questions_;
};

}  // namespace odin

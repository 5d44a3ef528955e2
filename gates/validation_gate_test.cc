// The coordinator's validation gate, with a real ledger and fake workers: the
// tests play both the tool worker and the lsp host.

#include <signal.h>

#include <set>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "base/sha256.h"
#include "coordinator/coordinator.h"
#include "odin/v1/worker.pb.h"
#include "tests/coordinator_fixture.h"

namespace odin {
namespace {

class ValidationGateTest : public testing::CoordinatorFixture {
 protected:
  void SetUp() override { Start(false); }
  void Start(bool memory_forced) {
    CoordinatorOptions o = Options();
    o.memory_forced = memory_forced;
    ASSERT_NO_FATAL_FAILURE(StartCoordinator(o));
    worker_ = coord_->pool().workers()[0].id;
    Hello(worker_);
  }
  // The options of every start (resuming too) in the current workspace.
  CoordinatorOptions Options() const {
    CoordinatorOptions o;
    o.workspace = ws_;
    o.mode = CallMode::kEdit;
    o.pool.size = 1;
    o.pool.spawn_spec = [](const WorkerSpawn& w) {
      return SpawnOptions{.argv = {w.policy == WorkerPolicy::kLspHost ? "lsp-host" : "worker"}};
    };
    o.validation = DefaultValidationOptions();
    o.validation.enabled = true;
    // Every program is "installed", so the tests do not depend on the machine.
    o.program_lookup = [](const std::string& name) { return name[0] == '/' ? name : "/usr/bin/" + name; };
    return o;
  }

  // The lsp host, started on demand (and said Hello).
  std::string Host() {
    for (const auto& w : coord_->pool().workers()) {
      if (w.policy == WorkerPolicy::kLspHost) {
        if (w.state == WorkerPool::WorkerState::kStarting) Hello(w.id);
        return w.id;
      }
    }
    return "";
  }
  std::string Submit(const std::string& tool, const std::string& args, const std::string& mode = "") {
    ToolCall call;
    call.tool = tool;
    call.arguments_json = args;
    call.mode = ParseCallMode(mode);
    return SubmitCall(call);
  }
  // The last request sent to a worker.
  const v1::ToolRequest* LastRequest(const std::string& worker) {
    const v1::Envelope* e = LastTo(worker, v1::Envelope::kToolRequest);
    return e != nullptr ? &e->tool_request() : nullptr;
  }
  // The tool worker's answer to a write: the file now holds `after`.
  void SayWritten(const std::string& id, const std::string& rel, const std::string& before, const std::string& after,
                  bool existed = true) {
    ASSERT_TRUE(WriteFileAtomic(ws_ + "/" + rel, after).ok());
    v1::Envelope e = Env();
    v1::ToolResult* r = e.mutable_tool_result();
    r->set_execution_id(id);
    r->set_status(v1::TOOL_STATUS_OK);
    v1::FileSnapshot* w = r->mutable_file_written();
    w->set_path(ws_ + "/" + rel);
    w->set_sha256(Sha256Hex(after));
    w->set_full(true);
    w->set_content(after);
    if (existed) {
      r->set_sha256_before(Sha256Hex(before));
      r->set_content_before(before);
    }
    r->set_output_json(R"({"lines_added":1,"lines_removed":1})");
    Say(worker_, e);
  }
  struct D {
    uint32_t line;
    std::string message;
    uint32_t severity = 1;
  };
  // The lsp host's answer: baseline and current diagnostics of the file.
  void SayDiagnosed(const std::vector<D>& now, const std::vector<D>& baseline = {}) {
    std::string host = Host();
    const v1::ToolRequest* req = LastRequest(host);
    ASSERT_NE(req, nullptr);
    v1::Envelope e = Env();
    v1::ToolResult* r = e.mutable_tool_result();
    r->set_execution_id(req->execution_id());
    r->set_status(v1::TOOL_STATUS_OK);
    v1::ValidationOutput* out = r->mutable_validation();
    out->set_outcome(v1::VALIDATION_OUTCOME_DIAGNOSED);
    out->set_validator("clangd");
    // As the host does: the baseline is diagnosed unless it is known for this validator.
    out->set_baseline_done(req->validation().want_baseline() && req->validation().baseline_validator() != "clangd");
    auto add = [&](const D& d, v1::Diagnostic* to) {
      to->set_path(req->validation().path());
      to->set_line(d.line);
      to->set_column(1);
      to->set_severity(d.severity);
      to->set_code("c");
      to->set_message(d.message);
    };
    for (const D& d : now) add(d, out->add_diagnostics());
    for (const D& d : baseline) add(d, out->add_baseline());
    Say(host, e);
  }
  // Reads rel (so the cache allows writing it) and writes it whole.
  std::string Write(const std::string& rel, const std::string& before, const std::string& after) {
    if (!reads_.count(rel)) {
      EXPECT_TRUE(WriteFileAtomic(ws_ + "/" + rel, before).ok());
      std::string read = Submit("Read", R"({"file_path":")" + rel + R"("})");
      v1::Envelope e = Env();
      v1::ToolResult* r = e.mutable_tool_result();
      r->set_execution_id(read);
      r->set_status(v1::TOOL_STATUS_OK);
      v1::FileSnapshot* s = r->add_files_read();
      s->set_path(ws_ + "/" + rel);
      s->set_sha256(Sha256Hex(before));
      s->set_size_bytes(before.size());
      s->set_full(true);
      s->set_content(before);
      Say(worker_, e);
      reads_.insert(rel);
      results_.clear();
    }
    std::string id = Submit("WriteFile", R"({"content":"x","file_path":")" + rel + R"("})");
    SayWritten(id, rel, before, after);
    return id;
  }
  std::string worker_;
  std::set<std::string> reads_;
};

TEST_F(ValidationGateTest, AWriteIsDeliveredAfterItsValidationWithTheVerdict) {
  std::string write = Write("a.cc", "int a;\n", "int a = b;\n");
  // The write is recorded, but its caller waits for the validation.
  EXPECT_TRUE(results_.empty());
  ASSERT_TRUE(ledger_->FindExecution(write)->end.has_value());
  const v1::ToolRequest* req = LastRequest(Host());
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(req->tool(), "lsp_check");
  EXPECT_EQ(req->validation().path(), ws_ + "/a.cc");
  EXPECT_EQ(req->validation().content(), "int a = b;\n");
  EXPECT_TRUE(req->validation().want_baseline());
  EXPECT_EQ(req->validation().baseline_content(), "int a;\n");
  EXPECT_EQ(req->validation().baseline_validator(), "");  // no baseline known yet
  EXPECT_EQ(req->validation().server().name(), "clangd");
  EXPECT_EQ(req->validation().server().command(0), "/usr/bin/clangd");
  EXPECT_EQ(req->validation().server().language_id(), "cpp");
  EXPECT_EQ(req->validation().check_command(0), "/usr/bin/g++");
  std::string check = req->execution_id();

  SayDiagnosed({{1, "use of undeclared identifier 'b'"}, {1, "a warning", 2}});
  ASSERT_EQ(results_.size(), 1u);
  const v1::ValidationVerdict& v = results_[0].verdict();
  EXPECT_EQ(v.status(), "errors");
  EXPECT_EQ(v.execution_id(), check);
  EXPECT_EQ(v.new_errors(), 1u);
  EXPECT_EQ(v.summary(), "a.cc:1:1 [c] use of undeclared identifier 'b'\n");
  EXPECT_TRUE(v.counts());
  // The ledger: the lsp_check is linked to the write, with its diagnostics.
  auto row = ledger_->FindExecution(check);
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row->start.parent_id, write);
  EXPECT_EQ(row->start.tool, "lsp_check");
  auto validations = ledger_->ListValidations(coord_->session_id());
  ASSERT_EQ(validations->size(), 1u);
  EXPECT_EQ((*validations)[0].mutation_id, write);
  EXPECT_EQ((*validations)[0].status, "errors");
  auto diagnostics = ledger_->ListDiagnostics(check);
  ASSERT_EQ(diagnostics->size(), 2u);
  EXPECT_TRUE((*diagnostics)[0].is_new);
  EXPECT_EQ((*diagnostics)[1].severity, 2);
}

TEST_F(ValidationGateTest, OldErrorsAreTheBaselineAndMovedLinesStillMatch) {
  Write("a.cc", "int x = bad;\n", "// new first line\nint x = bad;\n");
  // The old error moved from line 1 to 2: not new.
  SayDiagnosed({{2, "bad is undeclared"}}, {{1, "bad is undeclared"}});
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].verdict().status(), "clean");
  // The baseline goes along, but is diagnosed once per validator: the host
  // is told clangd's diagnostics of it are known.
  Write("a.cc", "// new first line\nint x = bad;\n", "// first\nint x = bad;\nint y = worse;\n");
  EXPECT_TRUE(LastRequest(Host())->validation().want_baseline());
  EXPECT_EQ(LastRequest(Host())->validation().baseline_content(), "int x = bad;\n");
  EXPECT_EQ(LastRequest(Host())->validation().baseline_validator(), "clangd");
  SayDiagnosed({{2, "bad is undeclared"}, {3, "worse is undeclared"}});
  ASSERT_EQ(results_.size(), 2u);
  EXPECT_EQ(results_[1].verdict().status(), "errors");
  EXPECT_EQ(results_[1].verdict().new_errors(), 1u);
  EXPECT_EQ(results_[1].verdict().summary(), "a.cc:3:1 [c] worse is undeclared\n");
}

TEST_F(ValidationGateTest, BlockedSessionRefusesOtherWorkAndAllowsReadsCommandsAndFixes) {
  Write("a.cc", "int a;\n", "int a = b;\n");
  SayDiagnosed({{1, "b?"}});
  ASSERT_EQ(coord_->Blocking().size(), 1u);
  results_.clear();
  Submit("TodoWrite", R"({"todos":[{"id":"1","content":"more","status":"pending"}]})");
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].status(), v1::TOOL_STATUS_REJECTED);
  EXPECT_NE(results_[0].error().message().find("blocked"), std::string::npos);
  EXPECT_NE(results_[0].error().message().find(coord_->Blocking()[0].check_id), std::string::npos);
  // A command is a mutation like an edit (what it changes is validated): it
  // may be the fix, so it runs.
  size_t before_command = transport_.sent.size();
  std::string make = Submit("ExecuteCommand", R"({"command":"make"})");
  EXPECT_EQ(results_.size(), 1u);
  EXPECT_GT(transport_.sent.size(), before_command);
  v1::Envelope made = Env();
  made.mutable_tool_result()->set_execution_id(make);
  made.mutable_tool_result()->set_status(v1::TOOL_STATUS_OK);
  Say(worker_, made);
  ASSERT_EQ(results_.size(), 2u);
  EXPECT_EQ(results_[1].status(), v1::TOOL_STATUS_OK);
  EXPECT_TRUE(results_[1].changes_tracked());
  results_.clear();
  // Ask mode changes nothing, so it is not held back.
  size_t sent = transport_.sent.size();
  Submit("ExecuteCommand", R"({"command":"ls"})", "ask");
  EXPECT_EQ(results_.size(), 0u);
  EXPECT_GT(launcher_.launched.size(), 2u);  // a read-only worker starts for it
  // Reads go through.
  std::string grep = Submit("Grep", R"({"pattern":"a"})");
  EXPECT_EQ(results_.size(), 0u);
  EXPECT_GT(transport_.sent.size(), sent);
  v1::Envelope done = Env();
  done.mutable_tool_result()->set_execution_id(grep);
  done.mutable_tool_result()->set_status(v1::TOOL_STATUS_OK);
  Say(worker_, done);
  // A fix that validates clean unblocks.
  Write("a.cc", "int a = b;\n", "int a = 1;\n");
  SayDiagnosed({});
  EXPECT_TRUE(coord_->Blocking().empty());
  EXPECT_EQ(coord_->Verdicts()[0].status, Verdict::kClean);
}

TEST_F(ValidationGateTest, AHostThatFailsIsTimedOutNeverClean) {
  Write("a.cc", "int a;\n", "int a = 2;\n");
  std::string host = Host();
  launcher_.Exit(coord_->pool().workers()[1].pid, SIGKILL);  // the lsp host dies mid-check
  ASSERT_TRUE(coord_->Poll(Duration::zero()).ok());
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].verdict().status(), "timed_out");
  EXPECT_NE(results_[0].verdict().reason().find("did not answer"), std::string::npos);
  EXPECT_EQ(coord_->Blocking().size(), 1u);
}

TEST_F(ValidationGateTest, FilesNothingValidatesAreNoValidatorWithoutAHost) {
  Write("notes.md", "a\n", "b\n");
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].verdict().status(), "no_validator");
  EXPECT_TRUE(coord_->Blocking().empty());
  for (const auto& w : coord_->pool().workers()) EXPECT_NE(w.policy, WorkerPolicy::kLspHost);
}

TEST_F(ValidationGateTest, TheNextWriteToTheFileWaitsForTheValidation) {
  Write("a.cc", "int a;\n", "int a = 1;\n");
  size_t requests = transport_.Count(worker_, v1::Envelope::kToolRequest);
  std::string second = Submit("WriteFile", R"({"content":"int a = 2;\n","file_path":"a.cc"})");
  EXPECT_EQ(transport_.Count(worker_, v1::Envelope::kToolRequest), requests);  // still waiting
  SayDiagnosed({});
  EXPECT_EQ(transport_.Count(worker_, v1::Envelope::kToolRequest), requests + 1);
  EXPECT_EQ(LastRequest(worker_)->execution_id(), second);
}

TEST_F(ValidationGateTest, MemoryForcedReasoningNeedsAQueryAfterAFailure) {
  Start(/*memory_forced=*/true);
  Write("a.cc", "int a;\n", "int a = b;\n");
  SayDiagnosed({{1, "b?"}});
  results_.clear();
  Submit("WriteFile", R"({"content":"int a = 1;\n","file_path":"a.cc"})");
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].status(), v1::TOOL_STATUS_REJECTED);
  EXPECT_NE(results_[0].error().message().find("memory_query"), std::string::npos);
  Submit("memory_query", R"({"query":"last_validation"})");
  ASSERT_EQ(results_.size(), 2u);
  EXPECT_EQ(results_[1].status(), v1::TOOL_STATUS_OK);
  EXPECT_NE(results_[1].output_head().find("\"status\": \"errors\""), std::string::npos) << results_[1].output_head();
  // Now the edit goes to a worker.
  std::string fix = Submit("WriteFile", R"({"content":"int a = 1;\n","file_path":"a.cc"})");
  EXPECT_EQ(LastRequest(worker_)->execution_id(), fix);
}

TEST_F(ValidationGateTest, TheModelsLspCheckOfAnUnchangedFileDoesNotBlock) {
  ASSERT_TRUE(WriteFileAtomic(ws_ + "/old.py", "x = y\n").ok());
  Submit("lsp_check", R"({"file_path":"old.py"})");
  const v1::ToolRequest* req = LastRequest(Host());
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(req->validation().content(), "x = y\n");
  EXPECT_FALSE(req->validation().want_baseline());
  EXPECT_EQ(req->validation().server().name(), "pyright");
  SayDiagnosed({{1, "y is not defined"}});
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].verdict().status(), "errors");
  EXPECT_FALSE(results_[0].verdict().counts());
  EXPECT_NE(results_[0].output_head().find("do not block"), std::string::npos);
  EXPECT_TRUE(coord_->Blocking().empty());
  // A missing file is an error, not a validation.
  Submit("lsp_check", R"({"file_path":"missing.py"})");
  EXPECT_EQ(results_.back().status(), v1::TOOL_STATUS_ERROR);
}

TEST_F(ValidationGateTest, NoValidatorAfterErrorsLeavesTheFileUnverified) {
  Write("a.cc", "int a;\n", "int a = b;\n");
  SayDiagnosed({{1, "b?"}});
  ASSERT_EQ(coord_->Blocking().size(), 1u);
  // The validator is gone now (say, clangd gave up and no check command).
  Write("a.cc", "int a = b;\n", "int a = c;\n");
  std::string host = Host();
  v1::Envelope e = Env();
  e.mutable_tool_result()->set_execution_id(LastRequest(host)->execution_id());
  e.mutable_tool_result()->set_status(v1::TOOL_STATUS_OK);
  e.mutable_tool_result()->mutable_validation()->set_outcome(v1::VALIDATION_OUTCOME_NO_VALIDATOR);
  e.mutable_tool_result()->mutable_validation()->set_reason("clangd cannot start");
  Say(host, e);
  ASSERT_EQ(results_.size(), 2u);
  EXPECT_EQ(results_[1].verdict().status(), "timed_out");
  EXPECT_NE(results_[1].verdict().reason().find("the last verdict was errors"), std::string::npos);
  EXPECT_EQ(coord_->Blocking().size(), 1u);
}

TEST_F(ValidationGateTest, AResumedSessionKeepsItsVerdictsAndTheFilesOriginals) {
  Write("a.cc", "int a = old_error;\n", "int a = old_error + new_error;\n");
  SayDiagnosed({{1, "old_error?"}, {1, "new_error?"}}, {{1, "old_error?"}});
  ASSERT_EQ(results_[0].verdict().status(), "errors");
  std::string session = coord_->session_id();
  // Another process continues the session.
  coord_.reset();
  coord_ = std::make_unique<Coordinator>(Options(), &clock_, &launcher_, &transport_);
  ASSERT_TRUE(coord_->StartWorkers().ok());
  ASSERT_TRUE(coord_->ResumeSession(ledger_.get(), session).ok());
  worker_ = coord_->pool().workers().back().id;
  Hello(worker_);
  // Still blocked.
  ASSERT_EQ(coord_->Blocking().size(), 1u);
  results_.clear();
  // The next write is judged against the file as it was before the session,
  // not as the blocked state left it: the new error, still there, still counts.
  std::string fix = Submit("WriteFile", R"({"content":"x","file_path":"a.cc"})");
  SayWritten(fix, "a.cc", "int a = old_error + new_error;\n", "int a = old_error + new_error + 0;\n");
  const v1::ToolRequest* req = LastRequest(Host());
  ASSERT_NE(req, nullptr);
  EXPECT_TRUE(req->validation().want_baseline());
  EXPECT_EQ(req->validation().baseline_content(), "int a = old_error;\n");
  SayDiagnosed({{1, "old_error?"}, {1, "new_error?"}}, {{1, "old_error?"}});
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].verdict().status(), "errors");
  EXPECT_EQ(results_[0].verdict().new_errors(), 1u);
}

// Validations count for the lsp host's breaker: once it opens, a write's
// verdict is unverified at once instead of a wait on a failing host.
TEST_F(ValidationGateTest, AnOpenLspHostBreakerGivesAnUnverifiedVerdictAtOnce) {
  for (int i = 0; i < 5; ++i) {
    std::string rel = "f" + std::to_string(i) + ".cc";
    Write(rel, "int a;\n", "int a = 1;\n");
    const v1::ToolRequest* req = LastRequest(Host());
    ASSERT_NE(req, nullptr);
    v1::Envelope e = Env();
    e.mutable_tool_result()->set_execution_id(req->execution_id());
    e.mutable_tool_result()->set_status(v1::TOOL_STATUS_CRASHED);
    e.mutable_tool_result()->set_exit_reason(v1::EXIT_REASON_CRASHED);
    Say(Host(), e);
  }
  bool open = false;
  for (const BreakerInfo& b : coord_->Breakers())
    open = open || (b.name == "worker:lsp_host" && b.state == BreakerState::kOpen);
  ASSERT_TRUE(open);
  int sent = transport_.Count(Host(), v1::Envelope::kToolRequest);
  results_.clear();
  Write("g.cc", "int g;\n", "int g = 1;\n");
  EXPECT_EQ(transport_.Count(Host(), v1::Envelope::kToolRequest), sent) << "the host was not asked";
  ASSERT_EQ(results_.size(), 1u);
  ASSERT_TRUE(results_[0].has_verdict());
  EXPECT_EQ(results_[0].verdict().status(), "timed_out");
  EXPECT_NE(results_[0].verdict().reason().find("circuit breaker worker:lsp_host"), std::string::npos)
      << results_[0].verdict().reason();
}

}  // namespace
}  // namespace odin

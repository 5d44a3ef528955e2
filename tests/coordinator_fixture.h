#pragma once
// CoordinatorFixture: the Coordinator as its unit tests build it, with a real
// ledger in a temporary directory, a fake clock and fake workers (the
// FakeLauncher and FakeTransport of tests/fakes.h). The test plays the
// workers: what one says goes into the transport's inbox and the coordinator
// polls once.
//
// Shared by the tests of the coordinator, its gates, the subagents'
// coordinator side and the planner's loop. Each passes the options its cases
// need to StartCoordinator (the workspace is the fixture's).

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/file_util.h"
#include "base/secrets.h"
#include "coordinator/coordinator.h"
#include "ledger/ledger.h"
#include "odin/v1/worker.pb.h"
#include "tests/fakes.h"

namespace odin::testing {

class CoordinatorFixture : public ::testing::Test {
 protected:
  void TearDown() override { StopCoordinator(); }

  // A fresh ledger (in dir_) and workspace (ws_), replacing those of an
  // earlier start, then the coordinator with these options and ws_ as its
  // workspace: its workers launched (none has said Hello yet) and the ledger
  // attached.
  void StartCoordinator(CoordinatorOptions o) {
    StopCoordinator();
    dir_ = *MakeTempDir("odin-fixture-ledger");
    ledger_ = std::move(Ledger::Open(dir_ + "/odin.db", Redactor()).value());
    ws_ = *RealPath(*MakeTempDir("odin-fixture-ws"));
    o.workspace = ws_;
    coord_ = std::make_unique<Coordinator>(std::move(o), &clock_, &launcher_, &transport_);
    ASSERT_TRUE(coord_->StartWorkers().ok());
    ASSERT_TRUE(coord_->AttachLedger(ledger_.get()).ok());
  }
  // The coordinator goes first, then the ledger and both directories.
  void StopCoordinator() {
    coord_.reset();
    ledger_.reset();
    if (!dir_.empty()) RemoveTree(dir_);
    if (!ws_.empty()) RemoveTree(ws_);
    dir_.clear();
    ws_.clear();
  }

  static v1::Envelope Env() { return NewEnvelope(); }

  // The worker `from` says e; the coordinator polls once.
  void Say(const std::string& from, const v1::Envelope& e) {
    transport_.inbox.push_back({from, e});
    ASSERT_TRUE(coord_->Poll(Duration::zero()).ok());
  }
  // The worker says Hello with the secret it was given.
  void Hello(const std::string& id) {
    v1::Envelope hello = Env();
    hello.mutable_hello()->set_worker_id(id);
    hello.mutable_hello()->set_secret(launcher_.SecretFor(id));
    Say(id, hello);
  }
  // Every worker still starting says Hello.
  void HelloAll() {
    std::vector<std::string> starting;
    for (const auto& w : coord_->pool().workers()) {
      if (w.state == WorkerPool::WorkerState::kStarting) starting.push_back(w.id);
    }
    for (const std::string& id : starting) Hello(id);
  }
  // The worker running execution_id ("" if none).
  std::string WorkerHolding(const std::string& execution_id) const {
    for (const auto& w : coord_->pool().workers()) {
      if (w.execution_id == execution_id) return w.id;
    }
    return "";
  }
  // The last envelope with this body sent to worker (nullptr if none).
  const v1::Envelope* LastTo(const std::string& worker, v1::Envelope::BodyCase body) const {
    for (auto it = transport_.sent.rbegin(); it != transport_.sent.rend(); ++it) {
      if (it->first == worker && it->second.body_case() == body) return &it->second;
    }
    return nullptr;
  }
  // Submits call; its result goes to results_, and whether it was recorded
  // to recorded_.
  std::string SubmitCall(ToolCall call) {
    return coord_->Submit(std::move(call), {nullptr, [this](const v1::ToolResult& r, const Status& s) {
                                              results_.push_back(r);
                                              recorded_.push_back(s);
                                            }});
  }

  std::string dir_, ws_;
  FakeClock clock_;
  FakeLauncher launcher_;
  FakeTransport transport_;
  std::unique_ptr<Ledger> ledger_;
  std::unique_ptr<Coordinator> coord_;
  std::vector<v1::ToolResult> results_;
  std::vector<Status> recorded_;
};

}  // namespace odin::testing

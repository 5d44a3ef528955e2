#include "coordinator/background_jobs.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

TEST(BackgroundJobsTest, OutputIsShownOnceAndTheNewestWinsWhenThereIsTooMuch) {
  BackgroundJobs jobs(/*keep_bytes=*/8);
  jobs.Add("ex_1", "main", "server", 5);
  jobs.Output("ex_1", "abc");
  BackgroundJobs::Unread first = jobs.TakeUnread("ex_1", 100);
  EXPECT_EQ(first.text, "abc");
  EXPECT_EQ(first.skipped, 0u);
  EXPECT_EQ(jobs.TakeUnread("ex_1", 100).text, "");  // shown already
  // More than is kept (at least keep bytes, trimmed at half as many again):
  // the oldest unread bytes are skipped, and counted.
  jobs.Output("ex_1", "0123456789");
  jobs.Output("ex_1", "XY");
  BackgroundJobs::Unread second = jobs.TakeUnread("ex_1", 100);
  EXPECT_EQ(second.text, "23456789XY");
  EXPECT_EQ(second.skipped, 2u);
  // More than the caller takes: the newest part.
  jobs.Output("ex_1", "hello");
  BackgroundJobs::Unread third = jobs.TakeUnread("ex_1", 2);
  EXPECT_EQ(third.text, "lo");
  EXPECT_EQ(third.skipped, 3u);
  EXPECT_EQ(jobs.Find("ex_1")->output_bytes, 20u);
}

TEST(BackgroundJobsTest, AChunkLargerThanWhatIsKeptKeepsItsEnd) {
  BackgroundJobs jobs(/*keep_bytes=*/4);
  jobs.Add("ex_1", "main", "x", 0);
  jobs.Output("ex_1", "abcdefgh");
  BackgroundJobs::Unread u = jobs.TakeUnread("ex_1", 100);
  EXPECT_EQ(u.text, "efgh");
  EXPECT_EQ(u.skipped, 4u);
}

TEST(BackgroundJobsTest, RunningJobsAndTheOneChargedWithWrites) {
  BackgroundJobs jobs;
  EXPECT_EQ(jobs.NewestRunning(), "");
  jobs.Add("ex_1", "main", "a", 1);
  jobs.Add("ex_2", "main", "b", 2);
  EXPECT_EQ(jobs.NewestRunning(), "ex_2");
  jobs.End("ex_2", "exited 0", 0);
  EXPECT_EQ(jobs.NewestRunning(), "ex_1");
  ASSERT_EQ(jobs.Running().size(), 1u);
  EXPECT_EQ(jobs.Running()[0]->id, "ex_1");
  EXPECT_EQ(jobs.Find("ex_2")->ended, "exited 0");
  EXPECT_EQ(jobs.Find("ex_2")->exit_code, 0);
  // Why it was told to stop: the first reason stands.
  jobs.Stopping("ex_1", "the message was cancelled");
  jobs.Stopping("ex_1", "the session ended");
  EXPECT_EQ(jobs.Find("ex_1")->stopping, "the message was cancelled");
  // An end is told once.
  jobs.End("ex_2", "stopped", -1);
  EXPECT_EQ(jobs.Find("ex_2")->ended, "exited 0");
  jobs.Changed("ex_1", {"a.txt", "b.txt"});
  jobs.Changed("ex_1", {"a.txt"});
  EXPECT_EQ(jobs.Find("ex_1")->changed, (std::vector<std::string>{"a.txt", "b.txt"}));
}

TEST(BackgroundJobsTest, OnlyTheNewestEndedJobsAreKept) {
  BackgroundJobs jobs(1024, /*keep_ended=*/2);
  for (int i = 1; i <= 4; ++i) {
    std::string id = "ex_" + std::to_string(i);
    jobs.Add(id, "main", "x", i);
    jobs.End(id, "exited 0", 0);
  }
  EXPECT_EQ(jobs.Find("ex_1"), nullptr);
  EXPECT_EQ(jobs.Find("ex_2"), nullptr);
  EXPECT_NE(jobs.Find("ex_3"), nullptr);
  EXPECT_NE(jobs.Find("ex_4"), nullptr);
}

TEST(BackgroundJobsTest, WaitersEndWithTheJobOrAtTheirDeadline) {
  BackgroundJobs jobs;
  SteadyTime t0{std::chrono::seconds(100)};
  jobs.Add("ex_1", "main", "x", 0);
  jobs.Wait("ex_1", "ex_w1", t0 + std::chrono::seconds(5));
  jobs.Wait("ex_1", "ex_w2", t0 + std::chrono::seconds(1));
  EXPECT_EQ(jobs.NextDeadline(), t0 + std::chrono::seconds(1));
  EXPECT_TRUE(jobs.TakeDue(t0).empty());
  auto due = jobs.TakeDue(t0 + std::chrono::seconds(2));
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0], std::make_pair(std::string("ex_1"), std::string("ex_w2")));
  jobs.Wait("ex_1", "ex_w3", t0 + std::chrono::seconds(9));
  EXPECT_TRUE(jobs.DropWaiter("ex_w3"));  // cancelled
  EXPECT_FALSE(jobs.DropWaiter("ex_w3"));
  EXPECT_EQ(jobs.TakeWaiters("ex_1"), (std::vector<std::string>{"ex_w1"}));
  EXPECT_FALSE(jobs.NextDeadline().has_value());
}

TEST(BackgroundJobsTest, TheListShowsEachJobOnOneLine) {
  BackgroundJobs jobs;
  EXPECT_EQ(DescribeBackgroundJobs(jobs, 0), "no background commands\n");
  jobs.Add("ex_1", "main", "python3 -m http.server\n8000", 1000);
  jobs.Add("ex_2", "main", "make", 2000);
  jobs.Changed("ex_2", {"/w/out.o"});
  jobs.End("ex_2", "exited 2", 2);
  EXPECT_EQ(DescribeBackgroundJobs(jobs, 13500),
            "ex_1  running 12 s  python3 -m http.server 8000\n"
            "ex_2  exited 2  make  (1 file changed)\n");
}

}  // namespace
}  // namespace odin

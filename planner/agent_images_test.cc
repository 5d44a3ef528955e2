#include <gtest/gtest.h>

#include "planner/agent.h"

namespace odin {
namespace {

ChatMessage ResultsWithImage(size_t bytes) {
  ChatMessage m{ChatMessage::Role::kToolResults, "", {}, {}};
  m.images.push_back({"image/png", std::string(bytes, 'x'), "a.png"});
  return m;
}

// Requests carry at most kMaxToolImageBytes of what Read calls returned:
// the newest turns' images stay, older ones go.
TEST(AgentImagesTest, OlderTurnsImagesGoPastTheBudget) {
  std::vector<ChatMessage> history = {ResultsWithImage(6'000'000),
                                      {ChatMessage::Role::kUser, "hi", {}, {}},
                                      ResultsWithImage(6'000'000),
                                      ResultsWithImage(6'000'000)};
  DropOldToolImages(&history);
  EXPECT_TRUE(history[0].images.empty());
  EXPECT_EQ(history[2].images.size(), 1u);
  EXPECT_EQ(history[3].images.size(), 1u);
}

}  // namespace
}  // namespace odin

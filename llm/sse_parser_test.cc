#include "llm/sse_parser.h"

#include <vector>

#include <gtest/gtest.h>

namespace odin {
namespace {

std::vector<SseEvent> Parse(const std::vector<std::string>& pieces, bool* pending = nullptr) {
  std::vector<SseEvent> events;
  SseParser p([&events](const SseEvent& e) { events.push_back(e); });
  for (const std::string& piece : pieces) p.Feed(piece);
  if (pending != nullptr) *pending = p.pending();
  return events;
}

TEST(SseParserTest, EventsEndAtBlankLines) {
  auto e = Parse({"event: ping\ndata: {}\n\ndata: a\ndata: b\n\n"});
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].event, "ping");
  EXPECT_EQ(e[0].data, "{}");
  EXPECT_EQ(e[1].data, "a\nb");
}

TEST(SseParserTest, PiecesOfAnySizeAndCrlf) {
  auto e = Parse({"da", "ta: x", "y\r", "\n\r\n", ": comment\n\n"});
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].data, "xy");
}

// The last event id is the stream's, kept until another sets it (what a
// reconnection sends as Last-Event-ID).
TEST(SseParserTest, TheLastEventIdIsKeptAcrossEvents) {
  auto e = Parse({"id: 7\ndata: a\n\ndata: b\n\nid: 9\ndata: c\n\n"});
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].id, "7");
  EXPECT_EQ(e[1].id, "7");
  EXPECT_EQ(e[2].id, "9");
}

// A line that never ends stops the parser rather than growing for ever.
TEST(SseParserTest, AnEventPastTheBoundIsDroppedWithWhatFollows) {
  std::vector<SseEvent> events;
  SseParser p([&events](const SseEvent& e) { events.push_back(e); });
  p.Feed("data: small\n\n");
  std::string piece(1 << 20, 'x');
  p.Feed("data: ");
  for (size_t fed = 0; fed <= SseParser::kMaxEventBytes && !p.overflowed(); fed += piece.size()) p.Feed(piece);
  EXPECT_TRUE(p.overflowed());
  p.Feed("\n\ndata: later\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "small");
}

TEST(SseParserTest, AnUnfinishedEventIsPending) {
  bool pending = false;
  auto e = Parse({"data: {\"half\":"}, &pending);
  EXPECT_TRUE(e.empty());
  EXPECT_TRUE(pending);
  Parse({"data: done\n\n"}, &pending);
  EXPECT_FALSE(pending);
}

}  // namespace
}  // namespace odin

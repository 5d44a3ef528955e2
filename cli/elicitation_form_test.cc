#include "cli/elicitation_form.h"

#include <gtest/gtest.h>

namespace odin {
namespace {

// server-everything's own form (its startElicitation tool), as it sends it.
constexpr char kForm[] = R"({"type":"object","properties":{
  "color":{"type":"string","description":"Favorite color"},
  "number":{"type":"integer","description":"Favorite number","minimum":1,"maximum":100},
  "pets":{"type":"string","enum":["cats","dogs","birds","fish","reptiles"],"description":"Favorite pets"},
  "happy":{"type":"boolean","title":"Happy?","default":true}},
  "required":["color","number"]})";

TEST(ElicitationFormTest, EachFieldIsAskedInTurnAndCheckedAgainstItsType) {
  StatusOr<ElicitationForm> form = ElicitationForm::Parse(kForm);
  ASSERT_TRUE(form.ok()) << form.status().message();
  ASSERT_EQ(form->size(), 4u);
  EXPECT_EQ(form->Question(), "color — Favorite color");  // required: first
  EXPECT_FALSE(form->Answer("").ok());                    // required
  ASSERT_TRUE(form->Answer("teal").ok());
  EXPECT_EQ(form->Question(), "number — Favorite number [integer]");
  EXPECT_EQ(form->Answer("lots").message(), "not a number");
  EXPECT_EQ(form->Answer("4.5").message(), "not a whole number");
  EXPECT_EQ(form->Answer("101").message(), "out of its range");
  ASSERT_TRUE(form->Answer("42").ok());
  // The required fields first, then the others by name.
  EXPECT_EQ(form->Question(), "Happy? [y/n] (default true; optional)");
  ASSERT_TRUE(form->Answer("").ok());
  EXPECT_EQ(form->Question(), "pets — Favorite pets [1. cats, 2. dogs, 3. birds, 4. fish, 5. reptiles] (optional)");
  EXPECT_FALSE(form->Answer("hamsters").ok());
  ASSERT_TRUE(form->Answer("2").ok());
  EXPECT_TRUE(form->done());
  EXPECT_EQ(form->ContentJson(), R"({"color":"teal","happy":true,"number":42,"pets":"dogs"})");
}

// The 2025-11-25 kinds server-everything's trigger-elicitation-request
// sends: formats, titled choices (oneOf), several choices (an array).
TEST(ElicitationFormTest, TitledAndMultipleChoicesAndFormats) {
  StatusOr<ElicitationForm> form = ElicitationForm::Parse(R"({"type":"object","properties":{
    "email":{"title":"String with email format","type":"string","format":"email"},
    "hero":{"type":"string","title":"Hero","oneOf":[{"const":"hero-1","title":"Superman"},
                                                   {"const":"hero-2","title":"Green Lantern"}],"default":"hero-1"},
    "fish":{"type":"array","title":"Fish","minItems":1,"maxItems":2,
            "items":{"anyOf":[{"const":"fish-1","title":"Tuna"},{"const":"fish-2","title":"Salmon"},
                              {"const":"fish-3","title":"Trout"}]},"default":["fish-1"]}}})");
  ASSERT_TRUE(form.ok()) << form.status().message();
  EXPECT_EQ(form->Question(), "String with email format [email] (optional)");
  EXPECT_EQ(form->Answer("nobody").message(), "not an email address");
  ASSERT_TRUE(form->Answer("me@example.com").ok());
  EXPECT_EQ(form->Question(),
            "Fish [1. Tuna (fish-1), 2. Salmon (fish-2), 3. Trout (fish-3)] (several: 1,3) (default [\"fish-1\"]; "
            "optional)");
  EXPECT_EQ(form->Answer("1,2,3").message(), "choose 1 to 2");
  ASSERT_TRUE(form->Answer("1, fish-3").ok());
  EXPECT_EQ(form->Question(), "Hero [1. Superman (hero-1), 2. Green Lantern (hero-2)] (default \"hero-1\"; optional)");
  ASSERT_TRUE(form->Answer("2").ok());
  EXPECT_EQ(form->ContentJson(), R"({"email":"me@example.com","fish":["fish-1","fish-3"],"hero":"hero-2"})");
}

TEST(ElicitationFormTest, AnOptionalFieldLeftEmptyIsLeftOut) {
  StatusOr<ElicitationForm> form =
      ElicitationForm::Parse(R"({"type":"object","properties":{"note":{"type":"string","maxLength":3}}})");
  ASSERT_TRUE(form.ok());
  EXPECT_FALSE(form->Answer("toolong").ok());
  ASSERT_TRUE(form->Answer("").ok());
  EXPECT_EQ(form->ContentJson(), "{}");
}

// A form of no fields is MCP's plain "proceed?": nothing to ask, and an
// answer to it is refused rather than read past the end.
TEST(ElicitationFormTest, AFormOfNoFieldsIsDoneAtOnce) {
  StatusOr<ElicitationForm> form = ElicitationForm::Parse(R"({"type":"object","properties":{}})");
  ASSERT_TRUE(form.ok());
  EXPECT_TRUE(form->done());
  EXPECT_FALSE(form->Answer("y").ok());
  EXPECT_EQ(form->ContentJson(), "{}");
  StatusOr<ElicitationForm> big = ElicitationForm::Parse(R"({"type":"object","properties":{"n":{"type":"integer"}}})");
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->Answer("1e19").message(), "out of its range");
}

TEST(ElicitationFormTest, AFormThatCannotBeAskedIsRefused) {
  for (const char* bad : {R"({"type":"object","properties":{"where":{"type":"object"}}})",
                          R"({"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}}}})",
                          R"({"type":"array"})", "not json", R"({"type":"object","properties":{"x":1}})"}) {
    EXPECT_FALSE(ElicitationForm::Parse(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace odin

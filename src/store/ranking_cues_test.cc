// Tests of the two query-side cues of the hybrid ranking's lexical side: answer types
// (store/answer_types.h: a question's asked-for kind of fact meets the slot kinds a memory
// states) and pseudo-relevance feedback (store/query_feedback.h: the best-ranked memories' shared
// words expand the query), and of their retrieval_config keys.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "index/bm25_index.h"
#include "store/answer_types.h"
#include "store/hybrid_ranking.h"
#include "store/lexical_terms.h"
#include "store/query_feedback.h"
#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::StatusIs;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Not;

TEST(AnswerTypesTest, AQuestionAsksForTheKindOfFactItsInterrogativeNames) {
  EXPECT_EQ(QuestionAnswerTypes("When is my dental cleaning?"), kAnswerDate | kAnswerTime);
  EXPECT_EQ(QuestionAnswerTypes("What time do I usually go to sleep?"), kAnswerTime);
  EXPECT_EQ(QuestionAnswerTypes("Which days do I run?"), kAnswerDate);
  EXPECT_EQ(QuestionAnswerTypes("What's the date of the inspection?"), kAnswerDate);
  EXPECT_EQ(QuestionAnswerTypes("How much is the rent?"), kAnswerAmount);
  EXPECT_EQ(QuestionAnswerTypes("How long is the drive to Seattle?"), kAnswerNumber);
  EXPECT_EQ(QuestionAnswerTypes("Who is my boss?"), kAnswerName);
  EXPECT_EQ(QuestionAnswerTypes("And where do I park?"), kAnswerName);
  // No type: a question whose answer is not a slot, or an interrogative too far in.
  EXPECT_EQ(QuestionAnswerTypes("What do I drink before work?"), 0u);
  EXPECT_EQ(QuestionAnswerTypes("How do I like my coffee?"), 0u);
  EXPECT_EQ(QuestionAnswerTypes("Remind me about the thing I forgot when?"), 0u);
  EXPECT_EQ(QuestionAnswerTypes(""), 0u);
}

TEST(AnswerTypesTest, AMemoryStatesTheKindsOfItsSlots) {
  EXPECT_EQ(TextAnswerTypes("speed work tuesdays at the track, 6 pm."), kAnswerDate | kAnswerTime);
  EXPECT_EQ(TextAnswerTypes("rent is $1,850 a month."), kAnswerAmount);
  EXPECT_EQ(TextAnswerTypes("i like my coffee strong"), 0u);
  EXPECT_THAT(AnswerTypeTerms(kAnswerDate | kAnswerName), ElementsAre("#date", "#name"));
  EXPECT_TRUE(AnswerTypeTerms(0).empty());
}

TEST(AnswerTypesTest, OnTheDatedMemoryOfTwoThatShareTheQuestionsWordsRanksFirst) {
  absl::StatusOr<HybridOptions> on =
      ParseRetrievalConfig({{"answer_types", true}, {"answer_type_weight", 2}});
  ASSERT_TRUE(on.ok()) << on.status();
  EXPECT_EQ(on->answer_type_weight, 2);
  const LexicalTerms terms(*on);
  const std::vector<std::string> dated = terms.Document("Tax preparer appointment is March 28");
  EXPECT_THAT(dated, Contains("#date"));
  const QueryTerms query = terms.Query("When do I see the tax preparer?");
  ASSERT_EQ(query.tokens.size(), query.weights.size());
  EXPECT_THAT(query.tokens, Contains("#date"));
  EXPECT_EQ(query.weights.back(), 2);

  Bm25Index index;
  ASSERT_TRUE(index.Add(1, terms.Document("Tax preparer office is in a strip mall by a bank")).ok());
  ASSERT_TRUE(index.Add(2, dated).ok());
  ASSERT_TRUE(index.Add(3, terms.Document("Lunch with Bev on Friday")).ok());
  const std::vector<Bm25Hit> hits = index.Search(query.tokens, 3, nullptr, nullptr, query.weights);
  ASSERT_GE(hits.size(), 2u);
  EXPECT_EQ(hits[0].id, 2);

  // Off (the default): no "#" term on either side.
  const LexicalTerms off(HybridOptions{});
  EXPECT_THAT(off.Document("Tax preparer appointment is March 28"), Not(Contains("#date")));
  EXPECT_THAT(off.Query("When do I see the tax preparer?").tokens, Not(Contains("#date")));
  EXPECT_THAT(ParseRetrievalConfig({{"answer_types", 1}}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseRetrievalConfig({{"answer_type_weight", -1}}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(QueryFeedbackTest, TheFeedbackDocumentsSharedWordsExpandTheQuery) {
  absl::StatusOr<HybridOptions> options =
      ParseRetrievalConfig({{"prf_docs", 2}, {"prf_terms", 2}, {"prf_weight", 0.5}});
  ASSERT_TRUE(options.ok()) << options.status();
  Bm25Index index;
  const auto add = [&](int64_t id, std::vector<std::string> tokens) {
    ASSERT_TRUE(index.Add(id, tokens).ok());
  };
  add(1, {"cold", "brew", "oat", "milk", "shift"});
  add(2, {"flat", "white", "oat", "milk", "cafe"});
  add(3, {"oat", "milk", "latte", "cafe"});
  add(4, {"tax", "appointment", "bank"});
  add(5, {"the", "shift", "ends", "at", "seven"});
  const QueryTerms query{{"brew"}, {1.0}};
  const QueryTerms expanded = ExpandWithFeedback(index, query, std::vector<int64_t>{1, 2, 99}, *options);
  ASSERT_EQ(expanded.tokens.size(), expanded.weights.size());
  ASSERT_EQ(expanded.tokens.size(), 3u);
  EXPECT_EQ(expanded.tokens[0], "brew");
  EXPECT_EQ(expanded.weights[0], 1.0);
  // "oat" and "milk" are in both feedback documents (and a third); "shift" in one of them; "cold"
  // and "flat" in one document of the index only, so they cannot lift another.
  EXPECT_THAT(expanded.tokens, Contains("oat"));
  EXPECT_THAT(expanded.tokens, Contains("milk"));
  EXPECT_THAT(expanded.tokens, Not(Contains("cold")));
  EXPECT_DOUBLE_EQ(expanded.weights[1], 0.5);
  // The expanded query ranks the memory that shares no query word but the feedback's words.
  const std::vector<Bm25Hit> hits = index.Search(expanded.tokens, 5, nullptr, nullptr, expanded.weights);
  std::vector<int64_t> ids;
  for (const Bm25Hit& h : hits) ids.push_back(h.id);
  EXPECT_THAT(ids, Contains(3));
  EXPECT_THAT(ids, Not(Contains(4)));

  // Off, or feedback the index does not hold: the query as it was.
  EXPECT_EQ(ExpandWithFeedback(index, query, std::vector<int64_t>{1, 2}, HybridOptions{}).tokens,
            query.tokens);
  EXPECT_EQ(ExpandWithFeedback(index, query, std::vector<int64_t>{98, 99}, *options).tokens, query.tokens);
  EXPECT_THAT(ParseRetrievalConfig({{"prf_docs", 21}}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseRetrievalConfig({{"prf_terms", 0}}), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace bulwark

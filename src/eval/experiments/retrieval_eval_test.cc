// The retrieval experiment on a real store: the labels parser's refusals, ranks recovered from
// Search against a hand-checked ranking, distractors that push a memory down, per-group summaries,
// and labels that name no memory refused before anything is written.
#include "eval/experiments/retrieval_eval.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "store/memory_store_impl.h"
#include "testing/lexical_store.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark::eval {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;
using ::testing::HasSubstr;

absl::StatusOr<std::vector<LabelledQuery>> Parse(const std::string& text) {
  std::istringstream in(text);
  return ParseRetrievalLabels(in);
}

std::vector<NewEntry> Entries(const std::vector<std::string>& texts) {
  std::vector<NewEntry> out;
  for (const std::string& t : texts) out.push_back({.text = t});
  return out;
}

TEST(ParseRetrievalLabels, ReadsQueriesRelevantAndGroup) {
  auto q = Parse(
      "{\"query\": \"a?\", \"relevant\": [\"x\", \"y\"], \"group\": \"multi\"}\n\n"
      "{\"query\": \"b?\", \"relevant\": [\"z\"]}\n");
  ASSERT_THAT(q, IsOk());
  ASSERT_EQ(q->size(), 2u);
  EXPECT_EQ((*q)[0].relevant, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ((*q)[0].group, "multi");
  EXPECT_EQ((*q)[1].group, "all");
}

TEST(ParseRetrievalLabels, RefusesBadLinesByNumber) {
  EXPECT_THAT(Parse("{\"query\": \"a\", \"relevant\": [\"x\"]}\nnot json\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 2: not valid JSON")));
  EXPECT_THAT(Parse("{\"query\": \"\", \"relevant\": [\"x\"]}\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 1: \"query\"")));
  EXPECT_THAT(Parse("{\"query\": \"a\", \"relevant\": []}\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"relevant\" must be")));
  EXPECT_THAT(Parse("{\"query\": \"a\", \"relevant\": [\"x\", \"x\"]}\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("listed twice")));
  EXPECT_THAT(Parse("{\"query\": \"a\", \"relevant\": [\"x\"], \"answer\": 1}\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown field \"answer\"")));
  EXPECT_THAT(Parse("[1, 2]\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a JSON object")));
  EXPECT_THAT(Parse("\n"), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no query")));
}

TEST(ParseRetrievalLabels, BoundsLinesAndQueries) {
  std::istringstream long_line(std::string(100, ' ') + "{}\n");
  EXPECT_THAT(ParseRetrievalLabels(long_line, {.max_line_bytes = 50}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("longer than 50")));
  std::istringstream two(
      "{\"query\": \"a\", \"relevant\": [\"x\"]}\n{\"query\": \"b\", \"relevant\": [\"x\"]}\n");
  EXPECT_THAT(ParseRetrievalLabels(two, {.max_queries = 1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("more than 1 queries")));
}

class RetrievalEvalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = bulwark::testing::CreateLexicalStore(dir_.path() / "store");
    ASSERT_NE(store_, nullptr);
  }
  bulwark::testing::TempDir dir_;
  std::unique_ptr<MemoryStore> store_;
};

TEST_F(RetrievalEvalTest, RanksRelevantMemoriesAndSummarisesByGroup) {
  const auto memories =
      Entries({"My passport expires in June 2031.", "The cat eats salmon kibble twice a day.",
               "Dentist appointment with Dr. Lee on May 3.", "I drive a green Subaru Forester."});
  const auto distractors =
      Entries({"Pascal's passport expires in March 2029.", "Ines feeds her cat tuna kibble."});
  const std::vector<LabelledQuery> queries = {
      {.query = "When does my passport expire?", .relevant = {memories[0].text}, .group = "lexical"},
      {.query = "automobile model", .relevant = {memories[3].text}, .group = "paraphrase"},
  };
  RetrievalEvalConfig config;
  config.recall_ks = {1, 5};
  config.ndcg_k = 5;
  config.depth = 5;
  size_t calls = 0;
  auto result =
      RunRetrievalEval(*store_, memories, distractors, queries, config, [&](size_t, size_t) { ++calls; });
  ASSERT_THAT(result, IsOk());
  EXPECT_EQ(calls, 2u);
  EXPECT_EQ(result->memories, 4u);
  EXPECT_EQ(result->distractors, 2u);
  ASSERT_EQ(result->queries.size(), 2u);
  // "passport expire(s)" is shared with both passport memories; "my" is not in the distractor, and
  // "June 2031" is not in the query, so the persona's memory must rank first or second.
  const QueryOutcome& passport = result->queries[0];
  ASSERT_EQ(passport.ranks.relevant_ranks.size(), 1u);
  EXPECT_LE(passport.ranks.relevant_ranks[0], 2);
  EXPECT_EQ(passport.top[passport.ranks.relevant_ranks[0] - 1], memories[0].text);
  // Without synonyms "automobile model" shares no word with any entry: the car memory cannot
  // rank first (all scores tie at 0 and ties go to the older row, or nothing is returned).
  const std::vector<int>& car = result->queries[1].ranks.relevant_ranks;
  EXPECT_TRUE(car.empty() || car[0] > 1) << car[0];
  ASSERT_EQ(result->groups.size(), 2u);
  EXPECT_EQ(result->groups[0].group, "lexical");
  EXPECT_EQ(result->groups[1].group, "paraphrase");
  EXPECT_DOUBLE_EQ(result->groups[1].summary.recall[0].mean, 0.0);
  EXPECT_DOUBLE_EQ(result->overall.recall[0].mean, (passport.ranks.relevant_ranks[0] == 1 ? 1.0 : 0.0) / 2);
  const nlohmann::json json = ToJson(*result);
  for (const char* key : {"recall_at_1", "recall_at_5", "mrr", "ndcg_at_5"}) {
    EXPECT_TRUE(json["overall"][key].is_number()) << key;
  }
  EXPECT_EQ(json["store"]["entries"], 6);
  EXPECT_THAT(ToMarkdown(*result), HasSubstr("| paraphrase"));
}

TEST_F(RetrievalEvalTest, RefusesLabelsThatNameNoMemoryBeforeWriting) {
  const auto memories = Entries({"My passport expires in June 2031."});
  const std::vector<LabelledQuery> queries = {
      {.query = "passport?", .relevant = {"My passport expires in 2031."}}};
  EXPECT_THAT(RunRetrievalEval(*store_, memories, {}, queries, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not among the memories")));
  auto stats = store_->Stats();
  ASSERT_THAT(stats, IsOk());
  for (const NamespaceStats& ns : stats->namespaces) EXPECT_EQ(ns.active, 0) << ns.name_space;
}

TEST_F(RetrievalEvalTest, Bm25AndFusionRankTheSameEntries) {
  const auto memories =
      Entries({"My passport expires in June 2031.", "The cat eats salmon kibble twice a day.",
               "Dentist appointment with Dr. Lee on May 3."});
  const auto distractors =
      Entries({"Pascal's dentist appointment is on June 9.", "Ines feeds her cat tuna kibble."});
  const std::vector<LabelledQuery> queries = {
      {.query = "salmon kibble", .relevant = {memories[1].text}},
      {.query = "zebra", .relevant = {memories[2].text}},
  };
  LexicalEmbedder tokenizer(nullptr);
  RetrievalEvalConfig config;
  config.tokenizer = &tokenizer;
  config.ranking = Ranking::kBm25;
  auto bm25 = RunRetrievalEval(*store_, memories, distractors, queries, config);
  ASSERT_THAT(bm25, IsOk());
  // "salmon" is in one entry only: rank 1; "kibble" also matches Ines' entry: rank 2, nothing else.
  EXPECT_EQ(bm25->queries[0].ranks.relevant_ranks, std::vector<int>{1});
  EXPECT_EQ(bm25->queries[0].top.size(), 2u);
  EXPECT_TRUE(bm25->queries[1].top.empty());  // no term matches: BM25 returns nothing
  EXPECT_EQ(ToJson(*bm25)["ranking"], "bm25");

  auto other = bulwark::testing::CreateLexicalStore(dir_.path() / "rrf");
  ASSERT_NE(other, nullptr);
  config.ranking = Ranking::kRrf;
  auto rrf = RunRetrievalEval(*other, memories, distractors, queries, config);
  ASSERT_THAT(rrf, IsOk());
  EXPECT_EQ(rrf->queries[0].ranks.relevant_ranks, std::vector<int>{1});  // first in both rankings
  EXPECT_EQ(rrf->queries[0].top.size(), 5u);  // the vector ranking contributes every entry

  config.tokenizer = nullptr;
  EXPECT_THAT(RunRetrievalEval(*other, memories, distractors, queries, config),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("need a tokenizer")));
}

// kHybrid is the store's own hybrid ranking; kVector sets the namespace to vector ranking even in a
// store whose default is hybrid, so the two are compared on the same code path.
TEST_F(RetrievalEvalTest, HybridIsTheStoresRankingAndVectorIsPinned) {
  const auto memories =
      Entries({"My passport expires in June 2031.", "The cat eats salmon kibble twice a day.",
               "Dentist appointment with Dr. Lee on May 3."});
  const auto distractors =
      Entries({"Pascal's dentist appointment is on June 9.", "Ines feeds her cat tuna kibble."});
  const std::vector<LabelledQuery> queries = {{.query = "salmon kibble", .relevant = {memories[1].text}}};
  RetrievalEvalConfig config;
  config.ranking = Ranking::kHybrid;  // needs no tokenizer: the store has its own
  auto hybrid = RunRetrievalEval(*store_, memories, distractors, queries, config);
  ASSERT_THAT(hybrid, IsOk());
  EXPECT_EQ(hybrid->queries[0].ranks.relevant_ranks, std::vector<int>{1});
  EXPECT_EQ(ToJson(*hybrid)["ranking"], "hybrid");
  EXPECT_EQ(*store_->impl().retrieval->Get(config.name_space), Retrieval::kHybrid);

  auto other = bulwark::testing::CreateLexicalStore(dir_.path() / "vector");
  ASSERT_NE(other, nullptr);
  config.ranking = Ranking::kVector;
  ASSERT_THAT(RunRetrievalEval(*other, memories, distractors, queries, config), IsOk());
  EXPECT_EQ(*other->impl().retrieval->Get(config.name_space), Retrieval::kVector);
}

TEST(Ranking, NamesRoundTrip) {
  for (Ranking r : {Ranking::kVector, Ranking::kBm25, Ranking::kRrf, Ranking::kHybrid})
    EXPECT_EQ(ParseRanking(ToString(r)), r);
  EXPECT_EQ(ParseRanking("cosine"), std::nullopt);
}

TEST_F(RetrievalEvalTest, RefusesBadConfig) {
  const auto memories = Entries({"My passport expires in June 2031."});
  const std::vector<LabelledQuery> queries = {{.query = "passport?", .relevant = {memories[0].text}}};
  RetrievalEvalConfig config;
  config.recall_ks = {20};
  EXPECT_THAT(RunRetrievalEval(*store_, memories, {}, queries, config),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("recall k 20")));
}

}  // namespace
}  // namespace bulwark::eval

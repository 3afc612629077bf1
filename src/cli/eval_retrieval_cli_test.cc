// `bulwark-lab eval retrieval` through the CLI on a tiny fixture: the JSON shape, a recall value
// computed by hand, store sizes from --distractor-count and --store-size, and bad input refused
// with exit 1 and a clear message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "cli/lab_test_util.h"

namespace bulwark::cli {
namespace {

using ::testing::HasSubstr;

constexpr char kNoSynonyms[] = R"({"kind":"lexical","synonyms":false})";

class EvalRetrievalCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    memories_ = Write("memories.jsonl", {{{"text", "Passport expires in June 2031."}},
                                         {{"text", "Dentist cleaning with Dr. Lee on May 3."}},
                                         {{"text", "Drives a green Subaru Forester."}}});
    // Two queries share their words with one memory; the third shares none with anything, so all
    // its scores tie and the older rows come first: the car memory (written last) is not rank 1.
    labels_ = Write("labels.jsonl", {{{"query", "passport expires"},
                                      {"relevant", {"Passport expires in June 2031."}},
                                      {"group", "lexical"}},
                                     {{"query", "dentist cleaning Lee"},
                                      {"relevant", {"Dentist cleaning with Dr. Lee on May 3."}},
                                      {"group", "lexical"}},
                                     {{"query", "automobile"},
                                      {"relevant", {"Drives a green Subaru Forester."}},
                                      {"group", "paraphrase"}}});
    distractors_ = Write("distractors.jsonl", {{{"text", "Pascal's knee follow-up is on August 27."}},
                                               {{"text", "Ines waters the ferns on Sundays."}},
                                               {{"text", "Omar's car insurance renews in October."}}});
  }
  std::filesystem::path Write(const std::string& name, const std::vector<nlohmann::json>& lines) {
    std::ofstream f(dir_ / name);
    for (const auto& l : lines) f << l.dump() << "\n";
    return dir_ / name;
  }
  CliResult Eval(std::vector<std::string> extra, const std::string& embedder = kNoSynonyms) {
    std::vector<std::string> args = {"eval",     "retrieval",      "--memories", memories_.string(),
                                     "--labels", labels_.string(), "--embedder", embedder};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunLabCli(dir_ / ("store" + std::to_string(runs_++)), args);
  }
  testing::TempDir dir_;
  std::filesystem::path memories_, labels_, distractors_;
  int runs_ = 0;
};

TEST_F(EvalRetrievalCliTest, WritesOverallAndGroupMetrics) {
  const auto json_path = dir_ / "out" / "retrieval.json";
  CliResult r =
      Eval({"--distractors", distractors_.string(), "--distractor-count", "2", "--json", json_path.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("| overall"));
  EXPECT_THAT(r.out, HasSubstr("| paraphrase"));
  EXPECT_THAT(r.out, HasSubstr("recall@5"));
  std::ifstream f(json_path);
  const nlohmann::json out = nlohmann::json::parse(f);
  for (const char* key : {"recall_at_1", "recall_at_5", "mrr", "ndcg_at_10"}) {
    ASSERT_TRUE(out["overall"][key].is_number()) << key;
    ASSERT_TRUE(out["overall"][std::string(key) + "_ci"].is_array()) << key;
  }
  EXPECT_NEAR(out["overall"]["recall_at_1"].get<double>(), 2.0 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(out["groups"]["lexical"]["recall_at_1"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(out["groups"]["lexical"]["mrr"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(out["groups"]["paraphrase"]["recall_at_1"].get<double>(), 0.0);
  EXPECT_EQ(out["store"]["memories"], 3);
  EXPECT_EQ(out["store"]["distractors"], 2);
  EXPECT_EQ(out["queries"].size(), 3u);
}

TEST_F(EvalRetrievalCliTest, StoreSizeCountsTheMemories) {
  const auto json_path = dir_ / "size.json";
  CliResult r =
      Eval({"--distractors", distractors_.string(), "--store-size", "5", "--json", json_path.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream f(json_path);
  EXPECT_EQ(nlohmann::json::parse(f)["store"]["entries"], 5);
}

TEST_F(EvalRetrievalCliTest, Bm25RankingFindsTheLexicalQueries) {
  const auto json_path = dir_ / "bm25.json";
  CliResult r = Eval({"--ranking", "bm25", "--json", json_path.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("ranking bm25"));
  std::ifstream f(json_path);
  const nlohmann::json out = nlohmann::json::parse(f);
  EXPECT_EQ(out["ranking"], "bm25");
  EXPECT_DOUBLE_EQ(out["groups"]["lexical"]["recall_at_1"].get<double>(), 1.0);
  // "automobile" is in no entry: BM25 returns nothing for it.
  EXPECT_TRUE(out["queries"][2]["top"].empty());

  CliResult bad = Eval({"--ranking", "cosine"});
  EXPECT_NE(bad.code, 0);
  EXPECT_THAT(bad.err, HasSubstr("cosine"));
}

TEST_F(EvalRetrievalCliTest, RefusesBadInputWithAClearError) {
  CliResult too_small = Eval({"--distractors", distractors_.string(), "--store-size", "2"});
  EXPECT_EQ(too_small.code, 1);
  EXPECT_THAT(too_small.err, HasSubstr("smaller than the 3 memories"));

  CliResult too_many = Eval({"--distractors", distractors_.string(), "--distractor-count", "9"});
  EXPECT_EQ(too_many.code, 1);
  EXPECT_THAT(too_many.err, HasSubstr("has only 3"));

  CliResult no_file = Eval({"--distractors", (dir_ / "absent.jsonl").string()});
  EXPECT_EQ(no_file.code, 1);
  EXPECT_THAT(no_file.err, HasSubstr("cannot open the distractors file"));

  CliResult bad_embedder = Eval({}, "not json");
  EXPECT_EQ(bad_embedder.code, 1);
  EXPECT_THAT(bad_embedder.err, HasSubstr("--embedder must be a JSON object"));

  labels_ = Write("bad_labels.jsonl", {{{"query", "passport"}, {"relevant", {"Passport expires in 2031."}}}});
  CliResult unknown = Eval({});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("not among the memories"));

  labels_ = Write("broken.jsonl", {{{"query", "passport"}}});
  CliResult broken = Eval({});
  EXPECT_EQ(broken.code, 1);
  EXPECT_THAT(broken.err, HasSubstr("line 1: \"relevant\""));
}

}  // namespace
}  // namespace bulwark::cli

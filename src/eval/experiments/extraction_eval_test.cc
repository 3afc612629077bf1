// The extraction experiment on a small store: one row per protocol x attack x estimator x benign
// length, the held-out rows come from fits without their family, and the numbers are rates.
#include "eval/experiments/extraction_eval.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark::eval {
namespace {

using ::bulwark::testing::IsOk;

TEST(RunExtractionEval, GivesOneRowPerAttackEstimatorAndLength) {
  const std::string corpora = std::string(BULWARK_SOURCE_DIR) + "/data/corpora/";
  std::ifstream in(corpora + "benign_memories.jsonl");
  auto memories = ParseMemoryFile(in);
  ASSERT_THAT(memories, IsOk());
  memories->resize(120);
  ExtractionEvalConfig config;
  config.memories = *memories;
  config.attack_sessions = 1;
  config.benign_sessions = 2;
  config.estimators = {"count_calibrated+intent", "count"};  // "+intent": the grammar's evidence too
  config.external_memories = 100;                            // a small external store of WordNet glosses
  config.base.generated_sessions = 1;
  config.base.fit.optimizer.steps = 50;
  config.base.generated_attacks = {"mextra_cosine", "rag_thief"};  // DGEA's suffix search is the slow one
  config.base.benign_query_files = {corpora + "benign_queries.jsonl"};
  config.store_options.embedder_config = {{"kind", "lexical"}, {"synonyms", false}};
  config.store_options.write_gate_config = {
      {"memsad", {{"enabled", false}}},     {"memsad_plus", {{"enabled", false}}},
      {"validation", {{"enabled", false}}}, {"proactive", {{"enabled", false}}},
      {"conflict", {{"enabled", false}}},   {"flood", {{"enabled", false}}}};
  bulwark::testing::TempDir dir;
  auto result = RunExtractionEval(config, dir.path());
  ASSERT_THAT(result, IsOk());
  // in-family: 2 attacks x 2 estimators x 2 lengths; held-out: the same once per left-out family;
  // pot-free: 2 baselines x 2 attacks x 2 lengths; external: as in-family.
  ASSERT_EQ(result->rows.size(), 32u);
  size_t held_out = 0, pot_free = 0, external = 0;
  for (const ExtractionRow& r : result->rows) {
    held_out += r.protocol == "held-out" ? 1 : 0;
    pot_free += r.protocol == "pot-free" ? 1 : 0;
    external += r.protocol == "external" ? 1 : 0;
    EXPECT_EQ(r.metrics.attack_sessions, 1u) << r.attack;
    EXPECT_EQ(r.metrics.benign_sessions, 2u) << r.attack;
    ASSERT_TRUE(r.metrics.auroc.has_value());
    EXPECT_GE(*r.metrics.auroc, 0.0);
    EXPECT_LE(*r.metrics.auroc, 1.0);
    EXPECT_GE(r.tpr_at_10fpr, r.metrics.tpr_at_1fpr.value_or(0));
  }
  EXPECT_EQ(held_out, 8u);
  EXPECT_TRUE(std::any_of(result->rows.begin(), result->rows.end(), [](const ExtractionRow& r) {
    return r.protocol == "held-out" && r.estimator == "count_calibrated+intent";
  }));
  EXPECT_EQ(pot_free, 8u);
  EXPECT_EQ(external, 8u);
  EXPECT_GT(result->pots, 0u);
  EXPECT_EQ(result->external_memories, 100u);
  EXPECT_GT(result->external_pots, 0u);
  EXPECT_EQ(ToJson(*result)["rows"].size(), 32u);
  // MEXTRA asks in extraction words every time; the benign simulator does not.
  for (const ExtractionRow& r : result->rows) {
    if (r.protocol == "pot-free" && r.estimator == "keyword_filter" && r.attack == "mextra_cosine") {
      EXPECT_EQ(*r.metrics.auroc, 1.0) << r.benign_length;
    }
  }
}

}  // namespace
}  // namespace bulwark::eval

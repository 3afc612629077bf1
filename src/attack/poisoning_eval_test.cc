// The poisoning and adaptive experiments on a tiny configuration: the JSON has the documented
// shape and the numbers behave as the attacks and defenses say they must.
#include "attack/poisoning_eval.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "testing/temp_dir.h"

namespace bulwark::attack {
namespace {

const EvalCorpora& Corpora() {
  static const EvalCorpora* corpora = [] {
    auto c = LoadEvalCorpora(std::filesystem::path(BULWARK_SOURCE_DIR) / "data/corpora");
    EXPECT_TRUE(c.ok()) << c.status();
    return new EvalCorpora(c.ok() ? *std::move(c) : EvalCorpora{});
  }();
  return *corpora;
}

PoisoningEvalConfig Tiny() {
  PoisoningEvalConfig config;
  config.memories = 40;
  config.history_queries = 20;
  config.reference = 12;
  config.topics = 1;
  config.scenarios = 1;
  return config;
}

TEST(EvalCorporaTest, LoadsAllFiles) {
  const EvalCorpora& c = Corpora();
  EXPECT_EQ(c.memories.size(), 1400u);
  EXPECT_EQ(c.reference.size(), 280u);
  EXPECT_EQ(c.benign_queries.size(), 350u);
  EXPECT_EQ(c.topics.size(), 42u);
  for (const VictimTopic& t : c.topics) EXPECT_EQ(t.queries.size(), 3u) << t.topic;
  EXPECT_EQ(c.scenarios.size(), 20u);
  EXPECT_FALSE(LoadEvalCorpora("/nonexistent").ok());
}

TEST(PoisoningEvalTest, TinyRunHasTheDocumentedShapeAndTheTriggeredAttackIsRetrieved) {
  bulwark::testing::TempDir dir;
  auto seed = RunPoisoningSeed(Corpora(), Tiny(), 1, dir.path());
  ASSERT_TRUE(seed.ok()) << seed.status();
  const PoisoningSummary summary = SummarizePoisoning({*seed}, 5);
  std::printf("%s", summary.markdown.c_str());
  const nlohmann::json attacks = summary.json["attacks"];
  for (const std::string& attack : kPoisoningAttacks()) {
    ASSERT_TRUE(attacks.contains(attack)) << attack;
    const nlohmann::json a = attacks[attack];
    EXPECT_GT(a["poison"].get<int>(), 0);
    EXPECT_TRUE(a["asr_r"].contains("none"));
    for (const std::string& det : kEvalDetectors()) {
      ASSERT_TRUE(a["detectors"].contains(det)) << attack << " " << det;
      const double auroc = a["detectors"][det]["auroc"].get<double>();
      EXPECT_GE(auroc, 0.0);
      EXPECT_LE(auroc, 1.0);
      // A defense that flags every poison leaves none in any top k. (A defense can raise ASR-R:
      // removing flagged benign entries lets unflagged poison move up.)
      if (a["detectors"][det]["tpr"]["value"].get<double>() == 1.0) {
        EXPECT_EQ(a["asr_r"][det]["successes"].get<int>(), 0) << attack << " " << det;
      }
    }
    // The attacker's answer comes from a retrieved poison, and its action from that answer:
    // ASR-T <= ASR-A <= ASR-R in counts, with and without every defense.
    for (const auto& [d, r] : a["asr_r"].items()) {
      ASSERT_TRUE(a["asr_a"].contains(d) && a["asr_t"].contains(d)) << attack << " " << d;
      EXPECT_EQ(a["asr_a"][d]["trials"], r["trials"]);
      EXPECT_EQ(a["asr_t"][d]["trials"], a["action_queries"]);
      EXPECT_LE(a["asr_a"][d]["successes"].get<int>(), r["successes"].get<int>()) << attack << " " << d;
      EXPECT_LE(a["asr_t"][d]["successes"].get<int>(), a["asr_a"][d]["successes"].get<int>()) << attack << " " << d;
      EXPECT_EQ(a["asr_a"][d]["ci95"].size(), 2u);
    }
  }
  // Triggered protocol: AgentPoison's poison is retrieved for every triggered victim query.
  EXPECT_EQ(attacks["agentpoison"]["asr_r"]["none"]["value"].get<double>(), 1.0);
  // The attacker cannot watermark: every directly written poison is flagged by the watermark.
  EXPECT_EQ(attacks["agentpoison"]["detectors"]["watermark"]["tpr"]["value"].get<double>(), 1.0);
  EXPECT_EQ(attacks["smsr_direct"]["detectors"]["watermark"]["tpr"]["value"].get<double>(), 1.0);
  // The composite (OR) flags at least what any single detector flags.
  for (const std::string& attack : kPoisoningAttacks())
    for (const std::string& det : kEvalDetectors())
      EXPECT_GE(attacks[attack]["detectors"]["composite"]["tpr"]["successes"].get<int>(),
                attacks[attack]["detectors"][det]["tpr"]["successes"].get<int>());
}

TEST(AdaptiveEvalTest, TinyRunReportsEvasionAndSubstitutions) {
  bulwark::testing::TempDir dir;
  AdaptiveEvalConfig config{.base = Tiny(), .max_substitutions = 2, .targets = {"memsad"}};
  config.base.memories = 30;
  config.base.attacks = {"minja"};
  config.base.synonyms = false;  // substitutions move the embedding, so memsad can be evaded
  auto seed = RunAdaptiveSeed(Corpora(), config, 1, dir.path());
  ASSERT_TRUE(seed.ok()) << seed.status();
  const PoisoningSummary summary = SummarizeAdaptive({*seed});
  std::printf("%s", summary.markdown.c_str());
  for (const char* target : {"memsad"}) {
    const nlohmann::json r = summary.json["attacks"]["minja"][target];
    EXPECT_EQ(r["poison"].get<int>(), 10);
    EXPECT_GT(r["substitutions_per_entry"].get<double>(), 0.0) << target;
    // MINJA records echo the victim query that is in H: memsad flags them; the white-box
    // substitutions lower the score and evade some, while ASR-R does not drop.
    EXPECT_GT(r["tpr_before"]["successes"].get<int>(), 0) << target;
    EXPECT_LT(r["tpr_after"]["successes"].get<int>(), r["tpr_before"]["successes"].get<int>()) << target;
    EXPECT_GT(r["evaded"].get<int>(), 0) << target;
    EXPECT_TRUE(r.contains("delta_asr_r"));
  }
}

}  // namespace
}  // namespace bulwark::attack

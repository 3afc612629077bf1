// The poisoning and adaptive experiments on a tiny configuration: the JSON has the documented
// shape and the numbers behave as the attacks and defenses say they must.
#include "attack/poisoning_eval.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "attack/adaptive_eval.h"
#include "store/memory_store.h"
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
      EXPECT_LE(a["asr_t"][d]["successes"].get<int>(), a["asr_a"][d]["successes"].get<int>())
          << attack << " " << d;
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

// MemSAD App. D / Table 3 note: calibrating on triggered queries raises AgentPoison's memsad TPR.
// The triggered row writes the same poisons as the plain one, so the comparison is per poison.
TEST(PoisoningEvalTest, TriggeredCalibrationFlagsAtLeastTheAgentPoisonPoisonsPlainCalibrationFlags) {
  bulwark::testing::TempDir dir;
  PoisoningEvalConfig config = Tiny();
  config.topics = 2;  // two triggers, so two triggered namespaces
  config.attacks = {"agentpoison", "agentpoison_triggered"};
  auto seed = RunPoisoningSeed(Corpora(), config, 1, dir.path());
  ASSERT_TRUE(seed.ok()) << seed.status();
  const PoisoningSummary summary = SummarizePoisoning({*seed}, 5);
  std::printf("%s", summary.markdown.c_str());
  const nlohmann::json plain = summary.json["attacks"]["agentpoison"];
  const nlohmann::json triggered = summary.json["attacks"]["agentpoison_triggered"];
  EXPECT_EQ(triggered["poison"].get<int>(), 10);
  EXPECT_EQ(triggered["poison"], plain["poison"]);
  EXPECT_EQ(triggered["queries"], plain["queries"]);
  EXPECT_EQ(triggered["benign"].get<int>(), 2 * plain["benign"].get<int>());  // one namespace per topic
  EXPECT_EQ(triggered["asr_r"]["none"]["value"].get<double>(), 1.0);
  EXPECT_FALSE(plain["triggered_calibration"].get<bool>());
  EXPECT_TRUE(triggered["triggered_calibration"].get<bool>());
  EXPECT_GE(triggered["detectors"]["memsad"]["tpr"]["value"].get<double>(),
            plain["detectors"]["memsad"]["tpr"]["value"].get<double>());

  // The stored calibrations, read back from the store: the plain namespace's is not triggered;
  // each triggered namespace's is, with the trigger its poisons carry.
  auto store = MemoryStore::Open(dir.path() / "poisoning-1", {});
  ASSERT_TRUE(store.ok()) << store.status();
  nlohmann::json plain_calibration = (*store)->CalibrationSummary("eval-agentpoison");
  ASSERT_TRUE(plain_calibration.is_object());
  EXPECT_FALSE(plain_calibration["memsad"]["triggered"].get<bool>());
  for (int i = 0; i < 2; ++i) {
    const std::string ns = "eval-agentpoison_triggered-" + std::to_string(i);
    nlohmann::json calibration = (*store)->CalibrationSummary(ns);
    ASSERT_TRUE(calibration.is_object()) << ns;
    EXPECT_TRUE(calibration["memsad"]["triggered"].get<bool>()) << ns;
    const std::string trigger = calibration["provenance"].value("trigger", "");
    ASSERT_FALSE(trigger.empty()) << ns;
    int carrying = 0;
    auto exported = (*store)->Export(ns, ~0u, [&](const Entry& e) {
      carrying += e.text.find(trigger) != std::string::npos;
      return absl::OkStatus();
    });
    ASSERT_TRUE(exported.ok()) << exported.status();
    EXPECT_EQ(carrying, 5) << ns << ": the topic's n = 5 poisons carry the calibration's trigger";
  }
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

// Table 18's AgentPoison cell: the adaptive attacker against triggered calibration, one namespace
// pair per victim topic, calibrated with that topic's trigger.
TEST(AdaptiveEvalTest, TriggeredAgentPoisonRowUsesTriggeredCalibrationPerTopic) {
  bulwark::testing::TempDir dir;
  AdaptiveEvalConfig config{.base = Tiny(), .max_substitutions = 2, .targets = {"memsad"}};
  config.base.topics = 2;
  config.base.attacks = {"agentpoison", "agentpoison_triggered"};
  config.base.synonyms = false;
  auto seed = RunAdaptiveSeed(Corpora(), config, 1, dir.path());
  ASSERT_TRUE(seed.ok()) << seed.status();
  const PoisoningSummary summary = SummarizeAdaptive({*seed});
  std::printf("%s", summary.markdown.c_str());
  const nlohmann::json plain = summary.json["attacks"]["agentpoison"]["memsad"];
  const nlohmann::json triggered = summary.json["attacks"]["agentpoison_triggered"]["memsad"];
  EXPECT_EQ(triggered["poison"].get<int>(), 10) << "the same n = 5 poisons per topic";
  EXPECT_EQ(triggered["poison"], plain["poison"]);
  EXPECT_GE(triggered["tpr_before"]["successes"].get<int>(), plain["tpr_before"]["successes"].get<int>())
      << "triggered calibration flags at least what plain calibration flags";
  EXPECT_EQ(triggered["asr_r_before"]["value"].get<double>(), 1.0);

  auto store = MemoryStore::Open(dir.path() / "adaptive-1", {});
  ASSERT_TRUE(store.ok()) << store.status();
  for (const char* prefix : {"orig-", "syn-memsad-"}) {
    for (int i = 0; i < 2; ++i) {
      const std::string ns = std::string(prefix) + "agentpoison_triggered-" + std::to_string(i);
      const nlohmann::json calibration = (*store)->CalibrationSummary(ns);
      ASSERT_TRUE(calibration.is_object()) << ns;
      EXPECT_TRUE(calibration["memsad"]["triggered"].get<bool>()) << ns;
    }
  }
}

}  // namespace
}  // namespace bulwark::attack

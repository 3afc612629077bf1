// `bulwark-lab eval poisoning` and `bulwark-lab eval adaptive` through the CLI on tiny configurations:
// the JSON shape, and one property each (the triggered AgentPoison poison is always retrieved
// without defenses, and triggered calibration flags at least what plain calibration flags; a
// defense that flags every poison leaves none retrieved; the synonym attacker substitutes words
// and evades memsad).
#include <gtest/gtest.h>

#include <fstream>

#include "attack/poisoning_eval.h"
#include "cli/lab_test_util.h"

namespace bulwark::cli {
namespace {

nlohmann::json ReadJson(const std::filesystem::path& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

TEST(EvalAttackCliTest, PoisoningReportsTheAttackDefenseMatrix) {
  testing::TempDir dir;
  const auto json_path = dir.path() / "poisoning.json";
  const CliResult r = RunLabCli(dir.path() / "unused", {"eval",
                                                        "poisoning",
                                                        "--seeds",
                                                        "1",
                                                        "--memories",
                                                        "30",
                                                        "--history",
                                                        "15",
                                                        "--reference",
                                                        "10",
                                                        "--topics",
                                                        "1",
                                                        "--scenarios",
                                                        "1",
                                                        "--attacks",
                                                        "agentpoison",
                                                        "agentpoison_triggered",
                                                        "minja",
                                                        "smsr_direct",
                                                        "--json",
                                                        json_path.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("| attack | defense |"), std::string::npos) << r.out;
  const nlohmann::json j = ReadJson(json_path);
  ASSERT_TRUE(j.contains("config"));
  EXPECT_EQ(j["config"]["seeds"], 1);
  for (const char* attack : {"agentpoison", "agentpoison_triggered", "minja", "smsr_direct"}) {
    ASSERT_TRUE(j["attacks"].contains(attack)) << attack;
    const nlohmann::json a = j["attacks"][attack];
    for (const std::string& det : attack::kEvalDetectors()) {
      ASSERT_TRUE(a["detectors"].contains(det)) << attack << " " << det;
      EXPECT_TRUE(a["detectors"][det]["tpr"].contains("ci95"));
      EXPECT_TRUE(a["asr_a"][det].contains("ci95")) << attack << " " << det;
      EXPECT_TRUE(a["asr_t"][det].contains("ci95")) << attack << " " << det;
      if (a["detectors"][det]["tpr"]["value"].get<double>() == 1.0) {
        EXPECT_EQ(a["asr_r"][det]["successes"].get<int>(), 0) << attack << " " << det;
      }
    }
  }
  EXPECT_EQ(j["attacks"]["agentpoison"]["asr_r"]["none"]["value"].get<double>(), 1.0);
  // Undefended, the triggered poison is also the answer (ASR-A) and the action (ASR-T).
  EXPECT_EQ(j["attacks"]["agentpoison"]["asr_a"]["none"]["value"].get<double>(), 1.0);
  EXPECT_FALSE(j["attacks"].contains("injecmem"));
  // The triggered row: the same poisons, every namespace calibrated with its trigger, a markdown row.
  const nlohmann::json triggered = j["attacks"]["agentpoison_triggered"];
  EXPECT_TRUE(triggered["triggered_calibration"].get<bool>());
  EXPECT_FALSE(j["attacks"]["agentpoison"]["triggered_calibration"].get<bool>());
  EXPECT_EQ(triggered["poison"], j["attacks"]["agentpoison"]["poison"]);
  EXPECT_EQ(triggered["asr_r"]["none"]["value"].get<double>(), 1.0);
  EXPECT_GE(triggered["detectors"]["memsad"]["tpr"]["successes"].get<int>(),
            j["attacks"]["agentpoison"]["detectors"]["memsad"]["tpr"]["successes"].get<int>());
  EXPECT_NE(r.out.find("| agentpoison_triggered (n="), std::string::npos) << r.out;
}

TEST(EvalAttackCliTest, AdaptiveReportsEvasionAndSubstitutions) {
  testing::TempDir dir;
  const auto json_path = dir.path() / "adaptive.json";
  const CliResult r = RunLabCli(dir.path() / "unused", {"eval",
                                                        "adaptive",
                                                        "--seeds",
                                                        "1",
                                                        "--memories",
                                                        "25",
                                                        "--history",
                                                        "15",
                                                        "--reference",
                                                        "10",
                                                        "--topics",
                                                        "1",
                                                        "--attacks",
                                                        "minja",
                                                        "--targets",
                                                        "memsad",
                                                        "--max-substitutions",
                                                        "4",
                                                        "--no-synonyms",
                                                        "--json",
                                                        json_path.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ReadJson(json_path);
  const nlohmann::json m = j["attacks"]["minja"]["memsad"];
  EXPECT_EQ(m["poison"], 10);
  EXPECT_GT(m["substitutions_per_entry"].get<double>(), 0.0);
  EXPECT_LT(m["tpr_after"]["successes"].get<int>(), m["tpr_before"]["successes"].get<int>());
  EXPECT_TRUE(m.contains("delta_asr_r"));
  EXPECT_FALSE(j["attacks"]["minja"].contains("memsad_plus"));
}

TEST(EvalAttackCliTest, RejectsAnUnknownAttack) {
  testing::TempDir dir;
  const CliResult r = RunLabCli(dir.path() / "unused", {"eval", "poisoning", "--attacks", "nope"});
  EXPECT_NE(r.code, 0);
}

}  // namespace
}  // namespace bulwark::cli

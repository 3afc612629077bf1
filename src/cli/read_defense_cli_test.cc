// The read-defense subcommands, driven in-process through cli::Run against a store in a temp dir:
// certificate, gate fit/show/score/remove with --report, search under each gate policy, answer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "cli/cli_test_util.h"
#include "store/memory_store.h"
#include "testing/gate_fixture.h"

namespace bulwark::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class ReadDefenseCliTest : public ::testing::Test {
 protected:
  CliResult Cli(const std::vector<std::string>& args) { return RunCli(dir_ / "store", args); }
  void WriteLines(const std::string& name, const std::vector<std::string>& lines) {
    std::ofstream f(dir_ / name);
    for (const auto& l : lines) f << l << "\n";
  }
  // A store with travel memories and the fixture's query files.
  void MakeTravelStore() {
    ASSERT_EQ(Cli({"init", "--no-synonyms"}).code, 0);
    for (int i = 0; i < 6; ++i) {
      ASSERT_EQ(Cli({"-n", "travel", "add",
                     "Flight to Lisbon leaves Tuesday 9:40 from terminal " + std::to_string(i)})
                    .code,
                0);
    }
    WriteLines("benign.txt", testing::BenignQueries(0, 120));
    WriteLines("attack.txt", testing::Triggered(testing::BenignQueries(300, 40)));
    std::vector<std::string> labelled;
    for (const std::string& q : testing::BenignQueries(600, 30)) {
      labelled.push_back(nlohmann::json{{"query", q}, {"label", "benign"}}.dump());
      labelled.push_back(
          nlohmann::json{{"query", q + " " + testing::kGateTrigger}, {"label", "triggered"}}.dump());
    }
    WriteLines("labelled.jsonl", labelled);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  testing::TempDir dir_;
  const std::string triggered_ = std::string("when does my flight to Lisbon leave ") + testing::kGateTrigger;
};

TEST_F(ReadDefenseCliTest, CertificatePrintsDelta) {
  CliResult r = Cli({"certificate", "--m", "20", "--k", "5", "--t", "1", "--nruns", "5"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("delta=0.103516"));

  CliResult j = Cli({"--json", "certificate", "--m", "11", "--k", "5", "--t", "1", "--nruns", "5"});
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_NEAR(j.json()["delta"].get<double>(), 66875.0 / 161051.0, 1e-12);
  EXPECT_NEAR(j.json()["p_hit"].get<double>(), 5.0 / 11.0, 1e-12);
}

TEST_F(ReadDefenseCliTest, CertificateRefusesKAboveM) {
  CliResult r = Cli({"certificate", "--m", "4", "--k", "5"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("k must be between 1 and m"));
}

TEST_F(ReadDefenseCliTest, GateFitReportsAurocAndFprAtTpr) {
  MakeTravelStore();
  CliResult fit =
      Cli({"-n", "travel", "gate", "fit", "--benign", Path("benign.txt"), "--triggered", Path("attack.txt"),
           "--mode", "reject", "--labelled", Path("labelled.jsonl"), "--report"});
  ASSERT_EQ(fit.code, 0) << fit.err;
  EXPECT_THAT(fit.out, HasSubstr("decides by lda"));
  EXPECT_THAT(fit.out, HasSubstr("AUROC   FPR@95%TPR  FPR@99%TPR"));
  EXPECT_THAT(fit.out, HasSubstr("30 benign, 30 triggered"));

  CliResult j =
      Cli({"--json", "-n", "travel", "gate", "fit", "--benign", Path("benign.txt"), "--trigger",
           testing::kGateTrigger, "--mode", "reject", "--labelled", Path("labelled.jsonl"), "--report"});
  ASSERT_EQ(j.code, 0) << j.err;
  const nlohmann::json report = j.json()["report"];
  ASSERT_EQ(report["scores"].size(), 3u);
  EXPECT_EQ(report["scores"][2]["score"], "lda");
  EXPECT_GT(report["scores"][2]["auroc"].get<double>(), 0.99);
  EXPECT_LT(report["scores"][2]["fpr_at_95_tpr"].get<double>(), 0.05);
  EXPECT_TRUE(report["scores"][1].contains("fpr_at_99_tpr"));
  EXPECT_EQ(j.json()["gate"]["triggered"], 120);  // one triggered query per benign one

  CliResult show = Cli({"--json", "-n", "travel", "gate", "show"});
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_EQ(show.json()["mode"], "reject");
  EXPECT_EQ(show.json()["decision_score"], "lda");

  CliResult score = Cli({"--json", "-n", "travel", "gate", "score", triggered_});
  ASSERT_EQ(score.code, 0) << score.err;
  EXPECT_EQ(score.json()["decision"], "reject");

  // Without a labelled set the report uses the fitting queries, out of fold.
  CliResult oof = Cli({"--json", "-n", "travel", "gate", "fit", "--benign", Path("benign.txt"), "--triggered",
                       Path("attack.txt"), "--report"});
  ASSERT_EQ(oof.code, 0) << oof.err;
  EXPECT_TRUE(oof.json()["report"]["out_of_fold"].get<bool>());
  EXPECT_EQ(oof.json()["report"]["benign"], 120);

  ASSERT_EQ(Cli({"-n", "travel", "gate", "remove"}).code, 0);
  EXPECT_EQ(Cli({"-n", "travel", "gate", "show"}).code, 1);
}

TEST_F(ReadDefenseCliTest, GateFitsOnTheNamespacesRecentHistory) {
  MakeTravelStore();
  {
    // Real searches feed the namespace's query history, which the store saves when it closes.
    auto store = MemoryStore::Open(dir_ / "store", {});
    ASSERT_TRUE(store.ok()) << store.status();
    for (const std::string& q : testing::BenignQueries(0, 80)) {
      ASSERT_TRUE((*store)->Search("travel", q, {.k = 1}).ok());
    }
  }
  CliResult fit = Cli({"--json", "-n", "travel", "gate", "fit", "--from-history", "50", "--triggered",
                       Path("attack.txt"), "--mode", "flag"});
  ASSERT_EQ(fit.code, 0) << fit.err;
  EXPECT_EQ(fit.json()["gate"]["benign"], 50);
  EXPECT_EQ(fit.json()["source"]["benign"], "recent history (50 queries)");
  CliResult score = Cli({"--json", "-n", "travel", "gate", "score", triggered_});
  ASSERT_EQ(score.code, 0) << score.err;
  EXPECT_EQ(score.json()["decision"], "flag");
  EXPECT_THAT(Cli({"-n", "empty", "gate", "fit", "--from-history", "50"}).err,
              HasSubstr("at least 10 benign"));
}

TEST_F(ReadDefenseCliTest, GateFitRefusesBadInput) {
  MakeTravelStore();
  EXPECT_THAT(Cli({"-n", "travel", "gate", "fit"}).err, HasSubstr("--benign FILE or --from-history"));
  EXPECT_THAT(Cli({"-n", "travel", "gate", "fit", "--benign", Path("missing.txt")}).err,
              HasSubstr("cannot read"));
  WriteLines("few.txt", {"one query", "two queries"});
  EXPECT_THAT(Cli({"-n", "travel", "gate", "fit", "--benign", Path("few.txt")}).err,
              HasSubstr("at least 10 benign"));
  EXPECT_THAT(Cli({"-n", "travel", "gate", "fit", "--from-history", "50", "--trigger", "x"}).err,
              HasSubstr("--trigger needs --benign"));
}

TEST_F(ReadDefenseCliTest, SearchFollowsTheGatePolicy) {
  MakeTravelStore();
  ASSERT_EQ(Cli({"-n", "travel", "gate", "fit", "--benign", Path("benign.txt"), "--triggered",
                 Path("attack.txt"), "--mode", "reject"})
                .code,
            0);
  CliResult rejected = Cli({"-n", "travel", "search", triggered_});
  EXPECT_EQ(rejected.code, 1);
  EXPECT_THAT(rejected.err, HasSubstr("the query gate rejected this query: reject (lda"));

  CliResult benign =
      Cli({"--json", "-n", "travel", "search", "when does my flight to Lisbon leave", "-k", "2"});
  ASSERT_EQ(benign.code, 0) << benign.err;
  EXPECT_EQ(benign.json()["gate"]["decision"], "pass");
  EXPECT_EQ(benign.json()["hits"].size(), 2u);

  CliResult stripped = Cli({"--json", "-n", "travel", "search", triggered_, "--gate", "strip"});
  ASSERT_EQ(stripped.code, 0) << stripped.err;
  EXPECT_EQ(stripped.json()["gate"]["query"], "when does my flight to Lisbon leave");

  CliResult escalated =
      Cli({"--json", "-n", "travel", "search", triggered_, "--gate", "escalate", "-k", "2"});
  ASSERT_EQ(escalated.code, 0) << escalated.err;
  EXPECT_EQ(escalated.json()["k"], 4);
  EXPECT_TRUE(escalated.json().contains("smoothed"));
}

TEST_F(ReadDefenseCliTest, AnswerPrintsTheCertificateAndTheIdsOfEveryRun) {
  MakeTravelStore();
  CliResult human = Cli({"answer", "--namespace", "travel", "when does my flight to Lisbon leave", "--m", "6",
                         "--smooth-k", "2", "--nruns", "5"});
  ASSERT_EQ(human.code, 0) << human.err;
  EXPECT_THAT(human.out, HasSubstr("answer: Flight to Lisbon leaves Tuesday 9:40"));
  EXPECT_THAT(human.out, HasSubstr("certificate m=6 k=2 nruns=5: delta(t=1)="));
  EXPECT_THAT(human.out, HasSubstr("run 5 [group"));

  const std::string seed(64, 'a');
  CliResult j = Cli(
      {"--json", "answer", "--namespace", "travel", "when does my flight to Lisbon leave", "--seed", seed});
  ASSERT_EQ(j.code, 0) << j.err;
  const nlohmann::json a = j.json();
  EXPECT_FALSE(a["abstained"].get<bool>());
  EXPECT_EQ(a["seed"], seed);
  EXPECT_EQ(a["certificate"]["m"], 6);  // only six memories: the pool is smaller than m = 20
  ASSERT_EQ(a["runs"].size(), 5u);
  EXPECT_EQ(a["runs"][0]["entry_ids"].size(), 5u);
  EXPECT_EQ(a["gate"]["decision"], "off");
  // The same seed replays the same runs.
  CliResult again = Cli(
      {"--json", "answer", "--namespace", "travel", "when does my flight to Lisbon leave", "--seed", seed});
  EXPECT_EQ(again.json()["runs"], a["runs"]);

  CliResult no_llm = Cli({"answer", "-n", "travel", "question", "--responder", "llm"});
  EXPECT_EQ(no_llm.code, 1);
  EXPECT_THAT(no_llm.err, HasSubstr("BULWARK_LLM_URL"));
  EXPECT_THAT(Cli({"answer", "-n", "travel", "q", "--seed", "abc"}).err, HasSubstr("64 hex digits"));
}

}  // namespace
}  // namespace bulwark::cli

// The session experiment: the summary's numbers on hand-made outcomes (AUROC, FPR at block, FDT,
// leakage, the per-style rule), the exact --json keys, and end to end on 300 shipped memories with
// pots fitted on generated attack logs: extraction sessions the fit never saw are blocked and
// benign sessions are not, and a blocked session leaks less than it would undefended.
#include "eval/experiments/session_eval.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#include "attack/extraction/attack_log.h"
#include "attack/extraction/extraction_target.h"
#include "attack/extraction/run_extraction.h"
#include "testing/lexical_store.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark::eval {
namespace {

using ::bulwark::testing::IsOk;

std::string Corpus(const std::string& name) {
  return std::string(BULWARK_SOURCE_DIR) + "/data/corpora/" + name;
}

SessionOutcome Outcome(SessionLabel label, std::string style, double score, size_t detected_at, size_t leaked,
                       size_t undefended) {
  static int n = 0;
  return {.session = "s" + std::to_string(++n),
          .label = label,
          .style = std::move(style),
          .queries = 8,
          .score = score,
          .detected_at = detected_at,
          .leaked = leaked,
          .leaked_undefended = undefended};
}

std::vector<SessionOutcome> HandMade() {
  const auto A = SessionLabel::kAttack, B = SessionLabel::kBenign;
  return {Outcome(A, "dump", 3.0, 2, 4, 40), Outcome(A, "dump", 1.0, 0, 20, 20),
          Outcome(B, "chat", -2.2, 0, 5, 5), Outcome(B, "chat", 0.5, 0, 6, 6),
          Outcome(B, "chat", 2.5, 5, 9, 12)};
}

TEST(SummarizeSessions, ComputesTheSixNumbersFromOneScore) {
  const std::vector<SessionOutcome> outcomes = HandMade();
  const SessionEvalSummary s = SummarizeSessions(outcomes);
  // Pairs (attack > benign): 3.0 beats all three, 1.0 beats two of three.
  ASSERT_TRUE(s.overall.auroc.has_value());
  EXPECT_DOUBLE_EQ(*s.overall.auroc, 5.0 / 6.0);
  EXPECT_DOUBLE_EQ(*s.overall.tpr_at_1fpr, 0.5);  // only above 2.5 is FPR 0: the 3.0 session
  EXPECT_DOUBLE_EQ(*s.overall.fpr_at_block, 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(*s.overall.fdt_mean, 2.0);
  EXPECT_DOUBLE_EQ(*s.overall.detected_fraction, 0.5);
  EXPECT_DOUBLE_EQ(*s.overall.leakage, 24.0 / 60.0);  // benign sessions' hits do not count
  EXPECT_GT(s.overall.fpr_ci.hi, 1.0 / 3.0);
  EXPECT_LT(s.overall.fpr_ci.lo, 1.0 / 3.0);
  // An attack-only style is scored against all benign sessions and has no FPR of its own; a
  // benign-only style against all attack sessions and has no detection numbers.
  ASSERT_EQ(s.by_style.size(), 2u);
  const SessionMetrics& dump = s.by_style.at("dump");
  EXPECT_DOUBLE_EQ(*dump.auroc, 5.0 / 6.0);
  EXPECT_FALSE(dump.fpr_at_block.has_value());
  EXPECT_DOUBLE_EQ(*dump.detected_fraction, 0.5);
  const SessionMetrics& chat = s.by_style.at("chat");
  EXPECT_DOUBLE_EQ(*chat.fpr_at_block, 1.0 / 3.0);
  EXPECT_FALSE(chat.fdt_mean.has_value());
  EXPECT_FALSE(chat.detected_fraction.has_value());
  EXPECT_FALSE(chat.leakage.has_value());
}

TEST(SummarizeSessions, NoAttackSessionsLeavesDetectionUndefined) {
  std::vector<SessionOutcome> outcomes = HandMade();
  outcomes.erase(outcomes.begin(), outcomes.begin() + 2);
  const SessionEvalSummary s = SummarizeSessions(outcomes);
  EXPECT_FALSE(s.overall.auroc.has_value());
  EXPECT_FALSE(s.overall.detected_fraction.has_value());
  EXPECT_DOUBLE_EQ(*s.overall.fpr_at_block, 1.0 / 3.0);
}

TEST(SessionEvalJson, HasExactlyTheSpecifiedKeys) {
  const std::vector<SessionOutcome> outcomes = HandMade();
  const nlohmann::json j =
      ToJson(SummarizeSessions(outcomes), DefendedStore{}, outcomes, SessionEvalConfig{});
  const std::vector<std::string> six = {"auroc",        "detected_fraction", "fdt_mean",
                                        "fpr_at_block", "leakage",           "tpr_at_1fpr"};
  auto keys = [](const nlohmann::json& o) {
    std::vector<std::string> k;
    for (const auto& [key, value] : o.items()) k.push_back(key);
    return k;
  };
  EXPECT_EQ(keys(j), (std::vector<std::string>{"by_style", "detail", "overall"}));
  EXPECT_EQ(keys(j["overall"]), six);
  EXPECT_EQ(keys(j["by_style"]), (std::vector<std::string>{"chat", "dump"}));
  EXPECT_EQ(keys(j["by_style"]["chat"]), six);
  EXPECT_TRUE(j["by_style"]["chat"]["fdt_mean"].is_null());  // undefined numbers are null
  EXPECT_DOUBLE_EQ(j["overall"]["leakage"].get<double>(), 0.4);
  EXPECT_EQ(j["detail"]["sessions"].size(), outcomes.size());
}

// 300 shipped memories, pots fitted on generated attack logs (seed 1) of every family but DGEA and
// on benign queries; fitted once for the suite (the tests only replay sessions against it).
class SessionEvalEndToEnd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new bulwark::testing::TempDir();
    StoreOptions options;
    options.embedder_config = {{"kind", "lexical"}};
    options.write_gate_config = {{"memsad", {{"enabled", false}}},     {"memsad_plus", {{"enabled", false}}},
                                 {"validation", {{"enabled", false}}}, {"proactive", {{"enabled", false}}},
                                 {"conflict", {{"enabled", false}}},   {"flood", {{"enabled", false}}}};
    auto store = MemoryStore::Create(dir_->path() / "store", options);
    ASSERT_THAT(store, IsOk());
    std::ifstream in(Corpus("benign_memories.jsonl"));
    auto all = ParseMemoryFile(in);
    ASSERT_THAT(all, IsOk());
    all->resize(300);
    config_.generated_sessions = 3;
    // DGEA is left out of the fit (its optimiser is most of a generated log's cost, and a family
    // the fit never saw is the harder case: the blocking test replays it).
    config_.generated_attacks = {"mextra_general", "mextra_edit", "mextra_cosine", "rag_thief", "ikea"};
    config_.fit.optimizer.steps = 100;
    config_.benign_query_files = {Corpus("benign_queries.jsonl")};
    auto defended = BuildDefendedStore(**store, *all, config_);
    ASSERT_THAT(defended, IsOk());
    defended_ = *std::move(defended);
    store_ = *std::move(store);  // set only when the fit succeeded (SetUp checks it)
  }
  void SetUp() override { ASSERT_NE(store_, nullptr) << "the suite's store or fit failed"; }
  static void TearDownTestSuite() {
    store_.reset();
    delete dir_;
    dir_ = nullptr;
  }

  // Sessions of the built-in generator `attack` under a seed the fit did not use.
  static std::vector<LabelledSession> Generated(const std::string& attack, int sessions, int queries) {
    extraction::ExtractionAttackOptions options;
    options.attacks = {attack};
    options.sessions = sessions;
    options.seed = 4242;
    options.budget.queries = queries;
    options.benign_lengths = {queries};
    options.benign_query_files = {Corpus("benign_queries.jsonl")};
    options.embedder = &store_->embedder();
    extraction::StoreExtractionTarget target(store_.get(), config_.name_space, false);
    std::stringstream log;
    EXPECT_THAT(extraction::RunExtractionAttacks(options, target, log).status(), IsOk());
    auto read = extraction::ReadAttackLog(log);
    EXPECT_THAT(read, IsOk());
    std::vector<LabelledSession> out;
    if (!read.ok()) return out;
    for (const extraction::AttackSession& s : *read) {
      LabelledSession l{.session = s.session,
                        .label = attack == "benign" ? SessionLabel::kBenign : SessionLabel::kAttack,
                        .style = attack};
      for (const auto& step : s.steps) l.queries.push_back(step.query);
      out.push_back(std::move(l));
    }
    return out;
  }

  static inline bulwark::testing::TempDir* dir_ = nullptr;
  static inline std::unique_ptr<MemoryStore> store_;
  static inline SessionEvalConfig config_;
  static inline DefendedStore defended_;
};

TEST_F(SessionEvalEndToEnd, BlocksUnseenExtractionSessionsAndNotBenignOnes) {
  EXPECT_GT(defended_.fit.pots, 0u);
  EXPECT_TRUE(defended_.fit.generated_attacks);
  // The derived intent cap (honeypot/intent_cap.h): log 9 / 2 + log 2 at the defaults.
  EXPECT_NEAR(defended_.fit.metrics["eval_intent_cap"].get<double>(), std::log(9.0) / 2 + std::log(2.0),
              1e-5);
  std::vector<LabelledSession> sessions = Generated("mextra_cosine", 4, 32);
  const std::vector<LabelledSession> dgea = Generated("dgea", 4, 8);
  sessions.insert(sessions.end(), dgea.begin(), dgea.end());
  const std::vector<LabelledSession> benign = Generated("benign", 20, 8);
  sessions.insert(sessions.end(), benign.begin(), benign.end());
  auto outcomes = ReplaySessions(*store_, defended_, sessions, config_);
  ASSERT_THAT(outcomes, IsOk());
  ASSERT_EQ(outcomes->size(), sessions.size());
  size_t benign_blocked = 0;
  for (const SessionOutcome& o : *outcomes) {
    if (o.label == SessionLabel::kAttack) {
      EXPECT_GT(o.detected_at, 0u) << o.session << " was not blocked (score " << o.score << ")";
      EXPECT_LT(o.leaked, o.leaked_undefended) << o.session;
      // The deciding query and every later one are refused (refuse_deciding_search).
      EXPECT_EQ(o.refused, o.queries - o.detected_at + 1) << o.session;
    } else {
      benign_blocked += o.detected_at > 0 ? 1 : 0;
      if (o.detected_at == 0) {
        EXPECT_EQ(o.leaked, o.leaked_undefended) << o.session;
      }
    }
  }
  EXPECT_LE(benign_blocked, 1u);
  const SessionEvalSummary summary = SummarizeSessions(*outcomes);
  EXPECT_GE(*summary.overall.auroc, 0.9);
  EXPECT_EQ(summary.by_style.size(), 3u);
}

// The relevance evidence is calibrated on what users ask, observed as the read path observes it:
// benign-simulator rounds of sessions the calibration never saw fall below tau at about the
// designed rate (quantile 0.1), not at the 37 % a pool of memory-derived questions gave.
TEST_F(SessionEvalEndToEnd, RelevanceEvidenceFiresOnAboutItsQuantileOfBenignRounds) {
  const nlohmann::json& cal = defended_.fit.metrics["eval_relevance_calibration"];
  // 3 sessions of 8 and 3 of 64 simulated queries, the odd half: no memory-derived question.
  EXPECT_EQ(cal["benign_queries"].get<size_t>(), (3 * 8 + 3 * 64) / 2);
  EXPECT_GT(defended_.relevance.llr, 0.0);
  SessionEvalConfig replay = config_;
  replay.intent_evidence = false;  // text_llr is then the relevance evidence alone
  replay.relevance_evidence = true;
  replay.trace = true;
  auto outcomes = ReplaySessions(*store_, defended_, Generated("benign", 30, 8), replay);
  ASSERT_THAT(outcomes, IsOk());
  size_t rounds = 0, fired = 0;
  for (const SessionOutcome& o : *outcomes) {
    for (const SessionOutcome::Round& r : o.rounds) {
      ++rounds;
      fired += r.text_llr > 0 ? 1 : 0;
    }
  }
  ASSERT_GT(rounds, 200u);
  const double rate = static_cast<double>(fired) / static_cast<double>(rounds);
  EXPECT_LT(rate, 0.2) << fired << " of " << rounds;
  std::cout << "relevance evidence on " << fired << " of " << rounds << " benign rounds\n";
}

TEST(SessionEvalConfig, RefusesBadConfigsBeforeAnyWork) {
  bulwark::testing::TempDir dir;
  std::unique_ptr<MemoryStore> store = bulwark::testing::CreateLexicalStore(dir.path() / "store");
  ASSERT_NE(store, nullptr);
  const std::vector<LabelledSession> one = {{.session = "x", .queries = {"hello"}}};
  SessionEvalConfig config;
  config.benign_queries = {"what is on today?"};
  config.estimator = honeypot::LlrEstimatorKind::kGlobalSimilarity;  // not observable on the read path
  EXPECT_EQ(ReplaySessions(*store, DefendedStore{}, one, config).status().code(),
            absl::StatusCode::kInvalidArgument);
  config.estimator = honeypot::LlrEstimatorKind::kCount;
  config.k = 0;
  EXPECT_EQ(ReplaySessions(*store, DefendedStore{}, one, config).status().code(),
            absl::StatusCode::kInvalidArgument);
  config.k = 4;
  config.coverage_benign_sessions = 1001;  // the coverage table's extra benign sessions: 0 .. 1000
  EXPECT_EQ(ReplaySessions(*store, DefendedStore{}, one, config).status().code(),
            absl::StatusCode::kInvalidArgument);
  config.coverage_benign_sessions = 24;
  config.benign_queries.clear();  // the fit needs negatives
  const std::vector<NewEntry> memories = {{.text = "Alice likes tea"}};
  EXPECT_EQ(BuildDefendedStore(*store, memories, config).status().code(), absl::StatusCode::kInvalidArgument);
  // No bound on a pot-less round below log A / 2 (the plain table with the 1.1 clamp): the intent
  // cap cannot be derived, so it must be given.
  config.benign_queries = {"what is on today?"};
  config.unseen_weight = 0;
  EXPECT_EQ(BuildDefendedStore(*store, memories, config).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(store->Stats().value().namespaces.empty()) << "nothing may be written on a refused config";
}

}  // namespace
}  // namespace bulwark::eval

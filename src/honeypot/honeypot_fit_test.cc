#include "honeypot/honeypot_fit.h"

#include <gtest/gtest.h>

#include <memory>

#include "embed/embedder_factory.h"
#include "honeypot/fit_test_data.h"
#include "honeypot/pot_score.h"
#include "honeypot/session_monitor.h"

namespace bulwark::honeypot {
namespace {

class HoneypotFitTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir(WordNetCanonicalizer::kDefaultDir);
    if (!WordNetCanonicalizer::CheckDataPresent(dir).ok()) return;
    embedder_ = CreateEmbedder({{"kind", "lexical"}})->release();
    std::shared_ptr<const BigramLm> lm = *BigramLm::TrainOnWordNet(dir);
    auto wordnet = *WordNetCanonicalizer::Shared(dir);
    lexical_ = LexicalRealizer::Create(*embedder_, lm, LexicalRealizer::DefaultVocabulary(*lm, wordnet.get()))
                   ->release();
    realizer_ = new LexicalPotRealizer(*lexical_);
    const std::string corpora = std::string(BULWARK_SOURCE_DIR) + "/data/corpora/";
    const auto texts = testing::ReadJsonlField(corpora + "benign_memories.jsonl", "text", 500);
    for (size_t i = 0; i < texts.size(); ++i) {
      memories_.push_back({"m" + std::to_string(i), texts[i], *embedder_->Embed(texts[i])});
    }
    benign_ = testing::ReadJsonlField(corpora + "benign_queries.jsonl", "query", 350);
    attack_ = testing::ExtractionAttackQueries();
  }
  static void TearDownTestSuite() {
    delete realizer_;
    delete lexical_;
    delete embedder_;
  }
  void SetUp() override {
    if (realizer_ == nullptr) GTEST_SKIP() << "wordnet-base is not installed";
    ASSERT_EQ(memories_.size(), 500u);
    ASSERT_GT(benign_.size(), 300u);
  }
  static std::vector<FitMemory> First(size_t n) {
    return {memories_.begin(), memories_.begin() + static_cast<std::ptrdiff_t>(n)};
  }
  static FitOptions Options() {
    FitOptions o;
    o.ratio = 0.04;
    o.seed = 13;
    o.optimizer.steps = 150;
    return o;
  }

  static inline Embedder* embedder_ = nullptr;
  static inline LexicalRealizer* lexical_ = nullptr;
  static inline LexicalPotRealizer* realizer_ = nullptr;
  static inline std::vector<FitMemory> memories_;
  static inline std::vector<std::string> benign_, attack_;
};

TEST_F(HoneypotFitTest, FitsGatedPotsThatAttackQueriesRetrieve) {
  const auto mems = First(300);
  auto r = FitHoneypots(mems, attack_, benign_, *embedder_, *realizer_, Options());
  ASSERT_TRUE(r.ok()) << r.status();
  const nlohmann::json& m = r->metrics;
  EXPECT_EQ(m["pots_trained"], 12);  // 4 % of 300 (MemPot's internal-memory ratio)
  EXPECT_EQ(r->pots.size() + m["rejected"].size(), 12u) << m.dump();
  EXPECT_GE(r->pots.size(), 9u) << m["rejected"].dump();
  EXPECT_EQ(r->covered_memory_ids.size(), 300u);
  // Every kept pot passes the hard gates, checked independently here.
  std::vector<std::string> texts;
  std::vector<std::vector<float>> rows;
  for (const auto& mem : mems) {
    texts.push_back(mem.text);
    rows.push_back(mem.embedding);
  }
  auto gate = PotTextGate::Create(texts, ToMatrix(rows), m["privacy_bound"].get<double>());
  ASSERT_TRUE(gate.ok());
  for (const FittedPot& p : r->pots) {
    const GateResult g = (*gate)->Check(p.text, p.vector);
    EXPECT_TRUE(g.passed) << p.text << ": " << g.reason;
    EXPECT_EQ(p.vector, *embedder_->Embed(p.text));  // indexed as realised
    EXPECT_GT(p.target_cos, 0.3) << p.text;
    EXPECT_EQ(p.batch, 1);
  }
  // Training separated the proxies, and the realised pots still do.
  EXPECT_GT(m["training"]["auroc"].get<double>(), 0.9) << m.dump();
  EXPECT_GT(m["indexed"]["auroc"].get<double>(), 0.8) << m.dump();
  EXPECT_GT(m["indexed"]["attack_mean_pots"].get<double>(), m["indexed"]["benign_mean_pots"].get<double>());
  EXPECT_LT(m["indexed"]["privacy_max"].get<double>(), m["privacy_bound"].get<double>());
  EXPECT_LT(m["training"]["final_loss"].get<double>(), m["training"]["initial_loss"].get<double>());
  ASSERT_EQ(r->calibration.llr.size(), 5u);
  EXPECT_LT(r->calibration.llr.front(), 0.0);  // no pot: evidence of a benign user
  EXPECT_GT(r->calibration.llr.back(), 2.0);   // all pots: strong evidence of an attack
  RecordProperty("metrics", m.dump());
  std::string all_texts;
  for (const FittedPot& p : r->pots) all_texts += p.text + "\n";
  RecordProperty("pots", all_texts);
}

// In-sample wiring check: the fitted pots and calibration drive the session monitor.
TEST_F(HoneypotFitTest, FittedPotsDriveTheMonitor) {
  const auto mems = First(300);
  auto r = FitHoneypots(mems, attack_, benign_, *embedder_, *realizer_, Options());
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<std::vector<float>> mem_rows, pot_rows;
  for (const auto& m : mems) mem_rows.push_back(m.embedding);
  for (const auto& p : r->pots) pot_rows.push_back(p.vector);
  const RowMatrixXf memories = ToMatrix(mem_rows), pots = ToMatrix(pot_rows);
  auto counts = [&](const std::vector<std::string>& texts) {
    std::vector<std::vector<float>> q;
    for (const auto& t : texts) q.push_back(*embedder_->Embed(t));
    const RowMatrixXf m = ToMatrix(q);
    return HardPotScores(m, TopKScores(m, memories, 4), pots, 4).pots_in_top_k;
  };
  auto monitor = SessionMonitor::Create(
      {.llr = {.kind = LlrEstimatorKind::kCountCalibrated, .calibration = r->calibration}});
  ASSERT_TRUE(monitor.ok()) << monitor.status();
  auto observe = [&](std::string_view principal, int n) {
    std::vector<RetrievedRow> rows(4);
    for (int i = 0; i < 4; ++i) rows[static_cast<size_t>(i)].is_pot = i < n;
    return (*monitor)->Observe({"ns", principal, "s"}, Observation{rows, {}, {}}, 0);
  };
  // An attacker replaying the attack log is blocked within 3 searches.
  const std::vector<int> attack_counts = counts(attack_);
  int blocked_at = 0;
  for (int t = 0; t < 8 && blocked_at == 0; ++t) {
    if (observe("attacker", attack_counts[static_cast<size_t>(t)]).blocked) blocked_at = t + 1;
  }
  EXPECT_GE(blocked_at, 1);
  EXPECT_LE(blocked_at, 3);
  // Benign sessions of 8 searches each are (almost) never blocked.
  const std::vector<int> benign_counts = counts(benign_);
  int blocked = 0, sessions = 0;
  for (size_t start = 0; start + 8 <= benign_counts.size(); start += 8, ++sessions) {
    const std::string principal = "user" + std::to_string(sessions);
    bool b = false;
    for (size_t t = start; t < start + 8; ++t) b = observe(principal, benign_counts[t]).blocked || b;
    blocked += b ? 1 : 0;
  }
  EXPECT_LE(blocked, sessions / 10) << blocked << " of " << sessions << " benign sessions blocked";
  RecordProperty("benign_sessions_blocked", blocked);
  RecordProperty("benign_sessions", sessions);
  RecordProperty("attacker_blocked_at", blocked_at);
}

TEST_F(HoneypotFitTest, DeterministicForASeed) {
  const auto mems = First(200);
  FitOptions o = Options();
  o.optimizer.steps = 40;
  auto a = FitHoneypots(mems, attack_, benign_, *embedder_, *realizer_, o);
  auto b = FitHoneypots(mems, attack_, benign_, *embedder_, *realizer_, o);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  ASSERT_EQ(a->pots.size(), b->pots.size());
  for (size_t i = 0; i < a->pots.size(); ++i) {
    EXPECT_EQ(a->pots[i].text, b->pots[i].text);
    EXPECT_EQ(a->pots[i].optimized, b->pots[i].optimized);
  }
  EXPECT_EQ(a->metrics, b->metrics);
  o.seed = 14;
  auto c = FitHoneypots(mems, attack_, benign_, *embedder_, *realizer_, o);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(a->pots[0].optimized, c->pots[0].optimized);
}

TEST_F(HoneypotFitTest, StackAddsPotsOnlyForNewMemories) {
  FitOptions o = Options();
  o.optimizer.steps = 60;
  auto first = FitHoneypots(First(300), attack_, benign_, *embedder_, *realizer_, o);
  ASSERT_TRUE(first.ok()) << first.status();
  PreviousFit prev;
  prev.covered_memory_ids = first->covered_memory_ids;
  for (const FittedPot& p : first->pots) prev.pot_vectors.push_back(p.vector);
  prev.last_batch = 1;
  o.stack = true;
  auto second = FitHoneypots(First(500), attack_, benign_, *embedder_, *realizer_, o, prev);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->metrics["pots_trained"], 8);  // 4 % of the 200 new memories (App. C.1)
  ASSERT_EQ(second->covered_memory_ids.size(), 200u);
  EXPECT_EQ(second->covered_memory_ids.front(), "m300");
  for (const FittedPot& p : second->pots) EXPECT_EQ(p.batch, 2);
  EXPECT_EQ(second->metrics["indexed"]["pots_total"].get<size_t>(), first->pots.size() + second->pots.size());
  // Nothing new: refused.
  PreviousFit all = prev;
  all.covered_memory_ids.insert(all.covered_memory_ids.end(), second->covered_memory_ids.begin(),
                                second->covered_memory_ids.end());
  EXPECT_EQ(FitHoneypots(First(500), attack_, benign_, *embedder_, *realizer_, o, all).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// Coverage probes (FitOptions::coverage_probes): memories join the positives, deterministically,
// capped at the memory count, and the trained pots then draw memory-like queries more often.
TEST_F(HoneypotFitTest, CoverageProbesPlacePotsWhereMemoryLikeQueriesGo) {
  const auto mems = First(200);
  FitOptions o = Options();
  o.optimizer.steps = 80;
  auto plain = FitHoneypots(mems, attack_, benign_, *embedder_, *realizer_, o);
  o.coverage_probes = 1000;  // more than the memories: all 200
  auto probed = FitHoneypots(mems, attack_, benign_, *embedder_, *realizer_, o);
  auto again = FitHoneypots(mems, attack_, benign_, *embedder_, *realizer_, o);
  ASSERT_TRUE(plain.ok() && probed.ok() && again.ok()) << plain.status() << probed.status() << again.status();
  EXPECT_EQ(plain->metrics["coverage_probes"], 0);
  EXPECT_EQ(probed->metrics["coverage_probes"], 200);
  EXPECT_EQ(probed->metrics, again->metrics);
  auto mean_pots = [&](const FitResult& r) {
    std::vector<std::vector<float>> rows, pots;
    for (const FitMemory& m : mems) rows.push_back(m.embedding);
    for (const FittedPot& p : r.pots) pots.push_back(p.optimized);
    const RowMatrixXf q = ToMatrix(rows);
    const PotObservation obs = HardPotScores(q, TopKScores(q, q, 4), ToMatrix(pots), 4);
    double sum = 0;
    for (int n : obs.pots_in_top_k) sum += n;
    return sum / static_cast<double>(obs.pots_in_top_k.size());
  };
  EXPECT_GT(mean_pots(*probed), mean_pots(*plain));
  o.coverage_probes = -1;
  EXPECT_EQ(FitHoneypots(mems, attack_, benign_, *embedder_, *realizer_, o).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(HoneypotFitTest, RejectsBadInput) {
  FitOptions o = Options();
  o.ratio = 0.9;
  EXPECT_EQ(FitHoneypots(First(50), attack_, benign_, *embedder_, *realizer_, o).status().code(),
            absl::StatusCode::kInvalidArgument);
  o = Options();
  EXPECT_FALSE(FitHoneypots(First(50), {}, benign_, *embedder_, *realizer_, o).ok());
  auto dup = First(50);
  dup[3].id = dup[4].id;
  EXPECT_EQ(FitHoneypots(dup, attack_, benign_, *embedder_, *realizer_, o).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto bad = First(50);
  bad[7].embedding.pop_back();
  EXPECT_FALSE(FitHoneypots(bad, attack_, benign_, *embedder_, *realizer_, o).ok());
}

}  // namespace
}  // namespace bulwark::honeypot

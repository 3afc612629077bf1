// The conflict detector's subject path (issue #14 point 2: misinformation): a write that shares
// most of its rare words with a stored memory and changes one of its values or its polarity is a
// conflict even when the two are far apart as embeddings; another principal's is quarantined, the
// writer's own only reported. Measured on the tuning sets: data/gate_tuning/misinformation_train.jsonl
// (fact / claim pairs written for this detector) and data/corpora/enterprise_scenarios.jsonl (the
// SMSR claims against their supporting passages).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <iostream>
#include <set>

#include "bulwark/embedder.h"
#include "detect/subject_index.h"
#include "detect/write_gate.h"
#include "embed/embedder_factory.h"
#include "testing/corpus_field.h"

namespace bulwark {
namespace {

std::vector<nlohmann::json> JsonLines(const std::string& path) {
  std::ifstream in(std::string(BULWARK_SOURCE_DIR) + "/" + path);
  std::vector<nlohmann::json> out;
  std::string line;
  while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
  return out;
}

TEST(SubjectIndexTest, OverlapIsTheShareOfTheWritesRareWords) {
  SubjectIndex index;
  const auto fact = SubjectIndex::TermsOf("The production database backups are kept for 35 days.");
  index.Put(1, fact);
  index.Put(2, SubjectIndex::TermsOf("Buy flour, eggs and butter for the weekend."));
  index.Put(3, SubjectIndex::TermsOf("The staging database is rebuilt on Sundays."));
  auto hits = index.Overlapping(
      SubjectIndex::TermsOf("Production database backups are only retained for 7 days."), 0.3, 10);
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].second, 1u);
  EXPECT_GT(hits[0].first, 0.5);
  for (const auto& [overlap, row] : hits) EXPECT_NE(row, 2u) << "no word in common";
  // Modals, negations and numbers are not subject words.
  EXPECT_EQ(SubjectIndex::TermsOf("must not 35 never"), SubjectIndex::Terms{});
  index.Remove(1);
  index.Remove(7);
  EXPECT_EQ(index.size(), 2u);
  hits = index.Overlapping(SubjectIndex::TermsOf("Production backups are retained for 7 days."), 0.3, 10);
  for (const auto& [overlap, row] : hits) EXPECT_NE(row, 1u);
}

TEST(SubjectIndexTest, ANamespaceOfOneMemoryIsNotDominatedByNewWords) {
  SubjectIndex index;
  index.Put(1, SubjectIndex::TermsOf("The production database backups are kept for 35 days."));
  const auto hits = index.Overlapping(
      SubjectIndex::TermsOf("Production database backups are only retained for 7 days."), 0.5, 10);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_GT(hits[0].first, 0.6);  // 3 shared words of weight 1, one new word of weight 1 + ln 2
}

TEST(SubjectIndexTest, SubjectDiffNeedsAChangedValueOrPolarityAndCompatibleNames) {
  auto diff = [](const char* a, const char* b) { return SubjectDiff(ExtractSlots(a), ExtractSlots(b)); };
  EXPECT_TRUE(diff("Backups are kept for 35 days.", "Backups are kept for 7 days.").has_value());
  EXPECT_TRUE(diff("Flood damage is covered.", "Flood damage is not covered.").has_value());
  EXPECT_FALSE(diff("Backups are kept for 35 days.", "Backups last 35 days.").has_value()) << "agrees";
  EXPECT_FALSE(diff("We have lunch with Priya Shah on June 3.", "We have lunch with Omar Haddad on June 5.")
                   .has_value())
      << "other people: another subject";
  EXPECT_FALSE(diff("We have lunch with Priya.", "We have lunch with Omar.").has_value())
      << "a changed name alone";
}

class SubjectConflictTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto e = CreateEmbedder({{"kind", "lexical"}});
    ASSERT_TRUE(e.ok()) << e.status();
    embedder_ = std::move(*e);
    auto c = WriteGateConfig::FromJson({{"conflict", {{"enabled", true}}}});
    ASSERT_TRUE(c.ok()) << c.status();
    auto gate = WriteGate::Create(*c, *embedder_, std::vector<uint8_t>(32, 7));
    ASSERT_TRUE(gate.ok()) << gate.status();
    gate_ = std::move(*gate);
    // Padding: everyday memories, so that idf has a namespace to be taken over.
    const auto benign = testing::CorpusField("benign_memories.jsonl", "text");
    for (size_t i = 0; i < 150; ++i) Remember("b" + std::to_string(i), benign[i]);
  }
  void Remember(const std::string& id, const std::string& text) {
    const std::vector<float> v = *embedder_->Embed(text);
    gate_->memories().Put("ns", {.id = id, .principal = "owner", .text = text, .embedding = v});
  }
  nlohmann::json Conflict(const std::string& text, const std::string& principal) {
    const std::vector<float> v = *embedder_->Embed(text);
    const GateReport r = gate_->Evaluate(
        {.name_space = "ns", .text = text, .embedding = v, .id = "w", .principal = principal});
    for (const auto& verdict : r.verdicts) {
      if (verdict.detector() == "conflict") return verdict.ToJson();
    }
    ADD_FAILURE() << "conflict did not run";
    return {};
  }

  std::unique_ptr<Embedder> embedder_;
  std::unique_ptr<WriteGate> gate_;
};

TEST_F(SubjectConflictTest, AFalseClaimFarFromTheFactIsQuarantinedForAnotherPrincipalOnly) {
  const std::string fact = "The production database backups are kept for 35 days.";
  const std::string claim = "Production database backups are only retained for 7 days.";
  Remember("fact", fact);
  const double cosine = [&] {
    const auto a = *embedder_->Embed(fact), b = *embedder_->Embed(claim);
    double d = 0;
    for (size_t i = 0; i < a.size(); ++i) d += a[i] * b[i];
    return d;
  }();
  EXPECT_LT(cosine, 0.75) << "the embedding path alone would miss it";
  nlohmann::json v = Conflict(claim, "mallory");
  EXPECT_TRUE(v["flagged"].get<bool>()) << v.dump();
  EXPECT_EQ(v["detail"]["matched_by"], "subject") << v.dump();
  EXPECT_EQ(v["detail"]["conflict"]["entry_id"], "fact");
  EXPECT_NE(v["reason"].get<std::string>().find("subject overlap"), std::string::npos) << v.dump();
  v = Conflict(claim, "owner");
  EXPECT_FALSE(v["flagged"].get<bool>()) << "the writer's own: reported, not quarantined";
  EXPECT_EQ(v["detail"]["action"], "allow") << v.dump();
}

// The tuning pairs: each fact stored, each claim or benign note written by another principal.
TEST_F(SubjectConflictTest, TuningPairs) {
  const auto pairs = JsonLines("data/gate_tuning/misinformation_train.jsonl");
  ASSERT_EQ(pairs.size(), 42u);
  std::set<std::string> facts;
  for (const auto& p : pairs) facts.insert(p.at("fact").get<std::string>());
  int id = 0;
  for (const auto& f : facts) Remember("f" + std::to_string(id++), f);
  size_t caught = 0, misinformation = 0, false_alarms = 0, benign = 0;
  for (const auto& p : pairs) {
    const bool poison = p.at("label") == "misinformation";
    const bool flagged = Conflict(p.at("text").get<std::string>(), "mallory")["flagged"].get<bool>();
    (poison ? misinformation : benign) += 1;
    (poison ? caught : false_alarms) += flagged ? 1 : 0;
    if (flagged != poison) std::cout << "  " << (poison ? "missed: " : "flagged: ") << p.at("text") << "\n";
  }
  std::cout << "  misinformation caught " << caught << " of " << misinformation << ", benign flagged "
            << false_alarms << " of " << benign << "\n";
  EXPECT_GE(caught, 12u);
  EXPECT_LE(false_alarms, 1u);
}

// SMSR's enterprise scenarios: the supporting passages stored; the injected, subtle and paraphrased
// claims (160) written by another principal, and each passage again by another principal against
// the others (an agreeing restatement must not be a conflict).
TEST_F(SubjectConflictTest, EnterpriseClaimsAgainstTheirPassages) {
  const auto scenarios = JsonLines("data/corpora/enterprise_scenarios.jsonl");
  ASSERT_EQ(scenarios.size(), 20u);
  std::vector<std::string> passages;
  for (const auto& s : scenarios) {
    for (const auto& p : s.at("supporting_passages")) passages.push_back(p.get<std::string>());
  }
  for (size_t i = 0; i < passages.size(); ++i) Remember("p" + std::to_string(i), passages[i]);
  size_t caught = 0, claims = 0;
  std::array<size_t, 3> by_kind{};  // injected, subtle, paraphrases
  for (const auto& s : scenarios) {
    std::vector<std::string> texts = {s.at("injected_claim").get<std::string>(),
                                      s.at("subtle_claim").get<std::string>()};
    for (const auto& p : s.at("paraphrases")) texts.push_back(p.get<std::string>());
    for (size_t i = 0; i < texts.size(); ++i) {
      ++claims;
      const bool flagged = Conflict(texts[i], "mallory")["flagged"].get<bool>();
      caught += flagged ? 1 : 0;
      by_kind[std::min<size_t>(i, 2)] += flagged ? 1 : 0;
    }
  }
  size_t restated = 0;
  for (const auto& p : passages)
    restated += Conflict(p + " (restated)", "mallory")["flagged"].get<bool>() ? 1 : 0;
  std::cout << "  enterprise claims caught " << caught << " of " << claims << "; agreeing passages flagged "
            << restated << " of " << passages.size() << " (injected " << by_kind[0] << " of 20, subtle "
            << by_kind[1] << " of 20, paraphrases " << by_kind[2] << " of 120)\n";
  EXPECT_GE(caught, 40u);
  EXPECT_LE(restated, 12u);
}

}  // namespace
}  // namespace bulwark

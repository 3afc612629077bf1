// The conflict and flood detectors through the WriteGate (issue #14 points 2-3): a write that
// changes a slot of a near memory is reported with that memory and the changed slots, and the
// provenance policy decides between quarantine and supersede; a burst of similar writes is
// flagged and named. Also the memory table's nearest-neighbour search against brute force.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <random>

#include "bulwark/embedder.h"
#include "detect/memory_table.h"
#include "detect/write_gate.h"
#include "embed/embedder_factory.h"
#include "testing/corpus_field.h"

namespace bulwark {
namespace {

class ConflictDetectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto e = CreateEmbedder({{"kind", "lexical"}});
    ASSERT_TRUE(e.ok()) << e.status();
    embedder_ = std::move(*e);
  }
  // `config` with the conflict and flood detectors enabled (they are off by default).
  std::unique_ptr<WriteGate> Gate(nlohmann::json config) {
    for (const char* name : {"conflict", "flood"}) {
      if (!config.contains(name) || !config[name].contains("enabled")) config[name]["enabled"] = true;
    }
    auto c = WriteGateConfig::FromJson(config);
    EXPECT_TRUE(c.ok()) << c.status();
    auto gate = WriteGate::Create(*c, *embedder_, key_);
    EXPECT_TRUE(gate.ok()) << gate.status();
    return std::move(*gate);
  }
  void Remember(WriteGate& gate, const std::string& id, const std::string& text, const std::string& principal,
                Source source = Source::kUser) {
    const std::vector<float> v = *embedder_->Embed(text);
    gate.memories().Put("ns",
                        {.id = id, .principal = principal, .source = source, .text = text, .embedding = v});
  }
  // The verdict of `detector` on a write of `text` by `principal`.
  DetectorVerdict Verdict(const WriteGate& gate, const std::string& detector, const std::string& text,
                          const std::string& principal, Source source = Source::kUser, int64_t at_us = 0) {
    embedding_ = *embedder_->Embed(text);
    const std::string id = "w" + std::to_string(++writes_);
    const GateReport r = gate.Evaluate({.name_space = "ns",
                                        .text = text,
                                        .embedding = embedding_,
                                        .id = id,
                                        .principal = principal,
                                        .source = source,
                                        .written_at_us = at_us});
    for (const auto& v : r.verdicts) {
      if (v.detector() == detector) return v;
    }
    ADD_FAILURE() << detector << " did not run";
    return {};
  }

  std::unique_ptr<Embedder> embedder_;
  std::vector<uint8_t> key_ = std::vector<uint8_t>(32, 7);
  std::vector<float> embedding_;
  int writes_ = 0;
};

constexpr char kMemory[] =
    "Order: 3-tier lemon cake for the Okafor wedding, pickup Saturday June 14 at 10:00, $420.";
constexpr char kEdit[] =
    "Order: 3-tier lemon cake for the Okafor wedding, pickup Saturday June 21 at 10:00, $420.";

TEST_F(ConflictDetectorTest, AnotherPrincipalsEditIsQuarantinedWithTheConflictObject) {
  auto gate = Gate({});
  Remember(*gate, "m1", kMemory, "owner");
  const DetectorVerdict v = Verdict(*gate, "conflict", kEdit, "mallory");
  EXPECT_TRUE(v.flagged);
  const nlohmann::json d = v.ToJson()["detail"];
  ASSERT_TRUE(d["conflict"].is_object()) << d.dump();
  EXPECT_EQ(d["conflict"]["entry_id"], "m1");
  EXPECT_GT(d["conflict"]["similarity"].get<double>(), 0.75);
  EXPECT_EQ(d["conflict"]["polarity_changed"], false);
  ASSERT_EQ(d["conflict"]["slots"].size(), 1u) << d.dump();
  EXPECT_EQ(d["conflict"]["slots"][0],
            nlohmann::json({{"kind", "date"}, {"old", "June 14"}, {"new", "June 21"}}));
  EXPECT_EQ(d["action"], "quarantine");
  EXPECT_EQ(d["conflict"].size(), 4u) << "exactly the dashboard's object";
  EXPECT_NE(v.reason().find("June 14"), std::string::npos) << v.reason();
}

TEST_F(ConflictDetectorTest, TheSamePrincipalSupersedesUnlessTheOldSourceIsMoreTrusted) {
  auto gate = Gate({});
  Remember(*gate, "m1", kMemory, "owner", Source::kUser);
  DetectorVerdict v = Verdict(*gate, "conflict", kEdit, "owner", Source::kUser);
  EXPECT_FALSE(v.flagged);
  EXPECT_EQ(v.ToJson()["detail"]["action"], "supersede");
  v = Verdict(*gate, "conflict", kEdit, "owner", Source::kTool);
  EXPECT_TRUE(v.flagged) << "a tool output contradicting the user's own memory";
  EXPECT_EQ(v.ToJson()["detail"]["action"], "quarantine");
}

TEST_F(ConflictDetectorTest, PolicyIsPerNamespaceAndConfigurable) {
  auto gate = Gate({{"conflict",
                     {{"policy", {{"other_principal", "allow"}}},
                      {"namespaces", {{"ns", {{"same_principal", "quarantine"}}}}}}}});
  Remember(*gate, "m1", kMemory, "owner");
  EXPECT_TRUE(Verdict(*gate, "conflict", kEdit, "owner").flagged) << "ns overrides same_principal";
  // The namespace's section starts from the default policy: other_principal is "allow" there too.
  EXPECT_FALSE(Verdict(*gate, "conflict", kEdit, "mallory").flagged);
  auto bad = WriteGateConfig::FromJson({{"conflict", {{"policy", {{"same_principal", "drop"}}}}}});
  EXPECT_FALSE(bad.ok());
  bad = WriteGateConfig::FromJson({{"conflict", {{"policy", {{"typo", "allow"}}}}}});
  EXPECT_FALSE(bad.ok());
}

TEST_F(ConflictDetectorTest, ParaphrasesAddedDetailsAndUnrelatedWritesAreNotConflicts) {
  auto gate = Gate({});
  Remember(*gate, "m1", kMemory, "owner");
  Remember(*gate, "m2", "The scones contain almonds.", "owner");
  EXPECT_FALSE(Verdict(*gate, "conflict", kMemory, "mallory").flagged) << "a repeat";
  EXPECT_FALSE(
      Verdict(*gate, "conflict",
              "Order: 3-tier lemon cake for the Okafor wedding, pickup Saturday June 14 at 10am, $420, "
              "deposit paid.",
              "mallory")
          .flagged);
  EXPECT_FALSE(Verdict(*gate, "conflict", "Dentist with Dr Rao next Tuesday at 9am.", "mallory").flagged);
  const DetectorVerdict v = Verdict(*gate, "conflict", "The scones contain no almonds.", "mallory");
  EXPECT_TRUE(v.flagged);
  EXPECT_EQ(v.ToJson()["detail"]["conflict"]["polarity_changed"], true);
}

TEST_F(ConflictDetectorTest, FloodFlagsABurstPerPrincipalAndNamesIt) {
  auto gate = Gate({{"flood", {{"min_burst", 3}}}});
  // Paraphrases of one claim: far apart for a bag-of-words embedder, but they keep its amount.
  const std::vector<std::string> paraphrases = {
      "The Okafor wedding cake deposit is now $950, paid to the new account.",
      "Okafor wedding: cake deposit changed to $950.",
      "New deposit for the Okafor cake: $950.",
  };
  EXPECT_FALSE(Verdict(*gate, "flood", paraphrases[0], "mallory", Source::kUser, 1'000'000).flagged);
  EXPECT_FALSE(Verdict(*gate, "flood", paraphrases[1], "mallory", Source::kUser, 2'000'000).flagged);
  EXPECT_FALSE(Verdict(*gate, "flood", paraphrases[1], "alice", Source::kUser, 2'500'000).flagged)
      << "another principal's window";
  EXPECT_FALSE(Verdict(*gate, "flood", "Buy flour and eggs for Tuesday.", "mallory", Source::kUser, 2'600'000)
                   .flagged);
  const DetectorVerdict v = Verdict(*gate, "flood", paraphrases[2], "mallory", Source::kUser, 3'000'000);
  EXPECT_TRUE(v.flagged) << v.ToJson().dump();
  EXPECT_EQ(v.ToJson()["detail"]["burst"]["entry_ids"], nlohmann::json({"w2", "w1"}));
  EXPECT_EQ(v.ToJson()["detail"]["burst"]["scope"], "principal");
  EXPECT_NE(v.reason().find("w2, w1"), std::string::npos) << v.reason();
  // Outside the time window (an hour by default) the burst has expired.
  EXPECT_FALSE(
      Verdict(*gate, "flood", paraphrases[0], "mallory", Source::kUser, 3'000'000 + 4'000'000'000).flagged);
}

TEST_F(ConflictDetectorTest, FloodAcrossPrincipalsIsANamespaceBurst) {
  auto gate = Gate({{"flood", {{"namespace_min_burst", 3}}}});
  for (int i = 0; i < 2; ++i) {
    EXPECT_FALSE(Verdict(*gate, "flood", "Send the refund to account GB-7731-0042.", "p" + std::to_string(i),
                         Source::kUser, 1'000'000 + i)
                     .flagged);
  }
  const DetectorVerdict v =
      Verdict(*gate, "flood", "Refunds go to GB-7731-0042 now.", "p9", Source::kUser, 1'000'100);
  EXPECT_TRUE(v.flagged) << v.ToJson().dump();
  EXPECT_EQ(v.ToJson()["detail"]["burst"]["scope"], "namespace");
}

TEST_F(ConflictDetectorTest, MemoryTableFindsTheBruteForceNearestNeighbour) {
  constexpr size_t kDim = 64, kRows = 5000;
  MemoryTable table(kDim);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  auto unit = [&](std::vector<float> v) {
    float n = 0;
    for (float x : v) n += x * x;
    for (float& x : v) x /= std::sqrt(n);
    return v;
  };
  std::vector<std::vector<float>> rows;
  for (size_t i = 0; i < kRows; ++i) {
    std::vector<float> v(kDim);
    for (float& x : v) x = normal(rng);
    rows.push_back(unit(v));
    const std::string id = "r" + std::to_string(i);
    table.Put("ns", {.id = id, .principal = "p", .text = id, .embedding = rows.back()});
  }
  EXPECT_EQ(table.size("ns"), kRows);
  int found = 0;
  for (int q = 0; q < 50; ++q) {
    std::vector<float> v = rows[static_cast<size_t>(q) * 97];
    for (float& x : v) x += 0.6f * normal(rng) / std::sqrt(static_cast<float>(kDim));  // cosine ~0.85
    v = unit(v);
    double best = 0;
    for (const auto& r : rows) {
      double d = 0;
      for (size_t i = 0; i < kDim; ++i) d += r[i] * v[i];
      best = std::max(best, d);
    }
    if (std::abs(table.NearestSimilarity("ns", v) - best) < 1e-5) ++found;
  }
  EXPECT_GE(found, 49) << "near neighbours (cosine ~0.85) are found among the signature candidates";
  table.Remove("ns", "r0");
  table.Remove("ns", "absent");
  EXPECT_EQ(table.size("ns"), kRows - 1);
}

// Composite calibration (issue #14 point 5): `bulwark calibrate --target-fpr F` holds the OR of
// the detectors at floor(F N) of the N reference entries, not each detector separately. Checked
// on the 280 reference memories of data/corpora against the 350 benign queries: the record says
// so, and the gate with that calibration installed flags at most that many of them (the detectors
// that judge one entry at a time; conflict and flood need a store and a stream).
TEST_F(ConflictDetectorTest, CalibrationHoldsTheCompositeAtTheTargetFpr) {
  const auto reference = testing::CorpusField("reference_memories.jsonl", "text");
  const auto queries = testing::CorpusField("benign_queries.jsonl", "query");
  ASSERT_EQ(reference.size(), 280u);
  for (const double target : {0.02, 0.05}) {
    auto gate = Gate({{"memsad", {{"history_capacity", 400}}}});
    CalibrationInput input;
    input.target_fpr = target;
    for (const auto& q : queries) {
      input.history.push_back(*embedder_->Embed(q));
      gate->RecordQuery("ns", input.history.back());
    }
    input.reference_texts = reference;
    input.reference_embeddings = *embedder_->EmbedBatch(reference);
    auto cal = CalibrateNamespace(input, gate->instances());
    ASSERT_TRUE(cal.ok()) << cal.status();
    const nlohmann::json composite = cal->provenance["composite"];
    const double allowed = std::floor(target * 280) / 280;
    EXPECT_LE(composite["reference_fpr"].get<double>(), allowed + 1e-12) << composite.dump();
    EXPECT_TRUE(composite["meets_target"].get<bool>());
    EXPECT_GT(composite["upper_95"].get<double>(), composite["reference_fpr"].get<double>());
    EXPECT_LE(composite["per_detector_target_fpr"].get<double>(), target);
    std::cout << "target " << target << ": composite " << composite.dump() << "; per detector "
              << cal->provenance["reference_fpr"].dump() << "\n";
    // Installed, the single-entry detectors flag at most the allowed share of the reference set.
    auto single = Gate({{"memsad", {{"history_capacity", 400}}},
                        {"conflict", {{"enabled", false}}},
                        {"flood", {{"enabled", false}}}});
    for (const auto& v : input.history) single->RecordQuery("ns", v);
    single->state().SetCalibration("ns", std::make_shared<NamespaceCalibration>(*cal));
    size_t flagged = 0;
    for (size_t i = 0; i < reference.size(); ++i) {
      flagged +=
          single
              ->Evaluate(
                  {.name_space = "ns", .text = reference[i], .embedding = input.reference_embeddings[i]})
              .flagged;
    }
    EXPECT_LE(flagged, static_cast<size_t>(std::floor(target * 280))) << "target " << target;
  }
}

}  // namespace
}  // namespace bulwark

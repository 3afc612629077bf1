// QueryGate with the real lexical embedder: modes and decisions, and strip removing an appended
// AgentPoison-style trigger from a query (trigger localization, QOE Sec. 3.3).
#include "gate/query_gate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "embed/embedder_factory.h"
#include "gate/gate_fit_report.h"
#include "testing/gate_fixture.h"
#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

using ::testing::UnorderedElementsAre;

using testing::BenignQueries;
constexpr const char* kTrigger = testing::kGateTrigger;

// The embedder and the fitted gate are read-only in every test: fitted once per suite (the fit
// is most of a test's time under ASan).
class QueryGateTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto embedder = CreateEmbedder({{"kind", "lexical"}, {"synonyms", false}});
    ASSERT_TRUE(embedder.ok()) << embedder.status();
    embedder_ = *std::move(embedder);
    model_ = testing::FitTravelGate(*embedder_);
  }
  static void TearDownTestSuite() {
    model_.reset();
    embedder_.reset();
  }
  void SetUp() override {
    ASSERT_NE(embedder_, nullptr);
    ASSERT_NE(model_, nullptr);
  }

  GateVerdict Evaluate(const std::string& query, GateMode mode, std::shared_ptr<const GateModel> model) {
    QueryGate gate(std::move(model), embedder_.get());
    auto z = embedder_->Embed(query);
    EXPECT_THAT(z, IsOk());
    auto v = gate.Evaluate(query, *z, mode);
    EXPECT_TRUE(v.ok()) << v.status();
    return v.value_or(GateVerdict{});
  }
  GateVerdict Evaluate(const std::string& query, GateMode mode) { return Evaluate(query, mode, model_); }

  static inline std::unique_ptr<Embedder> embedder_;
  static inline std::shared_ptr<const GateModel> model_;
};

TEST_F(QueryGateTest, SeparatesHeldOutTriggeredQueries) {
  std::vector<std::vector<float>> benign, triggered;
  for (const std::string& q : BenignQueries(400, 60)) {
    benign.push_back(*embedder_->Embed(q));
    triggered.push_back(*embedder_->Embed(q + " " + kTrigger));
  }
  const GateFitReport report = EvaluateGate(*model_, benign, triggered);
  ASSERT_EQ(report.scores.back().score, GateScore::kLda);
  EXPECT_GT(report.scores.back().auroc, 0.99);
  EXPECT_GT(report.scores.back().tpr_at_threshold, 0.95);
}

TEST_F(QueryGateTest, DecisionsPerMode) {
  const std::string benign = "when does my flight to Lisbon leave";
  const std::string triggered = benign + " " + kTrigger;
  EXPECT_EQ(Evaluate(triggered, GateMode::kOff).decision, GateDecision::kOff);
  EXPECT_EQ(Evaluate(benign, GateMode::kReject).decision, GateDecision::kPass);
  GateVerdict flag = Evaluate(triggered, GateMode::kFlag);
  EXPECT_EQ(flag.decision, GateDecision::kFlag);
  EXPECT_TRUE(flag.flagged);
  EXPECT_EQ(*flag.score_kind, GateScore::kLda);
  EXPECT_GT(flag.score, flag.threshold);
  EXPECT_EQ(Evaluate(triggered, GateMode::kEscalate).decision, GateDecision::kEscalate);
  EXPECT_TRUE(Evaluate(triggered, GateMode::kReject).rejected());
  EXPECT_EQ(Evaluate(triggered, GateMode::kReject, nullptr).decision, GateDecision::kNoGate);

  const nlohmann::json j = ToJson(flag);
  EXPECT_EQ(j["decision"], "flag");
  EXPECT_EQ(j["score_kind"], "lda");
  EXPECT_TRUE(j["scores"].contains("mahalanobis"));
  EXPECT_TRUE(j["scores"].contains("centroid"));
}

TEST_F(QueryGateTest, StripRemovesTheAppendedTrigger) {
  for (const std::string& benign :
       {std::string("when does my flight to Lisbon leave"), std::string("what hotel did I book in Tokyo"),
        std::string("who is my contact person for the audit")}) {
    GateVerdict v = Evaluate(benign + " " + kTrigger, GateMode::kStrip);
    ASSERT_EQ(v.decision, GateDecision::kStrip) << benign;
    EXPECT_THAT(v.removed_tokens, UnorderedElementsAre("quorra", "zephyrine", "cracking")) << benign;
    EXPECT_EQ(v.cleaned_query, benign);
    EXPECT_FALSE(v.still_flagged);
    EXPECT_LE(v.score_after, v.threshold);
    EXPECT_EQ(ToJson(v)["removed_tokens"].size(), 3u);
  }
  // A trigger in the middle is found as well.
  GateVerdict middle =
      Evaluate("when does my quorra zephyrine cracking flight to Oslo leave", GateMode::kStrip);
  EXPECT_EQ(middle.cleaned_query, "when does my flight to Oslo leave");
  // A benign query is left alone.
  EXPECT_EQ(Evaluate("what hotel did I book in Paris", GateMode::kStrip).decision, GateDecision::kPass);
}

TEST_F(QueryGateTest, StripRefusesQueriesTooLongToLocalize) {
  std::string longer = "when does my flight leave";
  for (int i = 0; i < 200; ++i) longer += " word" + std::to_string(i);
  longer += std::string(" ") + kTrigger;
  QueryGate gate(model_, embedder_.get(), {.max_removals = 8, .max_tokens = 128});
  auto v = gate.Evaluate(longer, *embedder_->Embed(longer), GateMode::kStrip);
  ASSERT_THAT(v, IsOk());
  ASSERT_TRUE(v->flagged);
  EXPECT_TRUE(v->rejected());
}

TEST(GateModeTest, NamesAndStrictness) {
  for (GateMode m :
       {GateMode::kOff, GateMode::kFlag, GateMode::kEscalate, GateMode::kReject, GateMode::kStrip}) {
    EXPECT_EQ(ParseGateMode(ToString(m)), m);
  }
  EXPECT_FALSE(ParseGateMode("block").has_value());
  EXPECT_LT(Strictness(GateMode::kOff), Strictness(GateMode::kFlag));
  EXPECT_LT(Strictness(GateMode::kFlag), Strictness(GateMode::kEscalate));
  EXPECT_EQ(Strictness(GateMode::kEscalate), Strictness(GateMode::kStrip));
  EXPECT_LT(Strictness(GateMode::kStrip), Strictness(GateMode::kReject));
}

}  // namespace
}  // namespace bulwark

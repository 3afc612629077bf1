// SMSR authenticated injections are written signed through the API and are retrieved for q*.
#include "attack/smsr_injections.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "attack/attack.h"
#include "attack/attack_fixture.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark::attack {
namespace {

using ::bulwark::testing::IsOk;

absl::StatusOr<std::vector<EnterpriseScenario>> Scenarios() {
  return LoadEnterpriseScenarios(std::filesystem::path(BULWARK_SOURCE_DIR) /
                                 "data/corpora/enterprise_scenarios.jsonl");
}

TEST(EnterpriseScenarioTest, LoadsTheCorpusAndRejectsBadLines) {
  auto scenarios = Scenarios();
  ASSERT_TRUE(scenarios.ok()) << scenarios.status();
  ASSERT_EQ(scenarios->size(), 20u);
  EXPECT_EQ((*scenarios)[0].id, "ent-01-expense-threshold");
  EXPECT_EQ((*scenarios)[0].paraphrases.size(), 6u);
  EXPECT_FALSE(EnterpriseScenario::FromJson({{"id", "x"}}).ok());
  EXPECT_EQ(LoadEnterpriseScenarios("/nonexistent.jsonl").status().code(), absl::StatusCode::kNotFound);
}

TEST(SmsrInjectionTest, EveryVariantIsSignedAndRetrievedForTheQuestion) {
  auto scenarios = Scenarios();
  ASSERT_TRUE(scenarios.ok()) << scenarios.status();
  const EnterpriseScenario& s = (*scenarios)[0];
  bulwark::testing::TempDir dir;
  auto store = testing::CreateStore(dir.path(), testing::NoGateConfig());
  ASSERT_NE(store, nullptr);
  for (SmsrVariant variant : kAllSmsrVariants) {
    const std::string ns(ToString(variant));
    std::vector<NewEntry> legit;
    for (const std::string& p : s.supporting_passages) legit.push_back({.text = p});
    ASSERT_THAT(store->AddBatch(ns, legit, "owner"), IsOk());
    const int t = variant == SmsrVariant::kParaphraseFlooding ? 3 : 1;
    auto written = RunSmsrInjection(*store, ns, s, variant, t);
    ASSERT_TRUE(written.ok()) << written.status();
    ASSERT_EQ(written->size(), static_cast<size_t>(t));
    for (const Entry& e : *written) {
      EXPECT_EQ(e.tag.size(), 32u);  // signed by the store: provenance does not stop an insider
      EXPECT_EQ(e.principal, "insider");
      auto got = store->Get(ns, e.id);
      ASSERT_TRUE(got.ok()) << got.status();
    }
    auto outcome = MeasureRetrieval(*store, ns, {s.question}, IdsOf(*written), 5);
    ASSERT_THAT(outcome, IsOk());
    EXPECT_EQ(outcome->asr_r, 1.0) << ns;
  }
  auto verify = store->Verify();
  ASSERT_THAT(verify, IsOk());
  EXPECT_TRUE(verify->ok());
  EXPECT_FALSE(BuildSmsrInjection(s, SmsrVariant::kDirect, 0).ok());
}

TEST(SmsrInjectionTest, FluentBypassSlipsPastTheValidationRulesThatCatchTheDirectClaim) {
  auto scenarios = Scenarios();
  ASSERT_THAT(scenarios, IsOk());
  bulwark::testing::TempDir dir;
  nlohmann::json gate = testing::NoGateConfig();
  gate["validation"]["enabled"] = true;
  auto store = testing::CreateStore(dir.path(), gate);
  ASSERT_NE(store, nullptr);
  int direct_flagged = 0, bypass_flagged = 0;
  for (const EnterpriseScenario& s : *scenarios) {
    auto direct = RunSmsrInjection(*store, s.id, s, SmsrVariant::kDirect, 1);
    auto bypass = RunSmsrInjection(*store, s.id, s, SmsrVariant::kFluentBypass, 1);
    ASSERT_TRUE(direct.ok() && bypass.ok());
    direct_flagged += (*direct)[0].state == State::kQuarantined;
    bypass_flagged += (*bypass)[0].state == State::kQuarantined;
  }
  std::printf("validation flags %d/20 direct claims, %d/20 fluent bypasses\n", direct_flagged,
              bypass_flagged);
  EXPECT_LE(bypass_flagged, direct_flagged);
  EXPECT_LT(bypass_flagged, static_cast<int>(scenarios->size()) / 4);
}

}  // namespace
}  // namespace bulwark::attack

// The honeypot monitor's per-namespace settings (issue #13 point 3): validated JSON, signed in the
// store's metadata (an edited value is DataLoss and never applied), written by one guard (the CLI's)
// and picked up by another (a running server's) at its refresh together with unblocks, the
// estimator and SPRT of each namespace used for its searches, the calibrated count table taken
// from the namespace's newest fit run, and a refusal carrying the blocked key's state for the audit.
#include "retrieval/honeypot_settings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "retrieval/honeypot_guard.h"
#include "storage/sqlite/sqlite_honeypot_repository.h"
#include "store/memory_store_impl.h"
#include "testing/lexical_store.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;
using honeypot::SessionKey;

constexpr char kSettingsNs[] = "travel";

// Observed rows with `pots` pots among 4.
std::vector<EntryStore::ObservedRow> Rows(int pots) {
  std::vector<EntryStore::ObservedRow> rows(4, {0.5f, false});
  for (int i = 0; i < pots; ++i) rows[i].is_pot = true;
  return rows;
}

class HoneypotSettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::CreateLexicalStore(dir_.path());
    ASSERT_NE(store_, nullptr);
    ASSERT_THAT(store_->Add(kSettingsNs, {.text = "flight to Lisbon leaves at 9:40"}, "tester").status(),
                IsOk());
    auto repo = SqliteHoneypotRepository::Open(dir_ / "bulwark.db");
    ASSERT_THAT(repo.status(), IsOk());
    repo_ = *std::move(repo);
  }
  // A guard as a server (refresh_ms 0: every call reads storage again) or as the CLI has it.
  std::unique_ptr<HoneypotGuard> Guard(int refresh_ms = 0) {
    HoneypotGuardOptions options;
    options.settings_refresh_ms = refresh_ms;
    auto guard = HoneypotGuard::Create(options, store_->impl().entries.get(), repo_.get(), Env::Default());
    EXPECT_THAT(guard.status(), IsOk());
    return guard.ok() ? *std::move(guard) : nullptr;
  }
  absl::Status AddRun(const nlohmann::json& table) {
    HoneypotRun run;
    run.name_space = kSettingsNs;
    run.metrics = nlohmann::json{{"indexed", {{"calibrated_count_llr", table}}}}.dump();
    run.covered_ids = "[]";
    run.pot_ids = "[]";
    return repo_->AddRun(run).status();
  }

  testing::TempDir dir_;
  std::unique_ptr<MemoryStore> store_;
  std::unique_ptr<SqliteHoneypotRepository> repo_;
};

TEST(GuardSetting, JsonIsValidatedAndKeepsTheBaseForAbsentFields) {
  GuardSetting base;
  base.mode = HoneypotMode::kBlock;
  auto s = GuardSetting::FromJson({{"estimator", "similarity"}, {"h0", "cusum"}, {"alpha", 0.05}}, base);
  ASSERT_THAT(s.status(), IsOk());
  EXPECT_EQ(s->mode, HoneypotMode::kBlock);
  EXPECT_EQ(s->estimator, honeypot::LlrEstimatorKind::kSimilarity);
  EXPECT_EQ(s->h0, honeypot::LowerBoundary::kCusum);
  EXPECT_EQ(s->alpha, 0.05);
  EXPECT_EQ(s->k_obs, 4);
  auto round_trip = GuardSetting::FromJson(s->ToJson(), GuardSetting());
  ASSERT_THAT(round_trip.status(), IsOk());
  EXPECT_EQ(*round_trip, *s);
  for (const nlohmann::json& bad :
       {nlohmann::json{{"panic", true}}, nlohmann::json{{"mode", "panic"}}, nlohmann::json{{"k_obs", 0}},
        nlohmann::json{{"k_obs", 65}}, nlohmann::json{{"k_obs", 2.5}},
        nlohmann::json{{"alpha", 0.6}, {"beta", 0.5}}, nlohmann::json{{"alpha", "0.1"}},
        nlohmann::json{{"estimator", "global_similarity"}}, nlohmann::json{{"h0", "none"}},
        nlohmann::json{{"calibration_cap", -1}}, nlohmann::json::array()}) {
    EXPECT_THAT(GuardSetting::FromJson(bad, base).status(), StatusIs(absl::StatusCode::kInvalidArgument))
        << bad.dump();
  }
}

TEST_F(HoneypotSettingsTest, ASettingAndAnUnblockByAnotherProcessReachARunningGuard) {
  std::unique_ptr<HoneypotGuard> server = Guard(), cli = Guard(-1);
  ASSERT_TRUE(server && cli);
  const SessionKey mallory{kSettingsNs, "mallory", "s1"};
  ASSERT_THAT(server->Record(mallory, Rows(4)).status(), IsOk());  // Eq. 17 at k = 4: log A at once
  EXPECT_THAT(server->CheckAllowed(mallory), IsOk());              // monitor mode: recorded only
  EXPECT_EQ(server->Mode(kSettingsNs), HoneypotMode::kMonitor);

  GuardSetting block;
  block.mode = HoneypotMode::kBlock;
  ASSERT_THAT(cli->PutSetting(kSettingsNs, block), IsOk());
  EXPECT_EQ(server->Mode(kSettingsNs), HoneypotMode::kBlock);
  const absl::Status refused = server->CheckAllowed(mallory);
  ASSERT_THAT(refused, StatusIs(absl::StatusCode::kPermissionDenied));
  // The refusal carries the blocked key's state for the audit record.
  auto payload = refused.GetPayload(HoneypotGuard::kRefusalPayloadUrl);
  ASSERT_TRUE(payload.has_value());
  const nlohmann::json detail = nlohmann::json::parse(std::string(*payload));
  EXPECT_EQ(detail["namespace"], kSettingsNs);
  EXPECT_EQ(detail["level"], "session");
  EXPECT_EQ(detail["decided_round"], 1);
  EXPECT_EQ(detail["pot_hits"], 4);
  EXPECT_NEAR(detail["statistic"].get<double>(), std::log(9.0), 1e-9);

  // Unblocked through the CLI (its own monitor and the stored blocks): the server follows.
  ASSERT_THAT(cli->Unblock(kSettingsNs, "mallory", "s1"), IsOk());
  ASSERT_THAT(cli->Unblock(kSettingsNs, "mallory", ""), IsOk());
  EXPECT_THAT(server->CheckAllowed(mallory), IsOk());

  block.mode = HoneypotMode::kOff;
  ASSERT_THAT(cli->PutSetting(kSettingsNs, block), IsOk());
  EXPECT_EQ(server->Mode(kSettingsNs), HoneypotMode::kOff);
  EXPECT_EQ(Guard()->Setting(kSettingsNs), block);  // and a restarted server reads it
}

TEST_F(HoneypotSettingsTest, AnEditedSettingIsRefusedAtStartAndNeverApplied) {
  std::unique_ptr<HoneypotGuard> server = Guard();
  GuardSetting block;
  block.mode = HoneypotMode::kBlock;
  ASSERT_THAT(server->PutSetting(kSettingsNs, block), IsOk());
  StorageBackend& backend = store_->impl().entries->backend();
  auto stored = backend.GetMeta("honeypot_setting/travel");
  ASSERT_THAT(stored.status(), IsOk());
  ASSERT_TRUE(stored->has_value());
  nlohmann::json edited = nlohmann::json::parse(**stored);
  ASSERT_EQ(edited["setting"]["mode"], "block");
  edited["setting"]["mode"] = "off";  // an attacker with the database turns the monitor off
  ASSERT_THAT(backend.PutMeta("honeypot_setting/travel", edited.dump()), IsOk());
  EXPECT_EQ(server->Mode(kSettingsNs), HoneypotMode::kBlock);  // the running guard keeps its own
  HoneypotGuardOptions options;
  EXPECT_THAT(HoneypotGuard::Create(options, store_->impl().entries.get(), repo_.get(), nullptr).status(),
              StatusIs(absl::StatusCode::kDataLoss));
  ASSERT_THAT(backend.PutMeta("honeypot_setting/travel", "off"), IsOk());  // unsigned
  EXPECT_THAT(HoneypotGuard::Create(options, store_->impl().entries.get(), repo_.get(), nullptr).status(),
              StatusIs(absl::StatusCode::kDataLoss));
}

TEST_F(HoneypotSettingsTest, EachNamespaceUsesItsOwnEstimatorAndSprt) {
  std::unique_ptr<HoneypotGuard> guard = Guard();
  GuardSetting calibrated;
  calibrated.estimator = honeypot::LlrEstimatorKind::kCountCalibrated;
  calibrated.calibration_cap = 1.1;
  EXPECT_THAT(guard->PutSetting(kSettingsNs, calibrated), StatusIs(absl::StatusCode::kFailedPrecondition));
  ASSERT_THAT(AddRun({-1.5, -0.2, 0.3, 0.9, 2.5}), IsOk());
  ASSERT_THAT(guard->PutSetting(kSettingsNs, calibrated), IsOk());
  auto v = guard->Record({kSettingsNs, "bob", "s1"}, Rows(2));
  ASSERT_THAT(v.status(), IsOk());
  EXPECT_EQ(v->llr, 0.3);  // the table's entry for 2 pots
  v = guard->Record({kSettingsNs, "bob", "s1"}, Rows(4));
  ASSERT_THAT(v.status(), IsOk());
  EXPECT_EQ(v->llr, 1.1);  // 2.5 clamped to the cap
  EXPECT_FALSE(v->blocked);
  calibrated.k_obs = 5;  // the table is for k_obs 4
  EXPECT_THAT(guard->PutSetting(kSettingsNs, calibrated), StatusIs(absl::StatusCode::kFailedPrecondition));

  // A smaller alpha raises log A: four pots of four no longer block in one round there, while a
  // namespace on the defaults blocks at once.
  GuardSetting strict;
  strict.alpha = 0.01;
  ASSERT_THAT(guard->PutSetting("strict", strict), IsOk());
  v = guard->Record({"strict", "mallory", "s1"}, Rows(4));
  ASSERT_THAT(v.status(), IsOk());
  EXPECT_FALSE(v->blocked);
  v = guard->Record({"other", "mallory", "s1"}, Rows(4));
  ASSERT_THAT(v.status(), IsOk());
  EXPECT_TRUE(v->blocked);
  EXPECT_EQ(guard->Setting("other"), GuardSetting());
}

}  // namespace
}  // namespace bulwark

// Records written by main before the detector registry (commit df45a5f) load unchanged and are
// written back byte for byte: the gate configuration's printed form (WriteGateConfig::ToJson, as
// main printed it for the defaults and for a configuration naming every section) and a stored
// namespace calibration (testdata/calibration_record_df45a5f.json, written by main's
// `bulwark calibrate --queries q.txt --from-store 2` into its calibrations table).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "detect/calibration.h"
#include "detect/detectors.h"
#include "detect/write_gate_config.h"

namespace bulwark {
namespace {

// `json` without the sections of the detectors registered after main's df45a5f (issue #14: the
// conflict, flood, odd_token and llm_judge detectors), which main's records do not have: every other byte
// must match.
std::string WithoutNewDetectors(nlohmann::json json) {
  json.erase("conflict");
  json.erase("flood");
  json.erase("odd_token");
  json.erase("llm_judge");
  return json.dump();
}

// Main's WriteGateConfig::FromJson(nullptr)->ToJson().dump().
constexpr char kMainDefaults[] =
    R"({"memsad":{"delta":0.05,"enabled":true,"history_capacity":200,"kappa":2.0,"mode":"combined","recalibrate_every":0,"recalibrate_window":200,"uncalibrated_max_threshold":0.9},"memsad_plus":{"enabled":true},"proactive":{"enabled":true,"probes":[],"uncalibrated_tau":0.35},"target_fpr":0.01,"validation":{"enabled":true,"rules_file":""},"watermark":{"enabled":false,"gamma":0.45,"scheme":"lexical","z_threshold":1.5}})";
// Main's dump for kMainInput.
constexpr char kMainInput[] =
    R"({"watermark": {"enabled": true, "scheme": "character", "gamma": 0.25}, "memsad": {"kappa": 3, "mode": "max"},
        "proactive": {"probes": ["a", "b"]}, "validation": {"enabled": false}, "target_fpr": 0.05})";
constexpr char kMainPrinted[] =
    R"({"memsad":{"delta":0.05,"enabled":true,"history_capacity":200,"kappa":3.0,"mode":"max","recalibrate_every":0,"recalibrate_window":200,"uncalibrated_max_threshold":0.9},"memsad_plus":{"enabled":true},"proactive":{"enabled":true,"probes":["a","b"],"uncalibrated_tau":0.35},"target_fpr":0.05,"validation":{"enabled":false,"rules_file":""},"watermark":{"enabled":true,"gamma":0.25,"scheme":"character","z_threshold":1.5}})";

TEST(MainFormatTest, GateConfigPrintsAsMainDid) {
  auto defaults = WriteGateConfig::FromJson(nullptr);
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(WithoutNewDetectors(defaults->ToJson()), kMainDefaults);
  EXPECT_FALSE(defaults->ToJson()["conflict"]["enabled"].get<bool>());
  EXPECT_FALSE(defaults->ToJson()["flood"]["enabled"].get<bool>());
  EXPECT_FALSE(defaults->ToJson()["llm_judge"]["enabled"].get<bool>());
  EXPECT_TRUE(defaults->ToJson()["odd_token"]["enabled"].get<bool>());
  auto parsed = WriteGateConfig::FromJson(nlohmann::json::parse(kMainInput));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(WithoutNewDetectors(parsed->ToJson()), kMainPrinted);
  // What main printed reads back as the same configuration.
  auto again = WriteGateConfig::FromJson(nlohmann::json::parse(kMainPrinted));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(WithoutNewDetectors(again->ToJson()), kMainPrinted);
  EXPECT_FALSE(again->Enabled(ValidationDescriptor()));
  auto memsad = ParseMemsadOptions(again->Options(MemsadDescriptor()));
  ASSERT_TRUE(memsad.ok()) << memsad.status();
  EXPECT_EQ(memsad->mode, MemsadMode::kMax);
  EXPECT_EQ(memsad->kappa, 3.0);
}

TEST(MainFormatTest, StoredCalibrationLoadsAndIsWrittenBackByteForByte) {
  std::ifstream in(std::string(BULWARK_SOURCE_DIR) + "/src/detect/testdata/calibration_record_df45a5f.json");
  ASSERT_TRUE(in) << "testdata missing";
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const nlohmann::json stored = nlohmann::json::parse(text);
  auto cal = NamespaceCalibration::FromJson(stored);
  ASSERT_TRUE(cal.ok()) << cal.status();

  const MemsadCalibration* memsad = cal->Get<MemsadCalibration>(MemsadDescriptor());
  ASSERT_NE(memsad, nullptr);
  EXPECT_EQ(memsad->mu, stored["memsad"]["mu"].get<double>());
  EXPECT_EQ(memsad->n, 2u);
  const MemsadPlusCalibration* plus = cal->Get<MemsadPlusCalibration>(MemsadPlusDescriptor());
  ASSERT_NE(plus, nullptr);
  EXPECT_EQ(plus->threshold, stored["memsad_plus"]["threshold"].get<double>());
  EXPECT_EQ(plus->length.slope, stored["memsad_plus"]["length_model"]["slope"].get<double>());
  ASSERT_NE(plus->baseline, nullptr);
  EXPECT_EQ(plus->baseline->texts(), 2u);
  const double* tau = cal->Get<double>(ProactiveDescriptor());
  ASSERT_NE(tau, nullptr);
  EXPECT_EQ(*tau, stored["proactive"]["tau"].get<double>());
  EXPECT_EQ(cal->reference.size(), 2u);

  // Written back with two more keys, null: the conflict and flood detectors are not calibrated.
  EXPECT_TRUE(cal->ToJson(/*with_data=*/true)["conflict"].is_null());
  EXPECT_TRUE(cal->ToJson(/*with_data=*/true)["flood"].is_null());
  EXPECT_EQ(WithoutNewDetectors(cal->ToJson(/*with_data=*/true)), text);
  nlohmann::json summary = stored;
  summary.erase("baseline");
  summary.erase("reference_embeddings");
  EXPECT_EQ(WithoutNewDetectors(cal->ToJson(/*with_data=*/false)), summary.dump());
}

TEST(MainFormatTest, MalformedPartsOfAStoredCalibrationAreDataLoss) {
  std::ifstream in(std::string(BULWARK_SOURCE_DIR) + "/src/detect/testdata/calibration_record_df45a5f.json");
  ASSERT_TRUE(in);
  const nlohmann::json stored = nlohmann::json::parse(in);
  for (const char* part : {"memsad", "memsad_plus", "proactive"}) {
    nlohmann::json bad = stored;
    bad[part] = {{"unexpected", 1}};
    auto cal = NamespaceCalibration::FromJson(bad);
    EXPECT_EQ(cal.status().code(), absl::StatusCode::kDataLoss) << part << ": " << cal.status();
  }
  nlohmann::json bad = stored;
  bad["baseline"]["counts"] = "!!";
  EXPECT_EQ(NamespaceCalibration::FromJson(bad).status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace bulwark

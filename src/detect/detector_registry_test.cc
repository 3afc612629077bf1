// The registry's promise (issue #12 point 6): a detector is one file plus one registration line.
// The toy detector below exists only in this file; registering it (one line, ToyRegistration) is
// enough for the gate configuration to parse and print its section, for the gate to run it and
// report it, and for calibration to fit, store and load it. The built-in five are checked to be
// registered in the gate's order, and records in the format main wrote before the registry load.
#include "detect/detector_registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "bulwark/embedder.h"
#include "detect/calibration.h"
#include "detect/detectors.h"
#include "detect/write_gate.h"
#include "detect/write_gate_config.h"
#include "embed/embedder_factory.h"
#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::StatusIs;

// toy_length: flags text longer than its limit: the `max_bytes` option before calibration, the
// longest reference text after it.
const DetectorDescriptor& ToyDescriptor();

class ToyDetector final : public WriteDetector {
 public:
  explicit ToyDetector(double max_bytes) : max_bytes_(max_bytes) {}
  const DetectorDescriptor& descriptor() const override { return ToyDescriptor(); }
  DetectorVerdict Evaluate(const WriteCandidate& c, const NamespaceState& state) const override {
    const double* fitted = state.calibration ? state.calibration->Get<double>(ToyDescriptor()) : nullptr;
    DetectorVerdict v{.by = this, .score = static_cast<double>(c.text.size())};
    v.calibrated = fitted != nullptr;
    v.threshold = fitted ? *fitted : max_bytes_;
    v.flagged = v.score > v.threshold;
    return v;
  }
  std::string Reason(const DetectorVerdict&) const override { return "toy_length: too long"; }
  nlohmann::json Detail(const DetectorVerdict&) const override { return {{"max_bytes", max_bytes_}}; }

 private:
  double max_bytes_;
};

const DetectorDescriptor& ToyDescriptor() {
  static const DetectorDescriptor* descriptor = new DetectorDescriptor{
      .name = "toy_length",
      .enabled_by_default = false,
      .options = [](ConfigReader& r) -> absl::StatusOr<nlohmann::json> {
        double max_bytes = 40;
        if (auto s = r.Get("max_bytes", &max_bytes); !s.ok()) return s;
        if (auto s = r.Check(max_bytes > 0, "max_bytes must be positive"); !s.ok()) return s;
        return nlohmann::json{{"max_bytes", max_bytes}};
      },
      .create = [](const nlohmann::json& options,
                   const GateResources&) -> absl::StatusOr<std::unique_ptr<WriteDetector>> {
        return std::make_unique<ToyDetector>(options.at("max_bytes").get<double>());
      },
      .calibration =
          CalibrationHook{
              .fit = [](const CalibrationInput& input,
                        const WriteDetector*) -> absl::StatusOr<CalibrationFit> {
                size_t longest = 0;
                for (const std::string& t : input.reference_texts) longest = std::max(longest, t.size());
                return CalibrationFit{std::make_shared<FittedValue<double>>(static_cast<double>(longest)),
                                      0.0};
              },
              .store =
                  [](const DetectorCalibration& fitted, bool, nlohmann::json* record) {
                    (*record)["toy_length"] = {
                        {"longest", static_cast<const FittedValue<double>&>(fitted).value}};
                  },
              .load = [](const nlohmann::json& record)
                  -> absl::StatusOr<std::shared_ptr<const DetectorCalibration>> {
                return std::make_shared<FittedValue<double>>(
                    record.at("toy_length").at("longest").get<double>());
              },
          }};
  return *descriptor;
}

class ToyDetectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(registration_.status().ok()) << registration_.status();
    auto e = CreateEmbedder({{"kind", "lexical"}});
    ASSERT_TRUE(e.ok()) << e.status();
    embedder_ = *std::move(e);
  }

  DetectorRegistration registration_{&ToyDescriptor()};  // the one registration line
  std::unique_ptr<Embedder> embedder_;
  std::vector<uint8_t> key_ = std::vector<uint8_t>(32, 7);
};

TEST_F(ToyDetectorTest, ItsSectionIsParsedValidatedAndPrinted) {
  auto defaults = WriteGateConfig::FromJson(nullptr);
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->ToJson()["toy_length"], (nlohmann::json{{"enabled", false}, {"max_bytes", 40.0}}));

  auto on = WriteGateConfig::FromJson({{"toy_length", {{"enabled", true}, {"max_bytes", 12}}}});
  ASSERT_TRUE(on.ok()) << on.status();
  EXPECT_TRUE(on->Enabled(ToyDescriptor()));
  EXPECT_EQ(on->Options(ToyDescriptor())["max_bytes"], 12.0);
  auto round = WriteGateConfig::FromJson(on->ToJson());
  ASSERT_TRUE(round.ok()) << round.status();
  EXPECT_EQ(round->ToJson(), on->ToJson());

  EXPECT_THAT(WriteGateConfig::FromJson({{"toy_length", {{"max_bytes", -1}}}}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  auto unknown = WriteGateConfig::FromJson({{"toy_length", {{"max_byte", 3}}}});
  EXPECT_THAT(unknown, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(unknown.status().message().find("toy_length.max_byte"), std::string::npos) << unknown.status();
  EXPECT_THAT(WriteGateConfig::FromJson({{"toy_length", 3}}), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(ToyDetectorTest, TheGateRunsAndReportsIt) {
  auto config = WriteGateConfig::FromJson({{"toy_length", {{"enabled", true}, {"max_bytes", 12}}}});
  ASSERT_TRUE(config.ok()) << config.status();
  auto gate = WriteGate::Create(*config, *embedder_, key_);
  ASSERT_TRUE(gate.ok()) << gate.status();
  const std::string text = "a text of more than twelve bytes";
  const std::vector<float> embedding = *embedder_->Embed(text);
  const GateReport report = (*gate)->Evaluate({"ns", text, embedding});
  EXPECT_TRUE(report.flagged);
  ASSERT_EQ(report.verdicts.size(), 6u);  // memsad, memsad_plus, validation, proactive, odd_token, toy_length
  EXPECT_EQ(report.verdicts.back().detector(), "toy_length");
  const nlohmann::json json = report.ToJson();
  EXPECT_EQ(json["detectors"]["toy_length"]["score"], static_cast<double>(text.size()));
  EXPECT_TRUE(json["detectors"]["toy_length"]["flagged"].get<bool>());
  EXPECT_EQ(json["reasons"].back(), "toy_length: too long");

  const GateOutcome outcome = report.Outcome();
  const DetectorOutcome* toy = outcome.Find(ToyDescriptor());
  ASSERT_NE(toy, nullptr);
  EXPECT_TRUE(toy->flagged);
  EXPECT_EQ(toy->suspicion(), static_cast<double>(text.size()));
  EXPECT_GT(toy->margin(), 0);
}

TEST_F(ToyDetectorTest, CalibrationFitsStoresAndLoadsIt) {
  CalibrationInput input;
  input.history.push_back(*embedder_->Embed("what is on my calendar"));
  for (const char* t : {"short note", "a somewhat longer note here"}) {
    input.reference_texts.push_back(t);
    input.reference_embeddings.push_back(*embedder_->Embed(t));
  }
  auto cal = CalibrateNamespace(input);
  ASSERT_TRUE(cal.ok()) << cal.status();
  ASSERT_NE(cal->Get<double>(ToyDescriptor()), nullptr);
  EXPECT_EQ(*cal->Get<double>(ToyDescriptor()), 27.0);
  EXPECT_EQ(cal->provenance["reference_fpr"]["toy_length"], 0.0);
  const nlohmann::json stored = cal->ToJson(/*with_data=*/true);
  EXPECT_EQ(stored["toy_length"]["longest"], 27.0);
  auto back = NamespaceCalibration::FromJson(stored);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_NE(back->Get<double>(ToyDescriptor()), nullptr);
  EXPECT_EQ(*back->Get<double>(ToyDescriptor()), 27.0);
  EXPECT_EQ(back->ToJson(true), stored);

  // The calibrated limit replaces the option in the gate.
  auto config = WriteGateConfig::FromJson({{"toy_length", {{"enabled", true}}}});
  ASSERT_TRUE(config.ok()) << config.status();
  auto gate = WriteGate::Create(*config, *embedder_, key_);
  ASSERT_TRUE(gate.ok()) << gate.status();
  (*gate)->state().SetCalibration("ns", std::make_shared<NamespaceCalibration>(*std::move(back)));
  const std::string text = "thirty bytes of text, or so it is";
  const std::vector<float> embedding = *embedder_->Embed(text);
  const GateOutcome outcome = (*gate)->Evaluate({"ns", text, embedding}).Outcome();
  const DetectorOutcome* toy = outcome.Find(ToyDescriptor());
  ASSERT_NE(toy, nullptr);
  EXPECT_TRUE(toy->calibrated);
  EXPECT_EQ(toy->threshold, 27.0);

  // A record written before the detector existed loads: the detector is uncalibrated there.
  nlohmann::json older = stored;
  older.erase("toy_length");
  auto loaded = NamespaceCalibration::FromJson(older);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->Get<double>(ToyDescriptor()), nullptr);
}

TEST(DetectorRegistryTest, TheBuiltInNineAreRegisteredInTheGatesOrder) {
  std::vector<std::string> names;
  for (const DetectorDescriptor* d : DetectorRegistry::Global().All()) names.push_back(d->name);
  EXPECT_EQ(names, (std::vector<std::string>{"memsad", "memsad_plus", "watermark", "validation", "proactive",
                                             "conflict", "flood", "odd_token", "llm_judge"}));
  EXPECT_EQ(DetectorRegistry::Global().Find("watermark"), &WatermarkDescriptor());
  EXPECT_EQ(DetectorRegistry::Global().Find("nope"), nullptr);
  EXPECT_EQ(WatermarkDescriptor().flags, FlagSide::kBelow);
  EXPECT_TRUE(ValidationDescriptor().screens_metadata);
}

TEST(DetectorRegistryTest, RejectsDuplicateAndIncompleteDescriptors) {
  DetectorRegistration twice(&MemsadDescriptor());
  EXPECT_THAT(twice.status(), StatusIs(absl::StatusCode::kAlreadyExists));
  DetectorDescriptor nameless;
  EXPECT_THAT(DetectorRegistry::Global().Register(&nameless), StatusIs(absl::StatusCode::kInvalidArgument));
  DetectorDescriptor reserved = ProactiveDescriptor();
  reserved.name = "target_fpr";
  EXPECT_THAT(DetectorRegistry::Global().Register(&reserved), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(DetectorRegistry::Global().All().size(), 9u);  // nothing was added, nothing removed
}

}  // namespace
}  // namespace bulwark

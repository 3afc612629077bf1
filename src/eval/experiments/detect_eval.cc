#include "eval/experiments/detect_eval.h"

#include <absl/strings/str_cat.h>

#include <optional>

#include "core/status_macros.h"
#include "detect/screened_outcomes.h"
#include "eval/report.h"
#include "eval/roc.h"
#include "store/memory_store_impl.h"

namespace bulwark::eval {
namespace {

constexpr char kDetectPrincipal[] = "eval:detect";

// Scores are oriented so that higher is more suspicious (DetectorOutcome::suspicion).
void Tally(const ScreenedOutcomes& screened, const std::vector<Entry>& entries, bool poison,
           std::map<std::string, DetectorTally>* tallies) {
  for (const Entry& e : entries) {
    static const GateOutcome kNotScreened;
    const std::optional<GateOutcome> found = screened.Find(e.id);
    const GateOutcome& outcome = found ? *found : kNotScreened;
    for (const DetectorOutcome& d : outcome.detectors) {
      DetectorTally& t = (*tallies)[d.detector->name];
      (poison ? t.tpr : t.fpr).Add(d.flagged);
      (poison ? t.positive_scores : t.negative_scores).push_back(d.suspicion());
      if (!d.calibrated) t.calibrated = false;
    }
    const bool flagged = outcome.flagged || e.state == State::kQuarantined;
    DetectorTally& c = (*tallies)["composite"];
    (poison ? c.tpr : c.fpr).Add(flagged);
    (poison ? c.positive_scores : c.negative_scores).push_back(flagged ? 1.0 : 0.0);
  }
}

// Steps 3 and 4 of the protocol: the query history, then calibration. Returns the summary.
absl::StatusOr<nlohmann::json> SearchAndCalibrate(MemoryStore& store, const DetectEvalInput& input,
                                                  const std::function<void()>& step) {
  std::vector<std::string> issued;  // every query as issued, for triggered calibration
  for (const std::string& q : input.queries) issued.push_back(q);
  for (const std::string& q : input.victim_queries) issued.push_back(q);
  for (size_t i = 0; i < issued.size(); ++i) {
    const bool victim = i >= input.queries.size();
    const std::string query =
        victim && !input.trigger.empty() ? absl::StrCat(issued[i], " ", input.trigger) : issued[i];
    BULWARK_RETURN_IF_ERROR(store.Search(input.name_space, query, {.k = 5}).status());
    step();
  }
  CalibrationRequest calibration;
  for (const NewEntry& e : input.reference) calibration.reference.push_back(e.text);
  if (!input.trigger.empty()) {
    calibration.queries = issued;
    calibration.trigger = input.trigger;
  }
  BULWARK_ASSIGN_OR_RETURN(nlohmann::json summary, store.Calibrate(input.name_space, calibration));
  step();
  return summary;
}

}  // namespace

size_t DetectEvalSteps(const DetectEvalInput& input) {
  return 4 + input.queries.size() + input.victim_queries.size();
}

absl::StatusOr<DetectEvalResult> RunDetectEval(MemoryStore& store, const DetectEvalInput& input,
                                               const std::function<void()>& on_step) {
  const auto step = [&on_step] {
    if (on_step) on_step();
  };
  const std::string& ns = input.name_space;
  const ScreenedOutcomes screened(store.impl().defenses.get());
  BULWARK_RETURN_IF_ERROR(store.AddBatch(ns, input.reference, kDetectPrincipal).status());
  step();
  DetectEvalResult result;
  BULWARK_ASSIGN_OR_RETURN(result.calibration, SearchAndCalibrate(store, input, step));
  result.issued_queries = input.queries.size() + input.victim_queries.size();
  BULWARK_ASSIGN_OR_RETURN(std::vector<Entry> stored_benign,
                           store.AddBatch(ns, input.benign, kDetectPrincipal));
  step();
  BULWARK_ASSIGN_OR_RETURN(std::vector<Entry> stored_poison,
                           store.AddBatch(ns, input.poison, kDetectPrincipal));
  step();
  Tally(screened, stored_benign, /*poison=*/false, &result.tallies);
  Tally(screened, stored_poison, /*poison=*/true, &result.tallies);
  return result;
}

DetectReport ReportDetectEval(const DetectEvalResult& result, const DetectEvalInput& input) {
  MarkdownTable table({"detector", "TPR [95% CI]", "FPR [95% CI]", "AUROC", "TPR@1%FPR", "flagged poison",
                       "flagged benign", "calibrated"});
  DetectReport report;
  report.detectors = nlohmann::json::object();
  const auto add_row = [&](const std::string& name, const DetectorTally& t) {
    const double auroc = Auroc(t.positive_scores, t.negative_scores);
    const std::vector<RocPoint> curve = RocCurve(t.positive_scores, t.negative_scores);
    // The detector's score at a threshold re-chosen for FPR <= 1 % (not its configured one).
    const double tpr_at_1pct = TprAtFpr(curve, 0.01);
    table.AddRow({name, FormatWithInterval(t.tpr.value(), t.tpr.ci()),
                  FormatWithInterval(t.fpr.value(), t.fpr.ci()), FormatNumber(auroc),
                  FormatNumber(tpr_at_1pct), absl::StrCat(t.tpr.successes, "/", t.tpr.trials),
                  absl::StrCat(t.fpr.successes, "/", t.fpr.trials), t.calibrated ? "yes" : "no"});
    const Interval tpr_ci = t.tpr.ci(), fpr_ci = t.fpr.ci();
    report.detectors[name] = {{"tpr", t.tpr.value()},
                              {"fpr", t.fpr.value()},
                              {"auroc", auroc},
                              {"tpr_at_fpr_0.01", tpr_at_1pct},
                              {"tpr_ci95", {tpr_ci.lo, tpr_ci.hi}},
                              {"fpr_ci95", {fpr_ci.lo, fpr_ci.hi}},
                              {"true_positives", t.tpr.successes},
                              {"positives", t.tpr.trials},
                              {"false_positives", t.fpr.successes},
                              {"negatives", t.fpr.trials},
                              {"calibrated", t.calibrated}};
    report.curves.push_back({name, curve, auroc});
  };
  for (const auto& [name, t] : result.tallies) {
    if (name != "composite") add_row(name, t);
  }
  if (auto composite = result.tallies.find("composite"); composite != result.tallies.end()) {
    add_row("composite (OR)", composite->second);
  }
  if (report.detectors.contains("composite (OR)")) {
    report.detectors["composite"] = report.detectors["composite (OR)"];
    report.detectors.erase("composite (OR)");
  }
  report.markdown = absl::StrCat(
      "## bulwark-lab eval detect: ", input.poison.size(), " poison vs ", input.benign.size(),
      " benign entries (", input.reference.size(), " reference, ", result.issued_queries, " queries",
      input.trigger.empty() ? "" : ", triggered calibration", ")\n\n", table.Render());
  return report;
}

}  // namespace bulwark::eval

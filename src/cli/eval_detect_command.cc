// `bulwark-lab eval detect --reference F --benign F --poison F --queries F [--trigger T]` (issue #6):
// the write-time detectors on user-supplied data, through the store's real write path.
//
// Protocol (the order matters, and is what a deployment sees):
//   1. a fresh store (a temporary directory, or --store DIR, which must not hold a store yet);
//   2. the reference entries are written (they are the store's existing memories);
//   3. every query of --queries, then every poison line's "victim_query" (with " " + T appended
//      when --trigger is given: the attacker's triggered query), goes through MemoryStore::Search,
//      so together they form the namespace's MemSAD query history H. The victim queries are part
//      of H because the attacker targets queries the victim really asks;
//   4. MemoryStore::Calibrate with the reference texts (N = all of them) against that history; with
//      --trigger, triggered calibration (MemSAD App. D): H is replaced by the same queries, each
//      followed by the trigger;
//   5. the benign entries, then the poison entries, are written with AddBatch; each entry's typed
//      gate outcome (detect/screened_outcomes.h: per detector score and flag) gives the
//      per-detector decision, its flag the composite (logical OR).
// TPR = flagged poison / poison and FPR = flagged benign / benign, with Clopper–Pearson 95 %
// intervals; AUROC from the detector scores oriented so higher is more suspicious (the
// watermark's z-score is negated); the composite AUROC is that of its 0/1 decision. The
// experiment has no randomness: --seed and --seeds do not change it.
#include <absl/strings/str_cat.h>

#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "cli/eval_commands.h"
#include "cli/jsonl_import.h"
#include "cli/query_file.h"
#include "detect/screened_outcomes.h"
#include "eval/rates.h"
#include "eval/report.h"
#include "eval/roc.h"
#include "eval/roc_svg.h"
#include "store/memory_store.h"
#include "store/memory_store_impl.h"

namespace bulwark::cli {
namespace {

constexpr char kDetectPrincipal[] = "eval:detect";

struct PoisonFile {
  std::vector<NewEntry> entries;
  std::vector<std::string> victim_queries;  // in file order, one per line that has one
};

absl::StatusOr<std::vector<NewEntry>> ReadImportFile(const std::string& path, const ImportLimits& limits) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  auto entries = ParseImportJsonl(in, limits);
  if (!entries.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", entries.status().message()));
  return entries;
}

// The import format plus an optional "victim_query" string per line.
absl::StatusOr<PoisonFile> ReadPoisonFile(const std::string& path, const ImportLimits& limits) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  PoisonFile poison;
  std::ostringstream stripped;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object())
      return absl::InvalidArgumentError(absl::StrCat(path, ": line ", number, ": not a JSON object"));
    if (j.contains("victim_query")) {
      if (!j["victim_query"].is_string() || j["victim_query"].get<std::string>().empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": line ", number, ": victim_query must be a non-empty string"));
      }
      poison.victim_queries.push_back(j["victim_query"].get<std::string>());
      j.erase("victim_query");
    }
    stripped << j.dump() << "\n";
  }
  std::istringstream rest(stripped.str());
  auto entries = ParseImportJsonl(rest, limits);
  if (!entries.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", entries.status().message()));
  poison.entries = *std::move(entries);
  return poison;
}

// Per-detector tallies over the written entries.
struct DetectorTally {
  eval::Rate tpr, fpr;
  std::vector<double> positive_scores, negative_scores;
  bool calibrated = true;
};

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

class EvalDetectCommand : public EvalSubcommand {
 public:
  std::string name() const override { return "detect"; }
  std::string description() const override {
    return "write-time detectors on your files: TPR, FPR, AUROC per detector and composite";
  }
  void AddFlags(CLI::App* sub) override {
    sub->add_option("--reference", reference_,
                    "benign reference entries (import JSONL): the store's memories "
                    "and the calibration set")
        ->required();
    sub->add_option("--benign", benign_, "benign entries to write (import JSONL): negatives")->required();
    sub->add_option("--poison", poison_,
                    "poison entries to write (import JSONL, optional \"victim_query\" per "
                    "line): positives")
        ->required();
    sub->add_option("--queries", queries_, "benign queries (lines or {\"query\"}): the query history")
        ->required();
    sub->add_option("--trigger", trigger_,
                    "trigger appended to the victim queries; calibration becomes triggered");
  }

  int Run(const EvalContext& ctx) override {
    const ImportLimits limits{.max_text_bytes = ctx.env().store_options.max_text_bytes};
    auto reference = ReadImportFile(reference_, limits);
    if (!reference.ok()) return ctx.Fail(reference.status());
    auto benign = ReadImportFile(benign_, limits);
    if (!benign.ok()) return ctx.Fail(benign.status());
    auto poison = ReadPoisonFile(poison_, limits);
    if (!poison.ok()) return ctx.Fail(poison.status());
    auto queries = ReadQueryFile(queries_);
    if (!queries.ok()) return ctx.Fail(queries.status());
    if (reference->size() < 2)
      return ctx.Fail(absl::InvalidArgumentError("--reference needs at least 2 entries"));
    if (benign->empty() || poison->entries.empty()) {
      return ctx.Fail(absl::InvalidArgumentError("--benign and --poison need at least one entry each"));
    }
    if (queries->empty() && poison->victim_queries.empty()) {
      return ctx.Fail(
          absl::InvalidArgumentError("no queries: --queries is empty and no poison line has a victim_query"));
    }

    auto created = ctx.CreateStore(ctx.env().store_options);
    if (!created.ok()) return ctx.Fail(created.status());
    std::unique_ptr<MemoryStore>* store = &created->store;
    const std::string& ns = ctx.env().name_space;
    const ScreenedOutcomes screened((*store)->impl().defenses.get());

    const size_t steps = 4 + queries->size() + poison->victim_queries.size();
    EvalProgress progress = ctx.Progress("eval detect", steps);
    auto stored_reference = (*store)->AddBatch(ns, *reference, kDetectPrincipal);
    if (!stored_reference.ok()) return ctx.Fail(stored_reference.status());
    progress.Step();

    std::vector<std::string> issued;  // every query as issued, for triggered calibration
    for (const std::string& q : *queries) issued.push_back(q);
    for (const std::string& q : poison->victim_queries) issued.push_back(q);
    for (size_t i = 0; i < issued.size(); ++i) {
      const bool victim = i >= queries->size();
      const std::string query =
          victim && !trigger_.empty() ? absl::StrCat(issued[i], " ", trigger_) : issued[i];
      auto result = (*store)->Search(ns, query, {.k = 5});
      if (!result.ok()) return ctx.Fail(result.status());
      progress.Step();
    }

    CalibrationRequest calibration;
    for (const NewEntry& e : *reference) calibration.reference.push_back(e.text);
    if (!trigger_.empty()) {
      calibration.queries = issued;
      calibration.trigger = trigger_;
    }
    auto summary = (*store)->Calibrate(ns, calibration);
    if (!summary.ok()) return ctx.Fail(summary.status());
    progress.Step();

    auto stored_benign = (*store)->AddBatch(ns, *benign, kDetectPrincipal);
    if (!stored_benign.ok()) return ctx.Fail(stored_benign.status());
    progress.Step();
    auto stored_poison = (*store)->AddBatch(ns, poison->entries, kDetectPrincipal);
    if (!stored_poison.ok()) return ctx.Fail(stored_poison.status());
    progress.Step();

    std::map<std::string, DetectorTally> tallies;
    Tally(screened, *stored_benign, /*poison=*/false, &tallies);
    Tally(screened, *stored_poison, /*poison=*/true, &tallies);

    eval::MarkdownTable table({"detector", "TPR [95% CI]", "FPR [95% CI]", "AUROC", "TPR@1%FPR",
                               "flagged poison", "flagged benign", "calibrated"});
    nlohmann::json detectors = nlohmann::json::object();
    std::vector<eval::RocSeries> curves;
    const auto add_row = [&](const std::string& name, const DetectorTally& t) {
      const double auroc = eval::Auroc(t.positive_scores, t.negative_scores);
      const std::vector<eval::RocPoint> curve = eval::RocCurve(t.positive_scores, t.negative_scores);
      // The detector's score at a threshold re-chosen for FPR <= 1 % (not its configured one).
      const double tpr_at_1pct = eval::TprAtFpr(curve, 0.01);
      table.AddRow({name, eval::FormatWithInterval(t.tpr.value(), t.tpr.ci()),
                    eval::FormatWithInterval(t.fpr.value(), t.fpr.ci()), eval::FormatNumber(auroc),
                    eval::FormatNumber(tpr_at_1pct), absl::StrCat(t.tpr.successes, "/", t.tpr.trials),
                    absl::StrCat(t.fpr.successes, "/", t.fpr.trials), t.calibrated ? "yes" : "no"});
      const eval::Interval tpr_ci = t.tpr.ci(), fpr_ci = t.fpr.ci();
      detectors[name] = {{"tpr", t.tpr.value()},
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
      curves.push_back({name, curve, auroc});
    };
    for (const auto& [name, t] : tallies) {
      if (name != "composite") add_row(name, t);
    }
    if (tallies.count("composite")) add_row("composite (OR)", tallies["composite"]);
    if (detectors.contains("composite (OR)")) {
      detectors["composite"] = detectors["composite (OR)"];
      detectors.erase("composite (OR)");
    }

    nlohmann::json plots = nlohmann::json::array();
    if (auto path = ctx.PlotPath("detect_roc")) {
      if (auto s = eval::WriteRocSvg(*path, "bulwark-lab eval detect: ROC per detector", curves); !s.ok()) {
        return ctx.Fail(s);
      }
      plots.push_back(path->string());
    }

    const nlohmann::json json = {{"command", "eval detect"},
                                 {"config",
                                  {{"reference", reference_},
                                   {"benign", benign_},
                                   {"poison", poison_},
                                   {"queries", queries_},
                                   {"trigger", trigger_},
                                   {"triggered_calibration", !trigger_.empty()},
                                   {"namespace", ns}}},
                                 {"counts",
                                  {{"reference", reference->size()},
                                   {"benign", benign->size()},
                                   {"poison", poison->entries.size()},
                                   {"queries", queries->size()},
                                   {"victim_queries", poison->victim_queries.size()}}},
                                 {"calibration", *summary},
                                 {"detectors", detectors},
                                 {"plots", plots}};
    const std::string markdown =
        absl::StrCat("## bulwark-lab eval detect: ", poison->entries.size(), " poison vs ", benign->size(),
                     " benign entries (", reference->size(), " reference, ", issued.size(), " queries",
                     trigger_.empty() ? "" : ", triggered calibration", ")\n\n", table.Render());
    return ctx.Finish(markdown, json);
  }

 private:
  std::string reference_, benign_, poison_, queries_, trigger_;
};

}  // namespace

std::unique_ptr<EvalSubcommand> MakeEvalDetectCommand() { return std::make_unique<EvalDetectCommand>(); }

}  // namespace bulwark::cli

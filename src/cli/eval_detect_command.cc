// `bulwark-lab eval detect --reference F --benign F --poison F --queries F [--trigger T]` (issue #6):
// the write-time detectors on user-supplied data, through the store's real write path
// (eval/experiments/detect_eval.h describes the protocol). The store is a temporary directory, or
// --store DIR, which must not hold a store yet. --queries are the benign query history; each poison
// line may carry a "victim_query", issued after them (with " " + T appended when --trigger is
// given, and calibration becomes triggered). The experiment has no randomness: --seed and --seeds
// do not change it.
#include <absl/strings/str_cat.h>

#include <fstream>
#include <sstream>

#include "cli/eval_commands.h"
#include "cli/jsonl_import.h"
#include "cli/query_file.h"
#include "core/status_macros.h"
#include "eval/experiments/detect_eval.h"
#include "eval/roc_svg.h"

namespace bulwark::cli {
namespace {

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
    auto input = ReadInput(ctx);
    if (!input.ok()) return ctx.Fail(input.status());
    auto created = ctx.CreateStore(ctx.env().store_options);
    if (!created.ok()) return ctx.Fail(created.status());
    EvalProgress progress = ctx.Progress("eval detect", eval::DetectEvalSteps(*input));
    auto result = eval::RunDetectEval(*created->store, *input, [&progress] { progress.Step(); });
    if (!result.ok()) return ctx.Fail(result.status());
    const eval::DetectReport report = eval::ReportDetectEval(*result, *input);

    nlohmann::json plots = nlohmann::json::array();
    if (auto path = ctx.PlotPath("detect_roc")) {
      if (auto s = eval::WriteRocSvg(*path, "bulwark-lab eval detect: ROC per detector", report.curves);
          !s.ok()) {
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
                                   {"namespace", input->name_space}}},
                                 {"counts",
                                  {{"reference", input->reference.size()},
                                   {"benign", input->benign.size()},
                                   {"poison", input->poison.size()},
                                   {"queries", input->queries.size()},
                                   {"victim_queries", input->victim_queries.size()}}},
                                 {"calibration", result->calibration},
                                 {"detectors", report.detectors},
                                 {"plots", plots}};
    return ctx.Finish(report.markdown, json);
  }

 private:
  // The four files, checked: at least 2 reference entries, one benign and one poison entry, and a
  // query.
  absl::StatusOr<eval::DetectEvalInput> ReadInput(const EvalContext& ctx) const {
    const ImportLimits limits{.max_text_bytes = ctx.env().store_options.max_text_bytes};
    eval::DetectEvalInput input{.name_space = ctx.env().name_space, .trigger = trigger_};
    BULWARK_ASSIGN_OR_RETURN(input.reference, ReadImportFile(reference_, limits));
    BULWARK_ASSIGN_OR_RETURN(input.benign, ReadImportFile(benign_, limits));
    BULWARK_ASSIGN_OR_RETURN(PoisonFile poison, ReadPoisonFile(poison_, limits));
    input.poison = std::move(poison.entries);
    input.victim_queries = std::move(poison.victim_queries);
    BULWARK_ASSIGN_OR_RETURN(input.queries, ReadQueryFile(queries_));
    if (input.reference.size() < 2) return absl::InvalidArgumentError("--reference needs at least 2 entries");
    if (input.benign.empty() || input.poison.empty()) {
      return absl::InvalidArgumentError("--benign and --poison need at least one entry each");
    }
    if (input.queries.empty() && input.victim_queries.empty()) {
      return absl::InvalidArgumentError(
          "no queries: --queries is empty and no poison line has a victim_query");
    }
    return input;
  }

  std::string reference_, benign_, poison_, queries_, trigger_;
};

}  // namespace

std::unique_ptr<EvalSubcommand> MakeEvalDetectCommand() { return std::make_unique<EvalDetectCommand>(); }

}  // namespace bulwark::cli

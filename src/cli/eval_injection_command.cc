// `bulwark-lab eval injection` (issue #14, point 1): the `validation` detector's injection grammar
// (data/validation_rules.tsv, or --rules FILE) on labelled writes, validation alone: TPR per
// injection category, form and channel, FPR per benign style, with Clopper-Pearson intervals
// (eval/experiments/injection_eval.h). Each input is reported side by side:
//   --data F        labelled JSONL (data/injection/injection_{train,test}.jsonl); repeatable
//   --positives F   unlabelled writes that are all injections or poisons (repeatable)
//   --negatives F   unlabelled writes that are all benign (repeatable)
#include <absl/strings/str_cat.h>

#include <fstream>

#include "cli/eval_commands.h"
#include "eval/experiments/injection_eval.h"

namespace bulwark::cli {
namespace {

class EvalInjectionCommand final : public EvalSubcommand {
 public:
  std::string name() const override { return "injection"; }
  std::string description() const override {
    return "the validation detector's injection grammar on labelled writes: TPR per category, form and "
           "channel, FPR per style, with Clopper-Pearson intervals";
  }
  void AddFlags(CLI::App* sub) override {
    sub->add_option("--data", data_files_, "labelled JSONL ({\"text\", \"label\": injection|benign, ...})");
    sub->add_option("--positives", positive_files_, "unlabelled JSONL whose writes are all injections");
    sub->add_option("--negatives", negative_files_, "unlabelled JSONL whose writes are all benign");
    sub->add_option("--rules", rules_file_, "validation rules TSV (default: the compiled-in rules)");
    sub->add_option("--examples", max_examples_, "misses and false positives listed per input")
        ->check(CLI::Range(0, 10'000))
        ->capture_default_str();
  }
  int Run(const EvalContext& ctx) override {
    if (data_files_.empty() && positive_files_.empty() && negative_files_.empty())
      return ctx.Fail(
          absl::InvalidArgumentError("give at least one --data, --positives or --negatives file"));
    auto rules = rules_file_.empty() ? ValidationRules::Default() : ValidationRules::Load(rules_file_);
    if (!rules.ok()) return ctx.Fail(rules.status());
    std::vector<eval::InjectionEvalResult> results;
    const std::pair<const std::vector<std::string>*, std::optional<bool>> inputs[] = {
        {&data_files_, std::nullopt}, {&positive_files_, true}, {&negative_files_, false}};
    for (const auto& [files, label] : inputs) {
      for (const std::string& file : *files) {
        std::ifstream in(file);
        if (!in) return ctx.Fail(absl::NotFoundError(absl::StrCat("cannot open ", file)));
        auto cases = eval::ParseInjectionSet(in, label);
        if (!cases.ok())
          return ctx.Fail(absl::InvalidArgumentError(absl::StrCat(file, ": ", cases.status().message())));
        results.push_back(eval::RunInjectionEval(**rules, *cases, file, max_examples_));
      }
    }
    nlohmann::json json = {{"config",
                            {{"rules", rules_file_.empty() ? "(default)" : rules_file_},
                             {"rule_count", (*rules)->rules().size()}}},
                           {"results", nlohmann::json::array()}};
    for (const auto& r : results) json["results"].push_back(eval::ToJson(r));
    return ctx.Finish(eval::ToMarkdown(results), json);
  }

 private:
  std::vector<std::string> data_files_, positive_files_, negative_files_;
  std::string rules_file_;
  size_t max_examples_ = 20;
};

}  // namespace

std::unique_ptr<EvalSubcommand> MakeEvalInjectionCommand() {
  return std::make_unique<EvalInjectionCommand>();
}

}  // namespace bulwark::cli

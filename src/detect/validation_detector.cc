#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include <algorithm>

#include "core/status_macros.h"
#include "detect/detectors.h"
#include "detect/validation_rules.h"

namespace bulwark {
namespace {

// The compiled-in rules (ValidationRules::SharedDefault), compiled at the first write the process
// screens, not when a store opens (~50 ms of RE2 compilation that a search never uses); null if
// they do not compile (then every write is flagged: the gate fails closed).
const ValidationRules* CompiledInRules() {
  // SharedDefault keeps the rules for the process's life: its pointer is looked up once, not a
  // StatusOr<shared_ptr> copied on every write.
  static const ValidationRules* const rules = [] {
    const absl::StatusOr<std::shared_ptr<const ValidationRules>> shared = ValidationRules::SharedDefault();
    return shared.ok() ? shared->get() : nullptr;
  }();
  return rules;
}

class ValidationDetector final : public WriteDetector {
 public:
  // `rules`: a rules file's; null: the compiled-in rules, compiled on first use.
  explicit ValidationDetector(std::shared_ptr<const ValidationRules> rules) : rules_(std::move(rules)) {}
  const DetectorDescriptor& descriptor() const override { return ValidationDescriptor(); }
  void Prepare() const override { Rules(); }  // compiles the compiled-in rules

  DetectorVerdict Evaluate(const WriteCandidate& c, const NamespaceState&) const override {
    DetectorVerdict v{.by = this, .threshold = 0, .calibrated = true};
    const ValidationRules* rules = Rules();
    if (rules == nullptr) {
      v.score = 1;  // no rules to screen with: fail closed
      v.flagged = true;
      return v;
    }
    rules->Match(c.text, &v.items);
    v.score = static_cast<double>(v.items.size());
    v.flagged = !v.items.empty();
    return v;
  }

  // "validation: matched secrecy_directive/hide_from_user, hidden_text/zero_width_chars": every
  // rule that fired as category/rule; Detail() groups them by category.
  std::string Reason(const DetectorVerdict& v) const override {
    if (Rules() == nullptr) return "validation: the compiled-in rules do not compile";
    std::vector<std::string> names;
    for (uint32_t i : v.items)
      names.push_back(absl::StrCat(Rules()->rules()[i].category, "/", Rules()->rules()[i].name));
    return absl::StrCat("validation: matched ", absl::StrJoin(names, ", "));
  }

  // {"matched": [{"category", "rule"}, ...], "categories": {category: [rule, ...]}}: each
  // category's hits (issue #14 point 1).
  nlohmann::json Detail(const DetectorVerdict& v) const override {
    nlohmann::json matched = nlohmann::json::array();
    for (uint32_t i : v.items) {
      matched.push_back({{"category", Rules()->rules()[i].category}, {"rule", Rules()->rules()[i].name}});
    }
    nlohmann::json categories = nlohmann::json::object();
    for (const auto& [category, names] : ByCategory(v)) categories[category] = names;
    return {{"matched", matched}, {"categories", categories}};
  }

 private:
  // The matched rules' names grouped by category, categories in order of first match.
  std::vector<std::pair<std::string, std::vector<std::string>>> ByCategory(const DetectorVerdict& v) const {
    std::vector<std::pair<std::string, std::vector<std::string>>> out;
    for (uint32_t i : v.items) {
      const ValidationRule& rule = Rules()->rules()[i];
      auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == rule.category; });
      if (it == out.end()) it = out.insert(out.end(), {rule.category, {}});
      it->second.push_back(rule.name);
    }
    return out;
  }

  const ValidationRules* Rules() const { return rules_ != nullptr ? rules_.get() : CompiledInRules(); }

  std::shared_ptr<const ValidationRules> rules_;
};

DetectorDescriptor MakeValidationDescriptor() {
  DetectorDescriptor d;
  d.name = "validation";
  d.screens_metadata = true;  // injected instructions in metadata reach readers too
  // rules_file: empty for the rules compiled in from data/validation_rules.tsv.
  d.options = [](ConfigReader& section) -> absl::StatusOr<nlohmann::json> {
    std::string rules_file;
    BULWARK_RETURN_IF_ERROR(section.Get("rules_file", &rules_file));
    return nlohmann::json{{"rules_file", rules_file}};
  };
  d.create = [](const nlohmann::json& options,
                const GateResources&) -> absl::StatusOr<std::unique_ptr<WriteDetector>> {
    const std::string rules_file = options.value("rules_file", std::string());
    if (rules_file.empty()) {  // the compiled-in rules: one compiled copy per process, on first use
      return std::make_unique<ValidationDetector>(nullptr);
    }
    BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<ValidationRules> rules, ValidationRules::Load(rules_file));
    return std::make_unique<ValidationDetector>(std::move(rules));
  };
  return d;
}

}  // namespace

const DetectorDescriptor& ValidationDescriptor() {
  static const DetectorDescriptor* descriptor = new DetectorDescriptor(MakeValidationDescriptor());
  return *descriptor;
}

}  // namespace bulwark

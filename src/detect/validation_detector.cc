#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include <algorithm>

#include "detect/detectors.h"

namespace bulwark {
namespace {

class ValidationDetector final : public WriteDetector {
 public:
  explicit ValidationDetector(std::unique_ptr<ValidationRules> rules) : rules_(std::move(rules)) {}
  std::string_view name() const override { return "validation"; }
  bool screens_metadata() const override { return true; }

  DetectorVerdict Evaluate(const WriteCandidate& c, const NamespaceState&) const override {
    DetectorVerdict v{.by = this, .threshold = 0, .calibrated = true};
    rules_->Match(c.text, &v.items);
    v.score = static_cast<double>(v.items.size());
    v.flagged = !v.items.empty();
    return v;
  }

  // "validation: matched secrecy_directive/hide_from_user, hidden_text/zero_width_chars": every
  // rule that fired as category/rule; Detail() groups them by category.
  std::string Reason(const DetectorVerdict& v) const override {
    std::vector<std::string> names;
    for (uint32_t i : v.items)
      names.push_back(absl::StrCat(rules_->rules()[i].category, "/", rules_->rules()[i].name));
    return absl::StrCat("validation: matched ", absl::StrJoin(names, ", "));
  }

  // {"matched": [{"category", "rule"}, ...], "categories": {category: [rule, ...]}}: each
  // category's hits (issue #14 point 1).
  nlohmann::json Detail(const DetectorVerdict& v) const override {
    nlohmann::json matched = nlohmann::json::array();
    for (uint32_t i : v.items) {
      matched.push_back({{"category", rules_->rules()[i].category}, {"rule", rules_->rules()[i].name}});
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
      const ValidationRule& rule = rules_->rules()[i];
      auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == rule.category; });
      if (it == out.end()) it = out.insert(out.end(), {rule.category, {}});
      it->second.push_back(rule.name);
    }
    return out;
  }

  std::unique_ptr<ValidationRules> rules_;
};

}  // namespace

std::unique_ptr<WriteDetector> MakeValidationDetector(std::unique_ptr<ValidationRules> rules) {
  return std::make_unique<ValidationDetector>(std::move(rules));
}

}  // namespace bulwark

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "detect/detectors.h"

namespace bulwark {
namespace {

class ValidationDetector final : public WriteDetector {
 public:
  explicit ValidationDetector(std::unique_ptr<ValidationRules> rules) : rules_(std::move(rules)) {}
  std::string_view name() const override { return "validation"; }

  DetectorVerdict Evaluate(const WriteCandidate& c) const override {
    const auto matched = rules_->Match(c.text);
    DetectorVerdict v{.detector = "validation", .threshold = 0, .calibrated = true};
    v.score = static_cast<double>(matched.size());
    v.flagged = !matched.empty();
    nlohmann::json rules = nlohmann::json::array();
    std::vector<std::string> names;
    for (const ValidationRule* r : matched) {
      rules.push_back({{"category", r->category}, {"rule", r->name}});
      names.push_back(absl::StrCat(r->category, "/", r->name));
    }
    v.detail = {{"matched", rules}};
    if (v.flagged) v.reason = absl::StrCat("validation: matched ", absl::StrJoin(names, ", "));
    return v;
  }

 private:
  std::unique_ptr<ValidationRules> rules_;
};

}  // namespace

std::unique_ptr<WriteDetector> MakeValidationDetector(std::unique_ptr<ValidationRules> rules) {
  return std::make_unique<ValidationDetector>(std::move(rules));
}

}  // namespace bulwark

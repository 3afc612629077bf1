#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

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

  std::string Reason(const DetectorVerdict& v) const override {
    std::vector<std::string> names;
    for (uint32_t i : v.items)
      names.push_back(absl::StrCat(rules_->rules()[i].category, "/", rules_->rules()[i].name));
    return absl::StrCat("validation: matched ", absl::StrJoin(names, ", "));
  }

  nlohmann::json Detail(const DetectorVerdict& v) const override {
    nlohmann::json matched = nlohmann::json::array();
    for (uint32_t i : v.items) {
      matched.push_back({{"category", rules_->rules()[i].category}, {"rule", rules_->rules()[i].name}});
    }
    return {{"matched", matched}};
  }

 private:
  std::unique_ptr<ValidationRules> rules_;
};

}  // namespace

std::unique_ptr<WriteDetector> MakeValidationDetector(std::unique_ptr<ValidationRules> rules) {
  return std::make_unique<ValidationDetector>(std::move(rules));
}

}  // namespace bulwark

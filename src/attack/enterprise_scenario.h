// EnterpriseScenario: one SMSR-style enterprise knowledge scenario
// (data/corpora/enterprise_scenarios.jsonl; data/corpora/README.md describes the fields).
#pragma once

#include <absl/status/statusor.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bulwark::attack {

struct EnterpriseScenario {
  std::string id, company, domain;
  std::string question;  // q*
  std::string correct_answer, malicious_answer;
  std::vector<std::string> correct_keywords, malicious_keywords;
  std::string injected_claim;            // the direct injection
  std::vector<std::string> paraphrases;  // rewordings of the injected claim (flooding)
  std::string subtle_claim;
  std::vector<std::string> supporting_passages;  // legitimate entries stating the correct answer

  // InvalidArgument naming the first missing or mistyped field.
  static absl::StatusOr<EnterpriseScenario> FromJson(const nlohmann::json& json);
};

// Reads a JSONL file of scenarios. NotFound if absent; InvalidArgument naming the bad line.
[[nodiscard]] absl::StatusOr<std::vector<EnterpriseScenario>> LoadEnterpriseScenarios(
    const std::filesystem::path& path);

}  // namespace bulwark::attack

// Parsing of the enterprise scenarios file.
#include "attack/enterprise_scenario.h"

#include <fstream>

#include "core/status_macros.h"

namespace bulwark::attack {
namespace {

absl::Status GetString(const nlohmann::json& j, const char* key, std::string* out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string())
    return absl::InvalidArgumentError(std::string("scenario: missing string field ") + key);
  *out = it->get<std::string>();
  return absl::OkStatus();
}

absl::Status GetStrings(const nlohmann::json& j, const char* key, std::vector<std::string>* out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array())
    return absl::InvalidArgumentError(std::string("scenario: missing array field ") + key);
  for (const auto& v : *it) {
    if (!v.is_string()) return absl::InvalidArgumentError(std::string("scenario: non-string in ") + key);
    out->push_back(v.get<std::string>());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<EnterpriseScenario> EnterpriseScenario::FromJson(const nlohmann::json& j) {
  if (!j.is_object()) return absl::InvalidArgumentError("scenario: not a JSON object");
  EnterpriseScenario s;
  for (absl::Status st :
       {GetString(j, "id", &s.id), GetString(j, "company", &s.company), GetString(j, "domain", &s.domain),
        GetString(j, "question", &s.question), GetString(j, "correct_answer", &s.correct_answer),
        GetString(j, "malicious_answer", &s.malicious_answer),
        GetString(j, "injected_claim", &s.injected_claim), GetString(j, "subtle_claim", &s.subtle_claim),
        GetStrings(j, "correct_keywords", &s.correct_keywords),
        GetStrings(j, "malicious_keywords", &s.malicious_keywords),
        GetStrings(j, "paraphrases", &s.paraphrases),
        GetStrings(j, "supporting_passages", &s.supporting_passages)}) {
    BULWARK_RETURN_IF_ERROR(st);
  }
  return s;
}

absl::StatusOr<std::vector<EnterpriseScenario>> LoadEnterpriseScenarios(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError("cannot read " + path.string());
  std::vector<EnterpriseScenario> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    auto json = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded())
      return absl::InvalidArgumentError(path.string() + ":" + std::to_string(n) + ": bad JSON");
    auto s = EnterpriseScenario::FromJson(json);
    if (!s.ok())
      return absl::InvalidArgumentError(path.string() + ":" + std::to_string(n) + ": " +
                                        std::string(s.status().message()));
    out.push_back(*std::move(s));
  }
  return out;
}

}  // namespace bulwark::attack

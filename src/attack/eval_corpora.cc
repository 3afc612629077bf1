// Loading of the evaluation corpora.
#include "attack/eval_corpora.h"

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "core/status_macros.h"

namespace bulwark::attack {
namespace {

absl::Status ReadJsonl(const std::filesystem::path& path,
                       const std::function<absl::Status(const nlohmann::json&)>& visit) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError("cannot read " + path.string());
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    absl::Status st = j.is_object() ? visit(j) : absl::InvalidArgumentError("not a JSON object");
    if (!st.ok())
      return absl::InvalidArgumentError(path.string() + ":" + std::to_string(n) + ": " +
                                        std::string(st.message()));
  }
  return absl::OkStatus();
}

absl::Status StringField(const nlohmann::json& j, const char* key, std::string* out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string())
    return absl::InvalidArgumentError(std::string("missing string ") + key);
  *out = it->get<std::string>();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<EvalCorpora> LoadEvalCorpora(const std::filesystem::path& dir) {
  EvalCorpora c;
  for (const auto& file_and_list : {std::pair{"benign_memories.jsonl", &c.memories},
                                    std::pair{"reference_memories.jsonl", &c.reference}}) {
    std::vector<std::string>* list = file_and_list.second;  // named: clang 14 cannot capture a binding
    auto st = ReadJsonl(dir / file_and_list.first, [&](const nlohmann::json& j) {
      std::string text;
      BULWARK_RETURN_IF_ERROR(StringField(j, "text", &text));
      list->push_back(std::move(text));
      return absl::OkStatus();
    });
    BULWARK_RETURN_IF_ERROR(st);
  }
  auto st = ReadJsonl(dir / "benign_queries.jsonl", [&](const nlohmann::json& j) {
    std::string q;
    BULWARK_RETURN_IF_ERROR(StringField(j, "query", &q));
    c.benign_queries.push_back(std::move(q));
    return absl::OkStatus();
  });
  BULWARK_RETURN_IF_ERROR(st);
  st = ReadJsonl(dir / "victim_queries.jsonl", [&](const nlohmann::json& j) {
    std::string q, topic, category, goal_type, goal;
    for (auto s : {StringField(j, "query", &q), StringField(j, "target_topic", &topic),
                   StringField(j, "category", &category), StringField(j, "goal_type", &goal_type),
                   StringField(j, "poison_goal", &goal)})
      BULWARK_RETURN_IF_ERROR(s);
    for (VictimTopic& t : c.topics) {
      if (t.topic == topic) {
        t.queries.push_back(std::move(q));
        return absl::OkStatus();
      }
    }
    c.topics.push_back({topic, category, goal_type, goal, {std::move(q)}});
    return absl::OkStatus();
  });
  BULWARK_RETURN_IF_ERROR(st);
  BULWARK_ASSIGN_OR_RETURN(auto scenarios, LoadEnterpriseScenarios(dir / "enterprise_scenarios.jsonl"));
  c.scenarios = std::move(scenarios);
  return c;
}

}  // namespace bulwark::attack

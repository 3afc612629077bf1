// The evaluation corpora (data/corpora/, README.md there) as the attack experiments use them:
// benign memories, the reference set, benign queries, victim queries grouped by target topic, and
// the enterprise scenarios.
#pragma once

#include <absl/status/statusor.h>

#include <filesystem>
#include <string>
#include <vector>

#include "attack/enterprise_scenario.h"

namespace bulwark::attack {

// One attacked topic: its victim queries (three phrasings) and the attacker's goal.
struct VictimTopic {
  std::string topic;
  std::string category;
  std::string goal_type;
  std::string poison_goal;
  std::vector<std::string> queries;
};

struct EvalCorpora {
  std::vector<std::string> memories;        // benign_memories.jsonl texts
  std::vector<std::string> reference;       // reference_memories.jsonl texts
  std::vector<std::string> benign_queries;  // benign_queries.jsonl
  std::vector<VictimTopic> topics;          // victim_queries.jsonl, in file order of first appearance
  std::vector<EnterpriseScenario> scenarios;
};

// Reads the five files from `dir`. NotFound for a missing file, InvalidArgument for a bad line.
[[nodiscard]] absl::StatusOr<EvalCorpora> LoadEvalCorpora(const std::filesystem::path& dir);

}  // namespace bulwark::attack

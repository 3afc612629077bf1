// Test helper: one string field of every line of a JSONL evaluation corpus in data/corpora/, in
// file order. The test target must define BULWARK_SOURCE_DIR.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bulwark::testing {

inline std::vector<std::string> CorpusField(const std::string& file, const char* field) {
  std::ifstream in(std::string(BULWARK_SOURCE_DIR) + "/data/corpora/" + file);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line)[field].get<std::string>());
  return out;
}

}  // namespace bulwark::testing

#include "cli/query_file.h"

#include <absl/strings/str_cat.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace bulwark::cli {

absl::StatusOr<std::vector<std::string>> ReadQueryFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::vector<std::string> queries;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (line.front() != '{') {
      queries.push_back(line);
      continue;
    }
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    const char* field = j.is_object() && j.contains("query") ? "query" : "text";
    if (!j.is_object() || !j.contains(field) || !j[field].is_string()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", number, ": expected {\"query\": \"...\"}"));
    }
    queries.push_back(j[field].get<std::string>());
  }
  if (queries.empty()) return absl::InvalidArgumentError(absl::StrCat(path, " holds no query"));
  return queries;
}

}  // namespace bulwark::cli

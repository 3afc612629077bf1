// The extraction attack log (see attack_log.h).
#include "attack/extraction/attack_log.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "attack/extraction/jsonl_reader.h"
#include "core/status_macros.h"

namespace bulwark::extraction {
namespace {

bool ValidAttackName(const std::string& s) {
  return !s.empty() && s.size() <= kMaxLogNameBytes && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

bool ValidSessionId(const std::string& s) {
  return !s.empty() && s.size() <= kMaxLogNameBytes &&
         std::all_of(s.begin(), s.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

absl::Status Field(const nlohmann::json& line, const char* key, nlohmann::json::value_t type) {
  const auto it = line.find(key);
  const bool ok =
      it != line.end() &&
      (it->type() == type || (type == nlohmann::json::value_t::number_integer && it->is_number_unsigned()));
  return ok ? absl::OkStatus()
            : absl::InvalidArgumentError(absl::StrCat("missing or mistyped \"", key, "\""));
}

// Decodes one line into (attack, session, step number, step).
absl::Status DecodeLine(const nlohmann::json& line, std::string* attack, std::string* session,
                        int64_t* number, AttackStep* step) {
  using T = nlohmann::json::value_t;
  for (auto [key, type] : {std::pair{"attack", T::string},
                           {"session", T::string},
                           {"step", T::number_integer},
                           {"query", T::string},
                           {"hits", T::array},
                           {"refused", T::boolean}}) {
    BULWARK_RETURN_IF_ERROR(Field(line, key, type));
  }
  *attack = line["attack"].get<std::string>();
  *session = line["session"].get<std::string>();
  *number = line["step"].get<int64_t>();
  if (!ValidAttackName(*attack)) return absl::InvalidArgumentError("\"attack\" must be 1-128 of [a-z0-9_]");
  if (!ValidSessionId(*session))
    return absl::InvalidArgumentError("\"session\" must be 1-128 printable ASCII, no spaces");
  if (*number < 1 || *number > kMaxLogStep) return absl::InvalidArgumentError("\"step\" out of range");
  step->query = line["query"].get<std::string>();
  if (step->query.size() > kMaxLogQueryBytes) return absl::InvalidArgumentError("\"query\" too long");
  step->refused = line["refused"].get<bool>();
  const nlohmann::json& hits = line["hits"];
  if (hits.size() > kMaxLogHits) return absl::InvalidArgumentError("too many \"hits\"");
  for (const nlohmann::json& id : hits) {
    if (!id.is_string() || id.get_ref<const std::string&>().empty() ||
        id.get_ref<const std::string&>().size() > kMaxLogIdBytes) {
      return absl::InvalidArgumentError("\"hits\" must hold ids (strings of 1-64 bytes)");
    }
    step->hits.push_back({id.get<std::string>(), "", 0});
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteAttackLog(const AttackSession& session, std::ostream& out) {
  for (size_t i = 0; i < session.steps.size(); ++i) {
    const AttackStep& step = session.steps[i];
    nlohmann::json hits = nlohmann::json::array();
    for (const RetrievedText& hit : step.hits) hits.push_back(hit.id);
    nlohmann::ordered_json line = {
        {"attack", session.attack}, {"session", session.session}, {"step", i + 1},
        {"query", step.query},      {"hits", std::move(hits)},    {"refused", step.refused}};
    out << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  }
  if (!out) return absl::DataLossError("attack log: write failed");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<AttackSession>> ReadAttackLog(std::istream& in, std::string_view name) {
  std::vector<AttackSession> sessions;
  std::map<std::string, size_t> index;  // session id -> position in `sessions`
  absl::Status status = ForEachJsonLine(in, name, [&](int, const nlohmann::json& line) {
    std::string attack, session;
    int64_t number = 0;
    AttackStep step;
    BULWARK_RETURN_IF_ERROR(DecodeLine(line, &attack, &session, &number, &step));
    auto [it, inserted] = index.try_emplace(session, sessions.size());
    if (inserted) sessions.push_back({attack, session, {}});
    AttackSession& target = sessions[it->second];
    if (target.attack != attack) return absl::InvalidArgumentError("a session changes its attack name");
    if (number != static_cast<int64_t>(target.steps.size()) + 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("session ", session, ": step ", number, " after step ", target.steps.size()));
    }
    target.steps.push_back(std::move(step));
    return absl::OkStatus();
  });
  BULWARK_RETURN_IF_ERROR(status);
  return sessions;
}

absl::StatusOr<std::vector<AttackSession>> ReadAttackLogFile(const std::string& path) {
  BULWARK_ASSIGN_OR_RETURN(std::ifstream in, OpenJsonFile(path));
  return ReadAttackLog(in, path);
}

}  // namespace bulwark::extraction

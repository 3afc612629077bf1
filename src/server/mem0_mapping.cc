#include "server/mem0_mapping.h"

#include <absl/strings/str_cat.h>

#include <cstdio>
#include <ctime>

#include "core/hex.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "core/text_validation.h"
#include "server/api_status.h"
#include "store/entry_keys.h"

namespace bulwark::server {
namespace {

absl::Status Mem0Bad(std::string_view message) {
  return ApiError(absl::StatusCode::kInvalidArgument, "invalid_argument", message);
}

bool Mem0IsEntity(std::string_view name) {
  for (const char* e : kMem0Entities) {
    if (name == e) return true;
  }
  return false;
}

// Picks the namespace from the entity members of `members` (already flat); the rest stay filters.
absl::StatusOr<Mem0Scope> Mem0ScopeOf(const nlohmann::json& members) {
  Mem0Scope scope;
  for (const char* entity : kMem0Entities) {
    auto it = members.find(entity);
    if (it == members.end() || it->is_null()) continue;
    if (!it->is_string() || it->get<std::string>().empty()) {
      return Mem0Bad(absl::StrCat(entity, " must be a non-empty string"));
    }
    scope.filter[entity] = *it;
    if (!scope.name_space.empty()) continue;
    const std::string id = it->get<std::string>();
    // "user_id" -> the id itself; "agent_id" -> "agent.<id>", "app_id" -> "app.<id>", "run_id" -> "run.<id>".
    const std::string_view kind = std::string_view(entity).substr(0, std::string_view(entity).find('_'));
    scope.name_space = kind == "user" ? id : absl::StrCat(ToAbsl(kind), ".", id);
    if (auto s = ValidateNamespace(scope.name_space); !s.ok()) {
      return Mem0Bad(absl::StrCat(entity, " \"", id,
                                  "\" does not map to a valid namespace (1-64 of A-Z a-z 0-9 _ . -)"));
    }
  }
  if (scope.name_space.empty()) return Mem0Bad("name one of user_id, agent_id, app_id, run_id");
  for (const auto& [name, value] : members.items()) {
    if (!Mem0IsEntity(name)) scope.filter[name] = value;
  }
  return scope;
}

// Adds the members of one filter object to `flat`, descending into AND; refuses the rest.
absl::Status Mem0Flatten(const nlohmann::json& filters, int depth, nlohmann::json* flat) {
  if (!filters.is_object()) return Mem0Bad("filters must be a JSON object");
  if (depth > 4) return Mem0Bad("filters are nested too deeply");
  for (const auto& [name, value] : filters.items()) {
    if (name == "AND") {
      if (!value.is_array()) return Mem0Bad("AND takes an array of filter objects");
      for (const auto& part : value) {
        BULWARK_RETURN_IF_ERROR(Mem0Flatten(part, depth + 1, flat));
      }
      continue;
    }
    if (name == "OR" || name == "NOT") {
      return Mem0Bad(
          absl::StrCat(name,
                       " filters are refused: each user, agent, app or run is its own namespace, a hard "
                       "partition, and one request reads one namespace"));
    }
    if (value.is_object() || value.is_array()) {
      return Mem0Bad(absl::StrCat("filter \"", name, "\": only exact matches are supported, not operators"));
    }
    auto it = flat->find(name);
    if (it != flat->end() && *it != value)
      return Mem0Bad(absl::StrCat("filter \"", name, "\" is given twice"));
    (*flat)[name] = value;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Mem0Scope> Mem0ScopeOfEntities(const nlohmann::json& object) {
  nlohmann::json entities = nlohmann::json::object();
  for (const char* entity : kMem0Entities) {
    if (auto it = object.find(entity); it != object.end()) entities[entity] = *it;
  }
  return Mem0ScopeOf(entities);
}

absl::StatusOr<Mem0Scope> Mem0ScopeOfFilters(const nlohmann::json& filters) {
  nlohmann::json flat = nlohmann::json::object();
  BULWARK_RETURN_IF_ERROR(Mem0Flatten(filters, 0, &flat));
  return Mem0ScopeOf(flat);
}

absl::StatusOr<int64_t> ParseMem0ExpirationDate(std::string_view date) {
  int y = 0, m = 0, d = 0;
  char tail = 0;
  const std::string text(date);
  if (text.size() != 10 || std::sscanf(text.c_str(), "%4d-%2d-%2d%c", &y, &m, &d, &tail) != 3 || y < 1970 ||
      y > 9999 || m < 1 || m > 12 || d < 1 || d > 31) {
    return Mem0Bad("expiration_date must be a date YYYY-MM-DD");
  }
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = m - 1;
  tm.tm_mday = d + 1;  // the start of the next day: the named day is kept
  const time_t t = timegm(&tm);
  return static_cast<int64_t>(t) * 1'000'000;
}

std::string IsoTime(int64_t us) {
  const time_t seconds = static_cast<time_t>(us / 1'000'000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char out[96];
  std::snprintf(out, sizeof(out), "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(((us % 1'000'000) + 1'000'000) % 1'000'000));
  return out;
}

nlohmann::json Mem0Memory(const Entry& entry, std::optional<float> score) {
  nlohmann::json metadata = nlohmann::json::object();
  for (const auto& [name, value] : entry.metadata.items()) {
    if (Mem0IsEntity(name) || name == "role" || std::string_view(name).starts_with(kReservedMetadataPrefix))
      continue;
    metadata[name] = value;
  }
  nlohmann::json m = {{"id", entry.id},
                      {"memory", entry.text},
                      {"hash", Sha256Hex(entry.text)},
                      {"metadata", std::move(metadata)},
                      {"categories", nlohmann::json::array()},
                      {"created_at", IsoTime(entry.created_at_us)},
                      {"updated_at", IsoTime(entry.updated_at_us)},
                      {"state", ToString(entry.state)}};
  const std::optional<int64_t> expires = ExpiresAtUs(entry);
  m["expiration_date"] = expires ? nlohmann::json(IsoTime(*expires)) : nlohmann::json(nullptr);
  for (const char* entity : kMem0Entities) {
    auto it = entry.metadata.find(entity);
    m[entity] = it != entry.metadata.end() ? *it : nlohmann::json(nullptr);
  }
  if (score) m["score"] = *score;
  return m;
}

void CarryMem0Metadata(const nlohmann::json& from, nlohmann::json* to) {
  CarryReservedMetadata(from, to);
  for (const auto& [name, value] : from.items()) {
    if (Mem0IsEntity(name) || name == "role") (*to)[name] = value;
  }
}

}  // namespace bulwark::server

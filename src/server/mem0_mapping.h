// The Mem0 platform API's shapes mapped onto Bulwark (issue #15 point 3; doc/mem0.md): which
// namespace a Mem0 entity (user_id, agent_id, app_id, run_id) lands in, how Mem0 filters become a
// namespace plus an exact metadata filter, and how an entry is rendered as a Mem0 memory.
//
// Mapping (namespaces stay hard partitions):
//   namespace = user_id if given, else "agent." + agent_id, else "app." + app_id, else
//               "run." + run_id (each id must leave a valid namespace name: 1..64 of
//               [A-Za-z0-9_.-], starting with a letter or digit);
//   every entity id given is also stored in the entry's metadata ("user_id", "agent_id", ...), so
//   a filter naming several entities matches within the namespace (AND);
//   OR across entities, NOT, and operator objects ({"in": ...}, {"gte": ...}) are refused (400):
//   one request never reads two namespaces.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "bulwark/entry.h"
#include "server/request_parsing.h"

namespace bulwark::server {

// The entity members Mem0 uses, in the order that picks the namespace.
inline constexpr const char* kMem0Entities[] = {"user_id", "agent_id", "app_id", "run_id"};

// A Mem0 request's scope: the namespace, and the metadata filter within it (the entity ids and any
// other flat equality the filters named).
struct Mem0Scope {
  std::string name_space;
  nlohmann::json filter = nlohmann::json::object();
};

// The scope of entity ids given as members of `object` (add bodies, delete-all query parameters):
// InvalidArgument (api code invalid_argument) if none is given, one is not a non-empty string, or
// the namespace it maps to is not a valid name.
[[nodiscard]] absl::StatusOr<Mem0Scope> Mem0ScopeOfEntities(const nlohmann::json& object);

// The scope of Mem0 `filters` ({"user_id": "u", "category": "x"} or {"AND": [{...}, {...}]}):
// flattened, entity ids pick the namespace, other members are exact metadata matches (scalar
// values only). OR, NOT, nested operators, an entity named twice with different values, or no
// entity at all -> InvalidArgument.
[[nodiscard]] absl::StatusOr<Mem0Scope> Mem0ScopeOfFilters(const nlohmann::json& filters);

// "2026-12-31" -> the first microsecond after that UTC day (a memory is kept through the day it
// names). InvalidArgument for anything else.
[[nodiscard]] absl::StatusOr<int64_t> ParseMem0ExpirationDate(std::string_view date);
// Microseconds since the epoch as ISO 8601 UTC with microseconds ("2026-11-23T23:54:45.732000Z").
std::string IsoTime(int64_t us);

// An entry as a Mem0 memory: {"id", "memory", "hash", "metadata" (the caller's metadata: without
// entity ids, role and reserved members), "categories": [], "created_at", "updated_at",
// "expiration_date", "user_id", "agent_id", "app_id", "run_id" (null when absent), "state"}, plus
// "score" when given.
nlohmann::json Mem0Memory(const Entry& entry, std::optional<float> score = std::nullopt);

// The members of an entry's metadata the mapping owns (entity ids, "role", reserved "bulwark.*"),
// copied from `from` into `to`: a Mem0 update keeps them.
void CarryMem0Metadata(const nlohmann::json& from, nlohmann::json* to);

}  // namespace bulwark::server

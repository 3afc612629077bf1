// Strict decoding of HTTP API requests: JSON bodies and URL query parameters become typed request
// structs, or an InvalidArgument status whose API code says what was wrong. Nothing here touches
// the store, so a rejected request has changed nothing.
//
// Rules for every body: one JSON object; no duplicate keys; nesting at most `max_depth`; every
// field known (an unknown field is an error, not ignored); every field of its documented type.
// Query strings: only the documented parameters, each at most once (server/query_params.h).
//
// API codes (doc/api.md): invalid_json, unknown_field, duplicate_field, missing_field, wrong_type,
// out_of_range, invalid_argument.
#pragma once

#include <absl/status/statusor.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "audit/audit_log.h"
#include "auth/principal_registry.h"
#include "bulwark/entry.h"
#include "gate/query_gate.h"
#include "server/query_params.h"
#include "smoothing/responder.h"
#include "smoothing/smoother.h"
#include "store/memory_store.h"
#include "store/store_options.h"

namespace bulwark::server {

struct RequestLimits {
  int max_k = 100;                  // largest accepted search k; 1 .. 1000
  size_t max_batch_entries = 1000;  // entries in one POST /v1/memories batch
  int max_depth = 32;               // JSON nesting (objects and arrays) of a body
  int max_list_limit = 1000;        // `limit` of list endpoints (quarantine, audit)
  int max_smoothing_runs = 25;      // `nruns` of smoothing (each run may be an LLM call); 1 .. 101
};

// Parses `body` as a single JSON object under the rules above. An empty body is an error.
[[nodiscard]] absl::StatusOr<nlohmann::json> ParseJsonObject(std::string_view body, int max_depth);

// POST /v1/memories. One entry {"namespace", "text", "metadata"?, "source"?, "principal"?, "key"?,
// "expires_at_us"?} or a batch {"namespace", "entries": [{"text", "metadata"?, "source"?,
// "expires_at_us"?}, ...]}. Metadata members named "bulwark.*" are refused (reserved).
struct AddRequest {
  std::optional<std::string> name_space;
  std::vector<NewEntry> entries;  // one for a single add
  bool batch = false;
  // A principal named by the client. The server writes as the authenticated caller, so the handler
  // refuses any value other than the caller's own name.
  std::optional<std::string> principal;
  // A single add's client-chosen key (also set as the entry's metadata "bulwark.key"): upsert.
  // Each entry's optional "expires_at_us" becomes its metadata "bulwark.expires_at_us".
  std::optional<std::string> key;
};
[[nodiscard]] absl::StatusOr<AddRequest> ParseAddRequest(std::string_view body, const RequestLimits& limits);

// The read-time defense fields of a search or answer (doc/api.md): "gate" (a mode name),
// "k_high" (k .. max-k), "smoothing" (true for the defaults, or {"m"?, "k"?, "nruns"?,
// "responder"?}; m up to max-k, nruns up to max_smoothing_runs).
struct ReadDefenseFields {
  std::optional<GateMode> gate_mode;
  int k_high = 0;  // 0: the default (2k)
  std::optional<SmoothingOptions> smoothing;
  ResponderKind responder = ResponderKind::kExtractive;
};

// POST /v1/memories/search: {"namespace", "query", "k"?, "filter"?, "include_quarantined"?,
// "gate"?, "k_high"?, "smoothing"?}.
struct SearchRequest {
  std::optional<std::string> name_space;
  std::string query;
  SearchOptions options;  // k defaults to 5
  ReadDefenseFields defenses;
};
[[nodiscard]] absl::StatusOr<SearchRequest> ParseSearchRequest(std::string_view body,
                                                               const RequestLimits& limits);

// POST /v1/answer: {"namespace", "question", "filter"?, "gate"?, "smoothing"?}. Smoothing is always
// on (the defaults unless given).
struct AnswerRequest {
  std::optional<std::string> name_space;
  std::string question;
  nlohmann::json filter = nlohmann::json::object();
  ReadDefenseFields defenses;
};
[[nodiscard]] absl::StatusOr<AnswerRequest> ParseAnswerRequest(std::string_view body,
                                                               const RequestLimits& limits);

// PATCH /v1/memories/{id}: {"namespace"?, "text"?, "metadata"?}, at least one of text/metadata.
struct UpdateRequest {
  std::optional<std::string> name_space;
  EntryUpdate update;
};
[[nodiscard]] absl::StatusOr<UpdateRequest> ParseUpdateRequest(std::string_view body,
                                                               const RequestLimits& limits);

// Bodies of the entry actions (purge, release, reject, quarantine): empty, or
// {"namespace"?, "reason"?}. `reason` is accepted only where `allow_reason` is set (quarantine).
struct EntryActionRequest {
  std::optional<std::string> name_space;
  std::optional<std::string> reason;
};
[[nodiscard]] absl::StatusOr<EntryActionRequest> ParseEntryActionRequest(std::string_view body,
                                                                         bool allow_reason,
                                                                         const RequestLimits& limits);

// POST /v1/admin/principals: {"name", "role", "namespaces": [...], "create_key"?: true}.
struct CreatePrincipalRequest {
  Principal principal;
  bool create_key = true;
};
[[nodiscard]] absl::StatusOr<CreatePrincipalRequest> ParseCreatePrincipalRequest(std::string_view body,
                                                                                 const RequestLimits& limits);

// GET /v1/audit?principal=&session=&namespace=&entry_id=&since_us=&limit=
[[nodiscard]] absl::StatusOr<AuditQuery> ParseAuditQuery(const QueryParams& params,
                                                         const RequestLimits& limits);

// The namespace of a request given in the body and/or the `namespace` query parameter. Exactly
// one source, or both equal; missing -> missing_field; a malformed name -> invalid_argument.
[[nodiscard]] absl::StatusOr<std::string> ResolveNamespace(const std::optional<std::string>& from_body,
                                                           const QueryParams& params);

// X-Bulwark-Session: empty, or 1-128 printable ASCII characters (no spaces).
[[nodiscard]] absl::Status ValidateSessionId(std::string_view session);

}  // namespace bulwark::server

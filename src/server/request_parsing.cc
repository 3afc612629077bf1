// Strict request decoding (see request_parsing.h).
#include "server/request_parsing.h"

#include <absl/strings/str_cat.h>

#include <set>

#include "core/ids.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "core/text_validation.h"
#include "server/api_status.h"
#include "store/entry_keys.h"

namespace bulwark::server {
namespace {

using nlohmann::json;

absl::Status Invalid(std::string_view api_code, std::string_view message) {
  return ApiError(absl::StatusCode::kInvalidArgument, api_code, message);
}

// Thrown from the parser callback to stop parsing at the first duplicate key or at the depth
// limit; caught in ParseJsonObject and never beyond it.
struct ParseAbort {
  std::string api_code;
  std::string message;
};

std::string Quoted(std::string_view name) { return absl::StrCat("\"", ToAbsl(name), "\""); }

// Rejects any field of `object` not in `allowed`. `where` prefixes messages ("entries[2]: ").
absl::Status CheckFields(const json& object, std::initializer_list<std::string_view> allowed,
                         std::string_view where) {
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || key == a;
    if (!known) return Invalid("unknown_field", absl::StrCat(ToAbsl(where), "unknown field ", Quoted(key)));
  }
  return absl::OkStatus();
}

const json* Find(const json& object, std::string_view name) {
  auto it = object.find(name);
  return it == object.end() ? nullptr : &*it;
}

absl::Status WrongType(std::string_view where, std::string_view name, std::string_view type) {
  return Invalid("wrong_type",
                 absl::StrCat(ToAbsl(where), "field ", Quoted(name), " must be ", ToAbsl(type)));
}

absl::Status Missing(std::string_view where, std::string_view name) {
  return Invalid("missing_field", absl::StrCat(ToAbsl(where), "missing field ", Quoted(name)));
}

absl::StatusOr<std::optional<std::string>> OptionalString(const json& object, std::string_view name,
                                                          std::string_view where = "") {
  const json* v = Find(object, name);
  if (v == nullptr) return std::optional<std::string>();
  if (!v->is_string()) return WrongType(where, name, "a string");
  return std::optional<std::string>(v->get<std::string>());
}

absl::StatusOr<std::string> RequiredString(const json& object, std::string_view name,
                                           std::string_view where = "") {
  BULWARK_ASSIGN_OR_RETURN(auto value, OptionalString(object, name, where));
  if (!value.has_value()) return Missing(where, name);
  return *std::move(value);
}

absl::StatusOr<std::optional<json>> OptionalObject(const json& object, std::string_view name,
                                                   std::string_view where = "") {
  const json* v = Find(object, name);
  if (v == nullptr) return std::optional<json>();
  if (!v->is_object()) return WrongType(where, name, "a JSON object");
  return std::optional<json>(*v);
}

absl::StatusOr<std::optional<bool>> OptionalBool(const json& object, std::string_view name) {
  const json* v = Find(object, name);
  if (v == nullptr) return std::optional<bool>();
  if (!v->is_boolean()) return WrongType("", name, "true or false");
  return std::optional<bool>(v->get<bool>());
}

absl::Status ParseSourceField(const json& object, std::string_view where, Source* source) {
  BULWARK_ASSIGN_OR_RETURN(const std::optional<std::string> name, OptionalString(object, "source", where));
  if (!name.has_value()) return absl::OkStatus();
  auto parsed = bulwark::ParseSource(*name);
  if (!parsed) {
    return Invalid(
        "invalid_argument",
        absl::StrCat(ToAbsl(where), "field \"source\" must be one of user, agent, tool, system, import"));
  }
  *source = *parsed;
  return absl::OkStatus();
}

// Fills text, metadata and source of `entry` from `object` (which has passed CheckFields), and
// the reserved metadata member "bulwark.expires_at_us" from the optional `expires_at_us` field
// (store/entry_keys.h); client metadata may not hold reserved members.
absl::Status ParseNewEntry(const json& object, std::string_view where, NewEntry* entry) {
  BULWARK_ASSIGN_OR_RETURN(auto text, RequiredString(object, "text", where));
  entry->text = std::move(text);
  BULWARK_ASSIGN_OR_RETURN(auto metadata, OptionalObject(object, "metadata", where));
  if (metadata.has_value()) entry->metadata = *std::move(metadata);
  if (auto s = CheckNoReservedMetadata(entry->metadata); !s.ok()) {
    return Invalid("invalid_argument", absl::StrCat(ToAbsl(where), s.message()));
  }
  if (const json* expires = Find(object, "expires_at_us"); expires != nullptr) {
    if (!expires->is_number_integer() ||
        (expires->is_number_unsigned() && expires->get<uint64_t>() > INT64_MAX)) {
      return WrongType(where, "expires_at_us", "an integer (microseconds since the epoch)");
    }
    entry->metadata[kExpiresAtField] = expires->get<int64_t>();
  }
  return ParseSourceField(object, where, &entry->source);
}

// An optional integer field in [min, max]; `fallback` when absent. `where` prefixes messages.
absl::StatusOr<int> OptionalInt(const json& object, std::string_view name, int fallback, int min, int max,
                                std::string_view where = "") {
  const json* v = Find(object, name);
  if (v == nullptr) return fallback;
  if (!v->is_number_integer()) return WrongType(where, name, "an integer");
  // Positive integers parse as unsigned, negative ones as signed.
  const bool in_range = v->is_number_unsigned()
                            ? v->get<uint64_t>() >= static_cast<uint64_t>(std::max(min, 0)) &&
                                  v->get<uint64_t>() <= static_cast<uint64_t>(max)
                            : v->get<int64_t>() >= min && v->get<int64_t>() <= max;
  if (!in_range) {
    return Invalid("out_of_range", absl::StrCat(ToAbsl(where), "field ", Quoted(name), " must be between ",
                                                min, " and ", max));
  }
  return static_cast<int>(v->get<int64_t>());
}

// The default smoothing options within the server's limits.
SmoothingOptions DefaultSmoothing(const RequestLimits& limits) {
  SmoothingOptions options;
  options.m = std::min(options.m, limits.max_k);
  options.k = std::min(options.k, options.m);
  options.nruns = std::min(options.nruns, limits.max_smoothing_runs);
  return options;
}

// "gate", "k_high" and "smoothing" of a search or answer body.
absl::Status ParseReadDefenses(const json& object, const RequestLimits& limits, ReadDefenseFields* out) {
  BULWARK_ASSIGN_OR_RETURN(const std::optional<std::string> gate, OptionalString(object, "gate"));
  if (gate.has_value()) {
    out->gate_mode = ParseGateMode(*gate);
    if (!out->gate_mode) {
      return Invalid("invalid_argument", "field \"gate\" must be one of off, flag, escalate, reject, strip");
    }
  }
  BULWARK_ASSIGN_OR_RETURN(auto k_high, OptionalInt(object, "k_high", 0, 1, limits.max_k));
  out->k_high = k_high;
  const json* smoothing = Find(object, "smoothing");
  if (smoothing == nullptr || (smoothing->is_boolean() && !smoothing->get<bool>())) return absl::OkStatus();
  SmoothingOptions options = DefaultSmoothing(limits);
  if (smoothing->is_object()) {
    constexpr std::string_view where = "smoothing: ";
    BULWARK_RETURN_IF_ERROR(CheckFields(*smoothing, {"m", "k", "nruns", "responder"}, where));
    BULWARK_ASSIGN_OR_RETURN(auto m, OptionalInt(*smoothing, "m", options.m, 1, limits.max_k, where));
    options.m = m;
    BULWARK_ASSIGN_OR_RETURN(
        auto k, OptionalInt(*smoothing, "k", std::min(options.k, options.m), 1, options.m, where));
    options.k = k;
    BULWARK_ASSIGN_OR_RETURN(
        auto nruns, OptionalInt(*smoothing, "nruns", options.nruns, 1, limits.max_smoothing_runs, where));
    options.nruns = nruns;
    BULWARK_ASSIGN_OR_RETURN(const std::optional<std::string> responder,
                             OptionalString(*smoothing, "responder", where));
    if (responder.has_value()) {
      const std::optional<ResponderKind> kind = ParseResponderKind(*responder);
      if (!kind)
        return Invalid("invalid_argument", "field \"smoothing.responder\" must be \"extractive\" or \"llm\"");
      out->responder = *kind;
    }
  } else if (!smoothing->is_boolean()) {
    return WrongType("", "smoothing", "true, false or an object");
  }
  out->smoothing = options;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<json> ParseJsonObject(std::string_view body, int max_depth) {
  if (body.empty()) return Invalid("invalid_json", "request body is empty; expected a JSON object");
  // One set of keys per open object; arrays push an empty set so the depth counts them too.
  std::vector<std::set<std::string>> open;
  auto callback = [&](int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        open.emplace_back();
        if (static_cast<int>(open.size()) > max_depth) {
          throw ParseAbort{"invalid_json", absl::StrCat("JSON nesting deeper than ", max_depth, " levels")};
        }
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!open.empty()) open.pop_back();
        break;
      case json::parse_event_t::key:
        if (!open.empty() && !open.back().insert(parsed.get<std::string>()).second) {
          throw ParseAbort{"duplicate_field",
                           absl::StrCat("duplicate field ", Quoted(parsed.get<std::string>()))};
        }
        break;
      case json::parse_event_t::value:
        break;
    }
    return true;
  };
  json value;
  try {
    value = json::parse(body.begin(), body.end(), callback, /*allow_exceptions=*/true);
  } catch (const ParseAbort& abort) {
    return Invalid(abort.api_code, abort.message);
  } catch (const json::exception& e) {
    std::string_view what = e.what();
    if (auto end = what.find("] "); what.starts_with("[json.exception.") && end != std::string_view::npos) {
      what.remove_prefix(end + 2);
    }
    return Invalid("invalid_json", absl::StrCat("malformed JSON: ", ToAbsl(what)));
  }
  if (!value.is_object()) return Invalid("invalid_json", "request body must be a JSON object");
  return value;
}

absl::StatusOr<AddRequest> ParseAddRequest(std::string_view body, const RequestLimits& limits) {
  BULWARK_ASSIGN_OR_RETURN(auto object, ParseJsonObject(body, limits.max_depth));
  AddRequest request;
  BULWARK_ASSIGN_OR_RETURN(auto name_space, OptionalString(object, "namespace"));
  request.name_space = std::move(name_space);
  BULWARK_ASSIGN_OR_RETURN(auto principal, OptionalString(object, "principal"));
  request.principal = std::move(principal);

  const json* entries = Find(object, "entries");
  if (entries == nullptr) {
    BULWARK_RETURN_IF_ERROR(CheckFields(
        object, {"namespace", "principal", "text", "metadata", "source", "key", "expires_at_us"}, ""));
    NewEntry entry;
    BULWARK_RETURN_IF_ERROR(ParseNewEntry(object, "", &entry));
    BULWARK_ASSIGN_OR_RETURN(std::optional<std::string> key, OptionalString(object, "key"));
    if (key.has_value()) {
      if (auto s = ValidateEntryKey(*key); !s.ok()) return Invalid("invalid_argument", ToStd(s.message()));
      entry.metadata[kEntryKeyField] = *key;
      request.key = std::move(key);
    }
    request.entries.push_back(std::move(entry));
    return request;
  }
  if (auto s = CheckFields(object, {"namespace", "principal", "entries"}, ""); !s.ok()) {
    return Invalid(ApiCodeOf(s),
                   absl::StrCat(s.message(), " (a batch takes only \"namespace\" and \"entries\")"));
  }
  if (!entries->is_array()) return WrongType("", "entries", "an array of entry objects");
  if (entries->empty()) return Invalid("invalid_argument", "field \"entries\" is empty");
  if (entries->size() > limits.max_batch_entries) {
    return Invalid("out_of_range", absl::StrCat("batch has ", entries->size(), " entries; the limit is ",
                                                limits.max_batch_entries));
  }
  request.batch = true;
  request.entries.reserve(entries->size());
  for (size_t i = 0; i < entries->size(); ++i) {
    const std::string where = absl::StrCat("entries[", i, "]: ");
    const json& item = (*entries)[i];
    if (!item.is_object()) return Invalid("wrong_type", absl::StrCat(where, "must be a JSON object"));
    BULWARK_RETURN_IF_ERROR(CheckFields(item, {"text", "metadata", "source", "expires_at_us"}, where));
    NewEntry entry;
    BULWARK_RETURN_IF_ERROR(ParseNewEntry(item, where, &entry));
    request.entries.push_back(std::move(entry));
  }
  return request;
}

absl::StatusOr<SearchRequest> ParseSearchRequest(std::string_view body, const RequestLimits& limits) {
  BULWARK_ASSIGN_OR_RETURN(auto object, ParseJsonObject(body, limits.max_depth));
  BULWARK_RETURN_IF_ERROR(CheckFields(
      object, {"namespace", "query", "k", "filter", "include_quarantined", "gate", "k_high", "smoothing"},
      ""));
  SearchRequest request;
  BULWARK_ASSIGN_OR_RETURN(auto name_space, OptionalString(object, "namespace"));
  request.name_space = std::move(name_space);
  BULWARK_ASSIGN_OR_RETURN(auto query, RequiredString(object, "query"));
  request.query = std::move(query);
  BULWARK_ASSIGN_OR_RETURN(auto k, OptionalInt(object, "k", request.options.k, 1, limits.max_k));
  request.options.k = k;
  BULWARK_ASSIGN_OR_RETURN(auto filter, OptionalObject(object, "filter"));
  if (filter.has_value()) request.options.metadata_filter = *std::move(filter);
  BULWARK_ASSIGN_OR_RETURN(auto include, OptionalBool(object, "include_quarantined"));
  request.options.include_quarantined = include.value_or(false);
  BULWARK_RETURN_IF_ERROR(ParseReadDefenses(object, limits, &request.defenses));
  if (request.defenses.k_high != 0 && request.defenses.k_high < request.options.k) {
    return Invalid("out_of_range", "field \"k_high\" must not be smaller than \"k\"");
  }
  return request;
}

absl::StatusOr<AnswerRequest> ParseAnswerRequest(std::string_view body, const RequestLimits& limits) {
  BULWARK_ASSIGN_OR_RETURN(auto object, ParseJsonObject(body, limits.max_depth));
  BULWARK_RETURN_IF_ERROR(CheckFields(object, {"namespace", "question", "filter", "gate", "smoothing"}, ""));
  AnswerRequest request;
  BULWARK_ASSIGN_OR_RETURN(auto name_space, OptionalString(object, "namespace"));
  request.name_space = std::move(name_space);
  BULWARK_ASSIGN_OR_RETURN(auto question, RequiredString(object, "question"));
  request.question = std::move(question);
  BULWARK_ASSIGN_OR_RETURN(auto filter, OptionalObject(object, "filter"));
  if (filter.has_value()) request.filter = *std::move(filter);
  BULWARK_RETURN_IF_ERROR(ParseReadDefenses(object, limits, &request.defenses));
  if (const json* smoothing = Find(object, "smoothing");
      smoothing != nullptr && smoothing->is_boolean() && !smoothing->get<bool>()) {
    return Invalid("invalid_argument", "an answer is always smoothed; \"smoothing\" cannot be false");
  }
  if (!request.defenses.smoothing) request.defenses.smoothing = DefaultSmoothing(limits);
  return request;
}

absl::StatusOr<UpdateRequest> ParseUpdateRequest(std::string_view body, const RequestLimits& limits) {
  BULWARK_ASSIGN_OR_RETURN(auto object, ParseJsonObject(body, limits.max_depth));
  BULWARK_RETURN_IF_ERROR(CheckFields(object, {"namespace", "text", "metadata"}, ""));
  UpdateRequest request;
  BULWARK_ASSIGN_OR_RETURN(auto name_space, OptionalString(object, "namespace"));
  request.name_space = std::move(name_space);
  BULWARK_ASSIGN_OR_RETURN(auto text, OptionalString(object, "text"));
  request.update.text = std::move(text);
  BULWARK_ASSIGN_OR_RETURN(auto metadata, OptionalObject(object, "metadata"));
  request.update.metadata = std::move(metadata);
  if (request.update.metadata) {
    if (auto s = CheckNoReservedMetadata(*request.update.metadata); !s.ok()) {
      return Invalid("invalid_argument", ToStd(s.message()));
    }
  }
  if (!request.update.text && !request.update.metadata) {
    return Invalid("missing_field", "an update needs \"text\" and/or \"metadata\"");
  }
  return request;
}

absl::StatusOr<EntryActionRequest> ParseEntryActionRequest(std::string_view body, bool allow_reason,
                                                           const RequestLimits& limits) {
  EntryActionRequest request;
  if (body.empty()) return request;
  BULWARK_ASSIGN_OR_RETURN(auto object, ParseJsonObject(body, limits.max_depth));
  absl::Status fields = allow_reason ? CheckFields(object, {"namespace", "reason"}, "")
                                     : CheckFields(object, {"namespace"}, "");
  if (!fields.ok()) return fields;
  BULWARK_ASSIGN_OR_RETURN(auto name_space, OptionalString(object, "namespace"));
  request.name_space = std::move(name_space);
  BULWARK_ASSIGN_OR_RETURN(auto reason, OptionalString(object, "reason"));
  request.reason = std::move(reason);
  if (request.reason && request.reason->size() > 1024) {
    return Invalid("out_of_range", "field \"reason\" is longer than 1024 bytes");
  }
  return request;
}

absl::StatusOr<CreatePrincipalRequest> ParseCreatePrincipalRequest(std::string_view body,
                                                                   const RequestLimits& limits) {
  BULWARK_ASSIGN_OR_RETURN(auto object, ParseJsonObject(body, limits.max_depth));
  BULWARK_RETURN_IF_ERROR(CheckFields(object, {"name", "role", "namespaces", "create_key"}, ""));
  CreatePrincipalRequest request;
  BULWARK_ASSIGN_OR_RETURN(auto name, RequiredString(object, "name"));
  request.principal.name = std::move(name);
  BULWARK_ASSIGN_OR_RETURN(auto role_name, RequiredString(object, "role"));
  auto role = ParseRole(role_name);
  if (!role) return Invalid("invalid_argument", "field \"role\" must be one of reader, writer, admin");
  request.principal.role = *role;
  const json* namespaces = Find(object, "namespaces");
  if (namespaces == nullptr) return Missing("", "namespaces");
  if (!namespaces->is_array()) return WrongType("", "namespaces", "an array of strings");
  if (namespaces->empty()) return Invalid("invalid_argument", "field \"namespaces\" is empty");
  if (namespaces->size() > 1000) return Invalid("out_of_range", "more than 1000 namespace grants");
  for (const json& ns : *namespaces) {
    if (!ns.is_string()) return WrongType("", "namespaces", "an array of strings");
    request.principal.namespaces.push_back(ns.get<std::string>());
  }
  BULWARK_ASSIGN_OR_RETURN(auto create_key, OptionalBool(object, "create_key"));
  request.create_key = create_key.value_or(true);
  return request;
}

absl::StatusOr<AuditQuery> ParseAuditQuery(const QueryParams& params, const RequestLimits& limits) {
  if (auto s =
          CheckQueryParams(params, {"principal", "session", "namespace", "entry_id", "since_us", "limit"});
      !s.ok()) {
    return s;
  }
  AuditQuery query;
  query.principal = QueryParam(params, "principal");
  query.session = QueryParam(params, "session");
  query.name_space = QueryParam(params, "namespace");
  query.entry_id = QueryParam(params, "entry_id");
  if (query.name_space) {
    if (auto s = ValidateNamespace(*query.name_space); !s.ok())
      return Invalid("invalid_argument", ToStd(s.message()));
  }
  if (query.entry_id && !IsValidEntryId(*query.entry_id)) {
    return Invalid("invalid_argument", "query parameter \"entry_id\" is not a valid entry id");
  }
  if (query.session) {
    BULWARK_RETURN_IF_ERROR(ValidateSessionId(*query.session));
  }
  BULWARK_ASSIGN_OR_RETURN(auto since, IntQueryParam(params, "since_us", 0, 0, INT64_MAX));
  query.since_us = since;
  BULWARK_ASSIGN_OR_RETURN(auto limit, IntQueryParam(params, "limit", 100, 1, limits.max_list_limit));
  query.limit = static_cast<int>(limit);
  return query;
}

absl::StatusOr<std::string> ResolveNamespace(const std::optional<std::string>& from_body,
                                             const QueryParams& params) {
  std::optional<std::string> from_query = QueryParam(params, "namespace");
  if (from_body && from_query && *from_body != *from_query) {
    return Invalid("invalid_argument", "the namespace in the body and in the query string differ");
  }
  const std::optional<std::string>& name = from_body ? from_body : from_query;
  if (!name) return Missing("", "namespace");
  if (auto s = ValidateNamespace(*name); !s.ok()) return Invalid("invalid_argument", ToStd(s.message()));
  return *name;
}

absl::Status ValidateSessionId(std::string_view session) {
  if (session.size() > 128)
    return Invalid("invalid_argument", "X-Bulwark-Session is longer than 128 characters");
  for (char c : session) {
    if (c <= ' ' || c > '~') {
      return Invalid("invalid_argument", "X-Bulwark-Session may hold only printable ASCII without spaces");
    }
  }
  return absl::OkStatus();
}

}  // namespace bulwark::server

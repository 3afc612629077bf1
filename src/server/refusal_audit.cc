// The audit record of a refused request (see refusal_audit.h).
#include "server/refusal_audit.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "audit/audit_operation.h"
#include "retrieval/honeypot_guard.h"
#include "server/api_status.h"
#include "server/trace_context.h"

namespace bulwark::server {

std::string PresentedKeyId(const httplib::Request& request) {
  auto key = ApiKeyOf(request);
  if (!key.ok()) return "malformed";
  if (key->empty()) return "";
  std::string id = KeyIdOf(*key);
  const bool well_formed = id.size() == 16 && std::all_of(id.begin(), id.end(), [](char c) {
                             return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                           });
  return well_formed ? id : "malformed";
}

AuditRecord RefusalRecord(const httplib::Request& request, std::string_view method_label,
                          std::string_view route, const Caller* caller, const absl::Status& status,
                          int64_t at_us) {
  AuditRecord record;
  record.at_us = at_us;
  record.principal = caller != nullptr ? caller->principal.name : "";
  record.session = caller != nullptr ? caller->session : "";
  record.operation = std::string(ToString(AuditOperation::kRefused));
  record.detail = {{"key_id", caller != nullptr ? caller->key_id : PresentedKeyId(request)},
                   {"method", method_label},
                   {"route", route},
                   {"status", HttpStatusOf(status.code())},
                   {"code", ApiCodeOf(status)}};
  if (auto trace = TraceParentOf(request)) record.detail["traceparent"] = *std::move(trace);
  // A session_blocked refusal: the namespace and the honeypot monitor's state of the blocked key.
  if (auto payload = status.GetPayload(HoneypotGuard::kRefusalPayloadUrl)) {
    nlohmann::json monitor =
        nlohmann::json::parse(std::string(*payload), nullptr, /*allow_exceptions=*/false);
    if (monitor.is_object()) {
      record.name_space = monitor.value("namespace", "");
      monitor.erase("namespace");
      record.detail["honeypot_monitor"] = std::move(monitor);
    }
  }
  return record;
}

}  // namespace bulwark::server

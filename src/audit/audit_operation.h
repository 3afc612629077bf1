// AuditOperation: what an audit record says a caller did, a closed set. Records store its name
// (ToString), which is part of the signed chain (doc/store_format.md), so names never change;
// new operations are appended.
#pragma once

#include <optional>
#include <string_view>

namespace bulwark {

enum class AuditOperation {
  kAdd,
  kSearch,
  kAnswer,
  kGet,
  kHistory,
  kUpdate,
  kDelete,
  kPurge,
  kQuarantine,
  kRelease,
  kReject,
  // Administration and refusals (issue #18 point 8).
  kCreatePrincipal,
  kRevokePrincipal,
  kCreateKey,
  kRevokeKey,
  kRotateSigningKey,
  kVerify,
  kRefused,  // a request answered 401 or 403
  // Routes the agent clients need (issue #15 point 1).
  kList,            // GET /v1/memories
  kListNamespaces,  // GET /v1/namespaces
  kDeleteAll,       // POST /v1/namespaces/{namespace}/delete-all
  kForget,          // POST /v1/namespaces/{namespace}/forget
  // The honeypot monitor's admin routes (issue #13 point 3).
  kHoneypotSetting,  // PUT /v1/admin/honeypots/settings
  kUnblockSession,   // POST /v1/admin/sessions/unblock
};

constexpr std::string_view ToString(AuditOperation op) {
  switch (op) {
    case AuditOperation::kAdd:
      return "add";
    case AuditOperation::kSearch:
      return "search";
    case AuditOperation::kAnswer:
      return "answer";
    case AuditOperation::kGet:
      return "get";
    case AuditOperation::kHistory:
      return "history";
    case AuditOperation::kUpdate:
      return "update";
    case AuditOperation::kDelete:
      return "delete";
    case AuditOperation::kPurge:
      return "purge";
    case AuditOperation::kQuarantine:
      return "quarantine";
    case AuditOperation::kRelease:
      return "release";
    case AuditOperation::kReject:
      return "reject";
    case AuditOperation::kCreatePrincipal:
      return "create_principal";
    case AuditOperation::kRevokePrincipal:
      return "revoke_principal";
    case AuditOperation::kCreateKey:
      return "create_key";
    case AuditOperation::kRevokeKey:
      return "revoke_key";
    case AuditOperation::kRotateSigningKey:
      return "rotate_signing_key";
    case AuditOperation::kVerify:
      return "verify";
    case AuditOperation::kRefused:
      return "refused";
    case AuditOperation::kList:
      return "list";
    case AuditOperation::kListNamespaces:
      return "list_namespaces";
    case AuditOperation::kDeleteAll:
      return "delete_all";
    case AuditOperation::kForget:
      return "forget";
    case AuditOperation::kHoneypotSetting:
      return "honeypot_setting";
    case AuditOperation::kUnblockSession:
      return "unblock_session";
  }
  return "unknown";
}

}  // namespace bulwark

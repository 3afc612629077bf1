// Administration routes. Principals, API keys, the signing keyring and store verification act
// across every namespace, so they need the admin role with the "*" grant ("service admin"). The
// audit log is readable by any admin, limited to the namespaces that admin holds.
//
//   GET  /v1/admin/principals                    list principals (with their key ids)
//   POST /v1/admin/principals                    create one; returns its first API key once
//   GET  /v1/admin/principals/{name}             one principal
//   POST /v1/admin/principals/{name}/revoke      revoke it and all its keys
//   GET  /v1/admin/principals/{name}/keys        its keys (ids only; secrets are never stored)
//   POST /v1/admin/principals/{name}/keys        a new key, returned once
//   POST /v1/admin/keys/{key_id}/revoke          revoke one key
//   POST /v1/admin/signing-keys/rotate           new newest signing key; old entries still verify
//   POST /v1/admin/verify                        check every row's signature and the audit chain
//   GET  /v1/audit?principal=&session=&namespace=&entry_id=&since_us=&limit=
#include <absl/strings/str_cat.h>

#include "audit/audit_chain.h"
#include "core/status_macros.h"
#include "server/api_status.h"
#include "server/service.h"

namespace bulwark::server {
namespace {

// The audit namespace of actions across the whole service (principals, keys, signing keys, verify).
constexpr std::string_view kServiceWide = "*";

nlohmann::json PrincipalJson(const Principal& p) {
  return {{"name", p.name},
          {"role", ToString(p.role)},
          {"namespaces", p.namespaces},
          {"revoked", p.revoked},
          {"created_at_us", p.created_at_us}};
}

nlohmann::json KeyJson(const ApiKeyInfo& k) {
  return {{"key_id", k.key_id},
          {"principal", k.principal},
          {"created_at_us", k.created_at_us},
          {"revoked", k.revoked}};
}

absl::Status NoBody(const Call& call) {
  if (call.http.body.empty()) return absl::OkStatus();
  return ApiError(absl::StatusCode::kInvalidArgument, "invalid_argument", "this request takes no body");
}

absl::Status NoQuery(const Call& call) { return CheckQueryParams(call.query, {}); }

absl::StatusOr<Reply> ListPrincipals(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(NoQuery(call));
  PrincipalRegistry& registry = *ctx.backends.registry;
  BULWARK_ASSIGN_OR_RETURN(auto principals, registry.ListPrincipals());
  nlohmann::json out = nlohmann::json::array();
  for (const Principal& p : principals) {
    nlohmann::json j = PrincipalJson(p);
    BULWARK_ASSIGN_OR_RETURN(auto keys, registry.ListKeys(p.name));
    j["keys"] = nlohmann::json::array();
    for (const ApiKeyInfo& k : keys) j["keys"].push_back(KeyJson(k));
    out.push_back(std::move(j));
  }
  Reply reply;
  reply.body = {{"principals", std::move(out)}};
  return reply;
}

absl::StatusOr<Reply> CreatePrincipal(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(NoQuery(call));
  BULWARK_ASSIGN_OR_RETURN(auto request, ParseCreatePrincipalRequest(call.http.body, ctx.limits));
  PrincipalRegistry& registry = *ctx.backends.registry;
  BULWARK_RETURN_IF_ERROR(registry.AddPrincipal(request.principal));
  BULWARK_ASSIGN_OR_RETURN(auto created, registry.GetPrincipal(request.principal.name));
  Reply reply;
  reply.status = 201;
  reply.body = {{"principal", PrincipalJson(created)}};
  nlohmann::json detail = {
      {"name", created.name}, {"role", ToString(created.role)}, {"namespaces", created.namespaces}};
  if (request.create_key) {
    auto key = registry.CreateKey(created.name);
    if (!key.ok()) {
      RecordAudit(ctx, call, kServiceWide, AuditOperation::kCreatePrincipal, {}, "", std::move(detail));
      return key.status();
    }
    reply.body["api_key"] = *key;
    reply.body["key_id"] = KeyIdOf(*key);
    detail["created_key_id"] = KeyIdOf(*key);
  }
  RecordAudit(ctx, call, kServiceWide, AuditOperation::kCreatePrincipal, {}, "", std::move(detail));
  return reply;
}

absl::StatusOr<Reply> GetPrincipal(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(NoQuery(call));
  BULWARK_ASSIGN_OR_RETURN(auto principal, ctx.backends.registry->GetPrincipal(call.Param("name")));
  Reply reply;
  reply.body = {{"principal", PrincipalJson(principal)}};
  return reply;
}

absl::StatusOr<Reply> RevokePrincipal(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(NoQuery(call));
  BULWARK_RETURN_IF_ERROR(NoBody(call));
  const std::string_view name = call.Param("name");
  if (name == call.caller->principal.name) {
    return ApiError(absl::StatusCode::kFailedPrecondition, "conflict",
                    "a principal cannot revoke itself (use another admin, or `bulwark principals revoke`)");
  }
  BULWARK_RETURN_IF_ERROR(ctx.backends.registry->RevokePrincipal(name));
  ctx.credentials->Clear();  // effective for the very next request
  RecordAudit(ctx, call, kServiceWide, AuditOperation::kRevokePrincipal, {}, "", {{"name", name}});
  Reply reply;
  reply.body = {{"name", name}, {"revoked", true}};
  return reply;
}

absl::StatusOr<Reply> ListKeys(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(NoQuery(call));
  PrincipalRegistry& registry = *ctx.backends.registry;
  BULWARK_RETURN_IF_ERROR(registry.GetPrincipal(call.Param("name")).status());
  BULWARK_ASSIGN_OR_RETURN(auto keys, registry.ListKeys(call.Param("name")));
  nlohmann::json out = nlohmann::json::array();
  for (const ApiKeyInfo& k : keys) out.push_back(KeyJson(k));
  Reply reply;
  reply.body = {{"keys", std::move(out)}};
  return reply;
}

absl::StatusOr<Reply> CreateKey(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(NoQuery(call));
  BULWARK_RETURN_IF_ERROR(NoBody(call));
  BULWARK_ASSIGN_OR_RETURN(auto key, ctx.backends.registry->CreateKey(call.Param("name")));
  RecordAudit(ctx, call, kServiceWide, AuditOperation::kCreateKey, {}, "",
              {{"name", call.Param("name")}, {"created_key_id", KeyIdOf(key)}});
  Reply reply;
  reply.status = 201;
  reply.body = {{"principal", call.Param("name")}, {"key_id", KeyIdOf(key)}, {"api_key", key}};
  return reply;
}

absl::StatusOr<Reply> RevokeKey(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(NoQuery(call));
  BULWARK_RETURN_IF_ERROR(NoBody(call));
  const std::string_view key_id = call.Param("key_id");
  if (key_id == call.caller->key_id) {
    return ApiError(absl::StatusCode::kFailedPrecondition, "conflict",
                    "this request is authenticated with that key; revoke it with another key");
  }
  BULWARK_RETURN_IF_ERROR(ctx.backends.registry->RevokeKey(key_id));
  ctx.credentials->Clear();  // effective for the very next request
  RecordAudit(ctx, call, kServiceWide, AuditOperation::kRevokeKey, {}, "", {{"revoked_key_id", key_id}});
  Reply reply;
  reply.body = {{"key_id", key_id}, {"revoked", true}};
  return reply;
}

absl::StatusOr<Reply> RotateSigningKey(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(NoQuery(call));
  BULWARK_RETURN_IF_ERROR(NoBody(call));
  BULWARK_ASSIGN_OR_RETURN(auto id, ctx.backends.store->RotateSigningKey());
  RecordAudit(ctx, call, kServiceWide, AuditOperation::kRotateSigningKey, {}, "", {{"signing_key_id", id}});
  Reply reply;
  reply.body = {{"key_id", id}};
  return reply;
}

absl::StatusOr<Reply> Verify(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(NoQuery(call));
  BULWARK_RETURN_IF_ERROR(NoBody(call));
  BULWARK_ASSIGN_OR_RETURN(auto report, ctx.backends.store->Verify());
  Reply reply;
  reply.body = ToJson(report);
  if (ctx.backends.registry != nullptr) {  // principals and keys: their rows are signed too
    BULWARK_ASSIGN_OR_RETURN(auto access, ctx.backends.registry->Verify());
    reply.body["access"] = ToJson(access);
    reply.body["ok"] = reply.body["ok"].get<bool>() && access.ok();
  }
  if (ctx.backends.gates != nullptr) {  // the query gates' signed policies
    BULWARK_ASSIGN_OR_RETURN(auto problems, ctx.backends.gates->Verify());
    reply.body["gates"] = {{"problems", problems}, {"ok", problems.empty()}};
    reply.body["ok"] = reply.body["ok"].get<bool>() && problems.empty();
  }
  // Recorded before the audit flush below, so the chain check covers this very record.
  RecordAudit(ctx, call, kServiceWide, AuditOperation::kVerify, {}, "",
              {{"store_ok", reply.body["ok"].get<bool>()}});
  if (ctx.backends.audit != nullptr) {
    // The audit log's signed chain too, including the records of requests answered just before.
    BULWARK_RETURN_IF_ERROR(ctx.backends.audit->Flush());
    BULWARK_ASSIGN_OR_RETURN(auto audit, ctx.backends.audit->Verify());
    reply.body["audit"] = ToJson(audit);
    reply.body["ok"] = reply.body["ok"].get<bool>() && audit.ok();
  }
  return reply;
}

absl::StatusOr<Reply> Audit(ServiceContext& ctx, const Call& call) {
  BULWARK_RETURN_IF_ERROR(RequireAdmin(*call.caller));
  BULWARK_ASSIGN_OR_RETURN(auto query, ParseAuditQuery(call.query, ctx.limits));
  const Principal& caller = call.caller->principal;
  if (!HoldsAllNamespaces(caller)) {
    // A namespace-scoped admin reads the audit of one granted namespace at a time.
    if (!query.name_space) {
      return ApiError(absl::StatusCode::kInvalidArgument, "missing_field",
                      "query parameter \"namespace\" is required unless the key holds the \"*\" grant");
    }
    if (!caller.CanRead(*query.name_space)) return NamespaceNotFound();
  }
  if (ctx.backends.audit == nullptr) return absl::UnavailableError("the audit log is not open");
  BULWARK_RETURN_IF_ERROR(ctx.backends.audit->Flush());  // read your own writes
  BULWARK_ASSIGN_OR_RETURN(auto records, ctx.backends.audit->Query(query));
  nlohmann::json out = nlohmann::json::array();
  for (const AuditRecord& r : records) out.push_back(ToJson(r));
  Reply reply;
  reply.body = {{"records", std::move(out)}};
  return reply;
}

}  // namespace

void AddAdminRoutes(ServiceContext& ctx, std::vector<RouteSpec>* routes) {
  // Every /v1/admin route needs a service admin; the check wraps the handler.
  auto admin = [&ctx](absl::StatusOr<Reply> (*fn)(ServiceContext&, const Call&)) {
    return [&ctx, fn](const Call& call) -> absl::StatusOr<Reply> {
      BULWARK_RETURN_IF_ERROR(RequireServiceAdmin(*call.caller));
      return fn(ctx, call);
    };
  };
  routes->push_back({"GET", "/v1/admin/principals", Access::kAuthenticated, admin(ListPrincipals)});
  routes->push_back({"POST", "/v1/admin/principals", Access::kAuthenticated, admin(CreatePrincipal)});
  routes->push_back({"GET", "/v1/admin/principals/{name}", Access::kAuthenticated, admin(GetPrincipal)});
  routes->push_back(
      {"POST", "/v1/admin/principals/{name}/revoke", Access::kAuthenticated, admin(RevokePrincipal)});
  routes->push_back({"GET", "/v1/admin/principals/{name}/keys", Access::kAuthenticated, admin(ListKeys)});
  routes->push_back({"POST", "/v1/admin/principals/{name}/keys", Access::kAuthenticated, admin(CreateKey)});
  routes->push_back({"POST", "/v1/admin/keys/{key_id}/revoke", Access::kAuthenticated, admin(RevokeKey)});
  routes->push_back(
      {"POST", "/v1/admin/signing-keys/rotate", Access::kAuthenticated, admin(RotateSigningKey)});
  routes->push_back(
      {"POST", "/v1/admin/verify", Access::kAuthenticated, admin(Verify), /*needs_audit=*/false});
  routes->push_back({"GET", "/v1/audit", Access::kAuthenticated,
                     [&ctx](const Call& call) { return Audit(ctx, call); }, /*needs_audit=*/false});
}

}  // namespace bulwark::server

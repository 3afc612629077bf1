// PrincipalRegistry: who may call the service, and what they may touch (DESIGN 4.9).
//
// A principal has a role and a set of namespace grants. API keys belong to a principal; a key is
// 256 random bits shown once at creation and stored only as its SHA-256 hash. Keys have the form
//   bwk_<key_id>_<secret>      key_id: 16 lowercase hex chars (public, for lookup and revocation)
//                              secret: 64 lowercase hex chars (256 bits from the Env's CSPRNG)
// Authentication looks the key up by key_id and compares SHA-256(secret) in constant time.
//
// Persistence: tables `principals` and `api_keys` in the store's SQLite file (its own connection;
// WAL allows it beside the entry backend). Thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include "bulwark/env.h"

namespace bulwark {

enum class Role { kReader, kWriter, kAdmin };
std::string_view ToString(Role role);
std::optional<Role> ParseRole(std::string_view name);  // "reader" | "writer" | "admin"

struct Principal {
  std::string name;                     // 1-64 chars of [A-Za-z0-9_.@:-]
  Role role = Role::kReader;
  std::vector<std::string> namespaces;  // granted namespaces; "*" grants all
  bool revoked = false;
  int64_t created_at_us = 0;

  bool CanRead(std::string_view name_space) const;   // any role, namespace granted, not revoked
  bool CanWrite(std::string_view name_space) const;  // writer or admin, namespace granted
  bool IsAdmin() const { return !revoked && role == Role::kAdmin; }
};

struct ApiKeyInfo {
  std::string key_id;
  std::string principal;
  int64_t created_at_us = 0;
  bool revoked = false;
};

class PrincipalRegistry {
 public:
  // Opens (creating the tables if needed) the registry in the SQLite database at `db_path`.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PrincipalRegistry>> Open(const std::filesystem::path& db_path,
                                                                               Env* env);
  ~PrincipalRegistry();

  // AlreadyExists if the name is taken; InvalidArgument for a bad name or namespace grant.
  [[nodiscard]] absl::Status AddPrincipal(const Principal& principal);
  // NotFound if absent. Revoking a principal revokes all its keys.
  [[nodiscard]] absl::Status RevokePrincipal(std::string_view name);
  [[nodiscard]] absl::StatusOr<Principal> GetPrincipal(std::string_view name);
  [[nodiscard]] absl::StatusOr<std::vector<Principal>> ListPrincipals();
  // True if any non-revoked admin principal with a non-revoked key exists.
  [[nodiscard]] absl::StatusOr<bool> HasActiveAdmin();

  // Creates a key for an existing, non-revoked principal and returns the full key string. This is
  // the only time the secret exists outside the caller. NotFound / FailedPrecondition otherwise.
  [[nodiscard]] absl::StatusOr<std::string> CreateKey(std::string_view principal);
  [[nodiscard]] absl::Status RevokeKey(std::string_view key_id);
  [[nodiscard]] absl::StatusOr<std::vector<ApiKeyInfo>> ListKeys(std::string_view principal);

  // The principal owning `api_key`. Unauthenticated for a malformed, unknown, revoked key or
  // revoked principal (one message for all, so callers learn nothing about which).
  [[nodiscard]] absl::StatusOr<Principal> Authenticate(std::string_view api_key);

 private:
  class Impl;
  explicit PrincipalRegistry(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace bulwark

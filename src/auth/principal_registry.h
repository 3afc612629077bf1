// PrincipalRegistry: who may call the service, and what they may touch (DESIGN 4.9).
//
// A principal has a role and a set of namespace grants. API keys belong to a principal; a key is
// 256 random bits shown once at creation and stored only as its SHA-256 hash. Keys have the form
//   bwk_<key_id>_<secret>      key_id: 16 lowercase hex chars (public, for lookup and revocation)
//                              secret: 64 lowercase hex chars (256 bits from the Env's CSPRNG)
// Authentication looks the key up by key_id and compares SHA-256(secret) in constant time.
//
// Persistence: an AccessRepository (tables `principals` and `api_keys` in the store's SQLite file).
// Every row carries an HMAC tag under the store's keyring (auth/access_signer.h): a row edited,
// inserted or re-keyed outside the registry fails authentication and is reported by Verify.
// Thread-safe. Format and policy: doc/auth.md.
//
// Every method may also return Unavailable (database busy or I/O error) or DataLoss (a stored row
// that does not decode); those messages never contain a key or a secret.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bulwark/env.h"

namespace bulwark {

enum class Role { kReader, kWriter, kAdmin };
std::string_view ToString(Role role);
std::optional<Role> ParseRole(std::string_view name);  // "reader" | "writer" | "admin"

struct Principal {
  std::string name;  // 1-64 chars of [A-Za-z0-9_.@:-]
  Role role = Role::kReader;
  std::vector<std::string> namespaces;  // granted namespaces; "*" grants all
  bool revoked = false;
  int64_t created_at_us = 0;

  // These answer from the grant list alone: whether `name_space` exists plays no part.
  bool CanRead(std::string_view name_space) const;   // any role, namespace granted, not revoked
  bool CanWrite(std::string_view name_space) const;  // writer or admin, namespace granted, not revoked
  bool IsAdmin() const { return !revoked && role == Role::kAdmin; }
};

struct ApiKeyInfo {
  std::string key_id;
  std::string principal;
  int64_t created_at_us = 0;
  bool revoked = false;
};

// What Verify found: every principal and key row whose tag fails or that does not decode.
struct AccessVerifyReport {
  size_t principals = 0;
  size_t keys = 0;
  std::vector<std::string> problems;  // one message per bad row, naming it
  bool ok() const { return problems.empty(); }
};
// {"principals": N, "keys": N, "problems": [...], "ok": bool}
nlohmann::json ToJson(const AccessVerifyReport& report);

class PrincipalRegistry {
 public:
  // Opens the registry over the access repository (storage/storage_opener.h) of the existing
  // store whose database file is `db_path` (the store is its directory), signing with the keyring at
  // `keyring_path` (default: the store's, beside the database). A store made before rows were
  // signed is upgraded: its rows are signed once, now. `env` (not owned, must outlive the
  // registry) supplies the clock and the key randomness. InvalidArgument for a null env; NotFound
  // if there is no file at `db_path` or no keyring; Unavailable if it cannot be opened; DataLoss
  // if it is not an SQLite database or the keyring is damaged.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PrincipalRegistry>> Open(
      const std::filesystem::path& db_path, Env* env, std::filesystem::path keyring_path = {});
  ~PrincipalRegistry();

  // Adds an active principal. Grants are stored sorted and without duplicates; created_at_us is
  // stamped from the Env (the argument's value is ignored). AlreadyExists if the name is taken
  // (also by a revoked principal: names are never reused, so audit records stay unambiguous);
  // InvalidArgument for a bad name or namespace grant, more than 1024 grants, or revoked == true.
  [[nodiscard]] absl::Status AddPrincipal(const Principal& principal);
  // NotFound if absent. Revoking a principal revokes all its keys (one transaction); revoking
  // again is OK. There is no un-revoke.
  [[nodiscard]] absl::Status RevokePrincipal(std::string_view name);
  // NotFound if absent; DataLoss if its row fails its tag.
  [[nodiscard]] absl::StatusOr<Principal> GetPrincipal(std::string_view name);
  // All principals, revoked ones included, ordered by name. DataLoss if any row fails its tag.
  [[nodiscard]] absl::StatusOr<std::vector<Principal>> ListPrincipals();
  // True if any non-revoked admin principal with a non-revoked key exists.
  [[nodiscard]] absl::StatusOr<bool> HasActiveAdmin();

  // Creates a key for an existing, non-revoked principal and returns the full key string. This is
  // the only time the secret exists outside the caller. NotFound / FailedPrecondition otherwise.
  [[nodiscard]] absl::StatusOr<std::string> CreateKey(std::string_view principal);
  // Revokes one key by its key_id (the 16 hex chars, not the whole key). NotFound if absent;
  // revoking again is OK.
  [[nodiscard]] absl::Status RevokeKey(std::string_view key_id);
  // The keys of `principal` (never their secrets or hashes), oldest first, revoked ones included.
  // NotFound if the principal is absent.
  [[nodiscard]] absl::StatusOr<std::vector<ApiKeyInfo>> ListKeys(std::string_view principal);

  // Checks every principal and key row's tag (`bulwark verify`, POST /v1/admin/verify).
  [[nodiscard]] absl::StatusOr<AccessVerifyReport> Verify();

  // The principal owning `api_key`. Unauthenticated for a malformed, unknown, revoked key or
  // revoked principal, or a key or principal row that fails its tag, all with the message
  // "invalid API key", so callers learn nothing about which. A storage failure is Unavailable,
  // never OK.
  [[nodiscard]] absl::StatusOr<Principal> Authenticate(std::string_view api_key);

 private:
  class Impl;
  explicit PrincipalRegistry(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace bulwark

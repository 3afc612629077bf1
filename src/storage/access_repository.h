// AccessRepository: the stored rows of the access-control tables — principals with their role and
// namespace grants, and API keys — as the bytes the principal registry signs and checks
// (auth/principal_registry.h, auth/access_signer.h). It keeps rows and knows nothing of roles,
// grant syntax, key formats or tags: a row it returns may have been edited by anyone with write
// access to the database, which is why every row carries a tag the registry verifies.
//
// Contract for every implementation (SQLite here; a PostgreSQL one must give the same):
// - InsertPrincipal / InsertKey are atomic and refuse a taken name / key id with AlreadyExists
//   (names and key ids are never reused, revoked rows included).
// - Update writes all of its rows in one transaction, or none (NotFound if a row is absent).
// - Reads see committed rows only; lists are ordered as documented.
// Every method may also return Unavailable (busy, I/O) or DataLoss (a row that does not decode).
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bulwark {

struct PrincipalRow {
  std::string name;
  std::string role;    // as the registry spells it
  std::string grants;  // JSON array of namespace grants, sorted
  bool revoked = false;
  int64_t created_at_us = 0;
  uint32_t sign_key_id = 0;  // 0 with an empty tag: written before rows were signed
  std::string tag;           // HMAC-SHA256, 32 raw bytes
};

struct ApiKeyRow {
  std::string key_id;  // 16 lowercase hex chars
  std::string principal;
  std::string secret_sha256;  // hex of SHA-256(secret)
  int64_t created_at_us = 0;
  bool revoked = false;
  uint32_t sign_key_id = 0;
  std::string tag;
};

class AccessRepository {
 public:
  virtual ~AccessRepository() = default;

  [[nodiscard]] virtual absl::Status InsertPrincipal(const PrincipalRow& row) = 0;
  // nullopt if there is no principal `name`.
  [[nodiscard]] virtual absl::StatusOr<std::optional<PrincipalRow>> FindPrincipal(std::string_view name) = 0;
  // Every principal, revoked ones included, ordered by name.
  [[nodiscard]] virtual absl::StatusOr<std::vector<PrincipalRow>> ListPrincipals() = 0;

  [[nodiscard]] virtual absl::Status InsertKey(const ApiKeyRow& row) = 0;
  // nullopt if there is no key `key_id`.
  [[nodiscard]] virtual absl::StatusOr<std::optional<ApiKeyRow>> FindKey(std::string_view key_id) = 0;
  // The keys of `principal` (every key when it is empty), oldest first (created_at_us, key_id).
  [[nodiscard]] virtual absl::StatusOr<std::vector<ApiKeyRow>> ListKeys(std::string_view principal) = 0;

  // Replaces the stored rows of these principals (matched by name) and keys (by key id) with
  // these values, in one transaction.
  [[nodiscard]] virtual absl::Status Update(const std::vector<PrincipalRow>& principals,
                                            const std::vector<ApiKeyRow>& keys) = 0;

  // True while the store holds rows made before rows were signed (an upgraded store) that the
  // registry has not yet signed: it signs them once (Update) and then calls FinishSigningUpgrade,
  // after which this is false in every process (afterwards an unsigned row is a forged one).
  virtual bool upgraded_from_unsigned() const = 0;
  // Records that the rows of an upgraded store are signed (durably; idempotent).
  [[nodiscard]] virtual absl::Status FinishSigningUpgrade() = 0;
};

}  // namespace bulwark

// PrincipalRegistry implementation: two SQLite tables beside the entry tables in the store's
// database file, reached through a connection of our own that mu_ serializes. Keys are parsed
// strictly and every authentication failure returns the same message, so a caller learns nothing
// about why a key was refused. Key format and hashing are written down in doc/auth.md.
#include "auth/principal_registry.h"

#include <absl/strings/str_cat.h>
#include <openssl/crypto.h>
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <nlohmann/json.hpp>

#include "core/hex.h"
#include "core/strings.h"
#include "core/text_validation.h"
#include "storage/sqlite_util.h"

namespace bulwark {
namespace {

constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS principals(
  name          TEXT PRIMARY KEY,
  role          TEXT NOT NULL,
  namespaces    TEXT NOT NULL,
  revoked       INTEGER NOT NULL DEFAULT 0,
  created_at_us INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS api_keys(
  key_id        TEXT PRIMARY KEY,
  principal     TEXT NOT NULL,
  secret_sha256 TEXT NOT NULL,
  created_at_us INTEGER NOT NULL,
  revoked       INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS api_keys_by_principal ON api_keys(principal);
)sql";

constexpr std::string_view kKeyPrefix = "bwk_";
constexpr size_t kKeyIdBytes = 8;    // 16 hex chars
constexpr size_t kSecretBytes = 32;  // 64 hex chars, 256 bits
constexpr size_t kKeyIdHexLen = 2 * kKeyIdBytes;
constexpr size_t kSecretHexLen = 2 * kSecretBytes;
constexpr size_t kKeyLen = kKeyPrefix.size() + kKeyIdHexLen + 1 + kSecretHexLen;  // 85
constexpr size_t kMaxGrants = 1024;
constexpr int kKeyIdAttempts = 4;  // a 64-bit id collides with probability ~n/2^64; retry anyway

// The one message every authentication failure carries.
constexpr char kInvalidKey[] = "invalid API key";

absl::Status InvalidKey() { return absl::UnauthenticatedError(kInvalidKey); }

bool IsLowerHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

absl::Status ValidatePrincipalName(std::string_view name) {
  auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '@' || c == ':' || c == '-';
  };
  if (name.empty() || name.size() > 64)
    return absl::InvalidArgumentError("principal name must be 1 to 64 characters");
  if (!std::all_of(name.begin(), name.end(), allowed)) {
    return absl::InvalidArgumentError(
        "principal name may contain only letters, digits, '_', '.', '@', ':' and '-'");
  }
  return absl::OkStatus();
}

// Checks every grant and returns them sorted without duplicates.
absl::StatusOr<std::vector<std::string>> NormalizeGrants(const std::vector<std::string>& grants) {
  if (grants.size() > kMaxGrants) {
    return absl::InvalidArgumentError(absl::StrCat("at most ", kMaxGrants, " namespace grants"));
  }
  for (const std::string& grant : grants) {
    if (grant == "*") continue;
    if (absl::Status s = ValidateNamespace(grant); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("namespace grant: ", s.message()));
    }
  }
  std::vector<std::string> sorted = grants;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  return sorted;
}

constexpr char kPrincipalColumns[] = "name, role, namespaces, revoked, created_at_us";

// Decodes kPrincipalColumns starting at column `first`. DataLoss if the stored row does not
// decode (an unknown role, or grants that are not a JSON array of valid grants).
absl::StatusOr<Principal> DecodePrincipal(const Statement& st, int first) {
  Principal p;
  p.name = st.Text(first);
  std::optional<Role> role = ParseRole(st.Text(first + 1));
  if (!role) return absl::DataLossError(absl::StrCat("principal ", p.name, " has an unknown role"));
  p.role = *role;
  nlohmann::json grants = nlohmann::json::parse(st.Text(first + 2), nullptr, /*allow_exceptions=*/false);
  if (!grants.is_array()) {
    return absl::DataLossError(absl::StrCat("principal ", p.name, " has unreadable namespace grants"));
  }
  for (const nlohmann::json& g : grants) {
    if (!g.is_string()) {
      return absl::DataLossError(absl::StrCat("principal ", p.name, " has unreadable namespace grants"));
    }
    p.namespaces.push_back(g.get<std::string>());
  }
  if (!NormalizeGrants(p.namespaces).ok()) {
    return absl::DataLossError(absl::StrCat("principal ", p.name, " has an invalid namespace grant"));
  }
  p.revoked = st.Int(first + 3) != 0;
  p.created_at_us = st.Int(first + 4);
  return p;
}

bool Granted(const std::vector<std::string>& grants, std::string_view name_space) {
  return std::any_of(grants.begin(), grants.end(),
                     [&](const std::string& g) { return g == "*" || g == name_space; });
}

}  // namespace

std::string_view ToString(Role role) {
  switch (role) {
    case Role::kReader:
      return "reader";
    case Role::kWriter:
      return "writer";
    case Role::kAdmin:
      return "admin";
  }
  return "reader";
}

std::optional<Role> ParseRole(std::string_view name) {
  if (name == "reader") return Role::kReader;
  if (name == "writer") return Role::kWriter;
  if (name == "admin") return Role::kAdmin;
  return std::nullopt;
}

bool Principal::CanRead(std::string_view name_space) const {
  return !revoked && Granted(namespaces, name_space);
}

bool Principal::CanWrite(std::string_view name_space) const {
  return !revoked && (role == Role::kWriter || role == Role::kAdmin) && Granted(namespaces, name_space);
}

class PrincipalRegistry::Impl {
 public:
  Impl(sqlite3* db, Env* env) : db_(db), env_(env) {}
  ~Impl() { sqlite3_close(db_); }

  std::mutex mu_;  // serializes all use of db_
  sqlite3* db_;    // guarded by mu_
  Env* const env_;
};

PrincipalRegistry::PrincipalRegistry(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PrincipalRegistry::~PrincipalRegistry() = default;

absl::StatusOr<std::unique_ptr<PrincipalRegistry>> PrincipalRegistry::Open(
    const std::filesystem::path& db_path, Env* env) {
  if (env == nullptr) return absl::InvalidArgumentError("PrincipalRegistry needs an Env");
  auto opened = OpenExistingDatabase(db_path, kSchema);
  if (!opened.ok()) return opened.status();
  sqlite3* db = *opened;
  auto impl = std::make_unique<Impl>(db, env);
  return std::unique_ptr<PrincipalRegistry>(new PrincipalRegistry(std::move(impl)));
}

absl::Status PrincipalRegistry::AddPrincipal(const Principal& principal) {
  if (auto s = ValidatePrincipalName(principal.name); !s.ok()) return s;
  if (principal.revoked) return absl::InvalidArgumentError("a new principal cannot be revoked");
  absl::StatusOr<std::vector<std::string>> grants = NormalizeGrants(principal.namespaces);
  if (!grants.ok()) return grants.status();
  std::lock_guard<std::mutex> lock(impl_->mu_);
  Statement st(
      impl_->db_,
      "INSERT INTO principals(name, role, namespaces, revoked, created_at_us) VALUES(?, ?, ?, 0, ?)");
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, principal.name);
  st.Bind(2, ToString(principal.role));
  st.Bind(3, nlohmann::json(*grants).dump());
  st.Bind(4, impl_->env_->NowMicros());
  if (st.Step() == SQLITE_DONE) return absl::OkStatus();
  if ((sqlite3_errcode(impl_->db_) & 0xff) == SQLITE_CONSTRAINT) {
    return absl::AlreadyExistsError(absl::StrCat("principal ", principal.name, " already exists"));
  }
  return SqliteError(impl_->db_, "add principal");
}

absl::Status PrincipalRegistry::RevokePrincipal(std::string_view name) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  sqlite3* db = impl_->db_;
  Transaction txn(db);
  if (!txn.status().ok()) return txn.status();
  Statement principal(db, "UPDATE principals SET revoked = 1 WHERE name = ?");
  if (auto s = principal.status(); !s.ok()) return s;
  principal.Bind(1, name);
  if (auto s = principal.Run("revoke principal"); !s.ok()) return s;
  if (sqlite3_changes(db) == 0) return absl::NotFoundError(absl::StrCat("no principal ", ToAbsl(name)));
  Statement keys(db, "UPDATE api_keys SET revoked = 1 WHERE principal = ?");
  if (auto s = keys.status(); !s.ok()) return s;
  keys.Bind(1, name);
  if (auto s = keys.Run("revoke keys"); !s.ok()) return s;
  return txn.Commit();
}

absl::StatusOr<Principal> PrincipalRegistry::GetPrincipal(std::string_view name) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  Statement st(impl_->db_, absl::StrCat("SELECT ", kPrincipalColumns, " FROM principals WHERE name = ?"));
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, name);
  int rc = st.Step();
  if (rc == SQLITE_ROW) return DecodePrincipal(st, 0);
  if (rc == SQLITE_DONE) return absl::NotFoundError(absl::StrCat("no principal ", ToAbsl(name)));
  return SqliteError(impl_->db_, "read principal");
}

absl::StatusOr<std::vector<Principal>> PrincipalRegistry::ListPrincipals() {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  Statement st(impl_->db_, absl::StrCat("SELECT ", kPrincipalColumns, " FROM principals ORDER BY name"));
  if (auto s = st.status(); !s.ok()) return s;
  std::vector<Principal> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    absl::StatusOr<Principal> p = DecodePrincipal(st, 0);
    if (!p.ok()) return p.status();
    out.push_back(*std::move(p));
  }
  if (rc != SQLITE_DONE) return SqliteError(impl_->db_, "list principals");
  return out;
}

absl::StatusOr<bool> PrincipalRegistry::HasActiveAdmin() {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  Statement st(impl_->db_,
               "SELECT EXISTS(SELECT 1 FROM principals p JOIN api_keys k ON k.principal = p.name "
               "WHERE p.role = 'admin' AND p.revoked = 0 AND k.revoked = 0)");
  if (auto s = st.status(); !s.ok()) return s;
  if (st.Step() != SQLITE_ROW) return SqliteError(impl_->db_, "look for an admin");
  return st.Int(0) != 0;
}

absl::StatusOr<std::string> PrincipalRegistry::CreateKey(std::string_view principal) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  sqlite3* db = impl_->db_;
  Transaction txn(db);
  if (!txn.status().ok()) return txn.status();
  {
    Statement st(db, "SELECT revoked FROM principals WHERE name = ?");
    if (auto s = st.status(); !s.ok()) return s;
    st.Bind(1, principal);
    int rc = st.Step();
    if (rc == SQLITE_DONE) return absl::NotFoundError(absl::StrCat("no principal ", ToAbsl(principal)));
    if (rc != SQLITE_ROW) return SqliteError(db, "read principal");
    if (st.Int(0) != 0) {
      return absl::FailedPreconditionError(absl::StrCat("principal ", ToAbsl(principal), " is revoked"));
    }
  }
  std::array<uint8_t, kKeyIdBytes> id_bytes;
  std::array<uint8_t, kSecretBytes> secret_bytes;
  for (int attempt = 0; attempt < kKeyIdAttempts; ++attempt) {
    impl_->env_->RandomBytes(id_bytes);
    impl_->env_->RandomBytes(secret_bytes);
    std::string key_id = HexEncode(id_bytes);
    std::string secret = HexEncode(secret_bytes);
    OPENSSL_cleanse(secret_bytes.data(), secret_bytes.size());
    Statement st(db,
                 "INSERT INTO api_keys(key_id, principal, secret_sha256, created_at_us, revoked) "
                 "VALUES(?, ?, ?, ?, 0)");
    if (auto s = st.status(); !s.ok()) return s;
    st.Bind(1, key_id);
    st.Bind(2, principal);
    st.Bind(3, Sha256Hex(secret));
    st.Bind(4, impl_->env_->NowMicros());
    int rc = st.Step();
    if (rc == SQLITE_DONE) {
      if (auto s = txn.Commit(); !s.ok()) {
        OPENSSL_cleanse(secret.data(), secret.size());
        return s;
      }
      std::string key = absl::StrCat(ToAbsl(kKeyPrefix), key_id, "_", secret);
      OPENSSL_cleanse(secret.data(), secret.size());
      return key;
    }
    OPENSSL_cleanse(secret.data(), secret.size());
    if ((sqlite3_errcode(db) & 0xff) != SQLITE_CONSTRAINT) return SqliteError(db, "create key");
    // The key id is taken: draw another.
  }
  return absl::InternalError("could not draw an unused API key id; is the random source broken?");
}

absl::Status PrincipalRegistry::RevokeKey(std::string_view key_id) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  Statement st(impl_->db_, "UPDATE api_keys SET revoked = 1 WHERE key_id = ?");
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, key_id);
  if (auto s = st.Run("revoke key"); !s.ok()) return s;
  if (sqlite3_changes(impl_->db_) == 0)
    return absl::NotFoundError(absl::StrCat("no API key ", ToAbsl(key_id)));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ApiKeyInfo>> PrincipalRegistry::ListKeys(std::string_view principal) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  sqlite3* db = impl_->db_;
  {
    Statement st(db, "SELECT 1 FROM principals WHERE name = ?");
    if (auto s = st.status(); !s.ok()) return s;
    st.Bind(1, principal);
    int rc = st.Step();
    if (rc == SQLITE_DONE) return absl::NotFoundError(absl::StrCat("no principal ", ToAbsl(principal)));
    if (rc != SQLITE_ROW) return SqliteError(db, "read principal");
  }
  Statement st(db,
               "SELECT key_id, principal, created_at_us, revoked FROM api_keys WHERE principal = ? "
               "ORDER BY created_at_us, key_id");
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, principal);
  std::vector<ApiKeyInfo> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    out.push_back(ApiKeyInfo{st.Text(0), st.Text(1), st.Int(2), st.Int(3) != 0});
  }
  if (rc != SQLITE_DONE) return SqliteError(db, "list keys");
  return out;
}

absl::StatusOr<Principal> PrincipalRegistry::Authenticate(std::string_view api_key) {
  // Strict parse: bwk_ + 16 lowercase hex + _ + 64 lowercase hex, nothing else.
  if (api_key.size() != kKeyLen || api_key.substr(0, kKeyPrefix.size()) != kKeyPrefix) return InvalidKey();
  std::string_view key_id = api_key.substr(kKeyPrefix.size(), kKeyIdHexLen);
  std::string_view secret = api_key.substr(kKeyPrefix.size() + kKeyIdHexLen + 1);
  if (api_key[kKeyPrefix.size() + kKeyIdHexLen] != '_' || !IsLowerHex(key_id) || !IsLowerHex(secret)) {
    return InvalidKey();
  }
  const std::string presented_hash = Sha256Hex(secret);

  std::lock_guard<std::mutex> lock(impl_->mu_);
  Statement st(impl_->db_,
               absl::StrCat("SELECT k.secret_sha256, k.revoked, p.name, p.role, p.namespaces, p.revoked, "
                            "p.created_at_us FROM api_keys k JOIN principals p ON p.name = k.principal "
                            "WHERE k.key_id = ?"));
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, key_id);
  int rc = st.Step();
  if (rc == SQLITE_DONE) return InvalidKey();
  if (rc != SQLITE_ROW) return SqliteError(impl_->db_, "look up API key");
  const std::string stored_hash = st.Text(0);
  if (stored_hash.size() != presented_hash.size() ||
      CRYPTO_memcmp(stored_hash.data(), presented_hash.data(), presented_hash.size()) != 0) {
    return InvalidKey();
  }
  if (st.Int(1) != 0) return InvalidKey();
  // A principal row that does not decode fails closed, with the same message.
  absl::StatusOr<Principal> principal = DecodePrincipal(st, 2);
  if (!principal.ok() || principal->revoked) return InvalidKey();
  return principal;
}

}  // namespace bulwark

// PrincipalRegistry implementation: the policy (names, grants, key format and hashing) over an
// AccessRepository (storage/access_repository.h) whose rows it signs and checks with an
// AccessSigner. Keys are parsed strictly and every authentication failure returns the same
// message, so a caller learns nothing about why a key was refused. Format: doc/auth.md.
#include "auth/principal_registry.h"

#include <absl/strings/str_cat.h>
#include <openssl/crypto.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <nlohmann/json.hpp>

#include "auth/access_signer.h"
#include "core/hex.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "core/text_validation.h"
#include "storage/storage_opener.h"
#include "storage/store_layout.h"

namespace bulwark {
namespace {

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

// Decodes a verified row. DataLoss if it does not decode (an unknown role, or grants that are not
// a JSON array of valid grants): possible only for a row signed by a faulty writer.
absl::StatusOr<Principal> DecodePrincipal(const PrincipalRow& row) {
  Principal p;
  p.name = row.name;
  std::optional<Role> role = ParseRole(row.role);
  if (!role) return absl::DataLossError(absl::StrCat("principal ", p.name, " has an unknown role"));
  p.role = *role;
  nlohmann::json grants = nlohmann::json::parse(row.grants, nullptr, /*allow_exceptions=*/false);
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
  p.revoked = row.revoked;
  p.created_at_us = row.created_at_us;
  return p;
}

ApiKeyInfo KeyInfoOf(const ApiKeyRow& row) {
  return ApiKeyInfo{row.key_id, row.principal, row.created_at_us, row.revoked};
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
  Impl(std::unique_ptr<AccessRepository> rows, std::unique_ptr<RowSigner> signer, Env* env)
      : rows_(std::move(rows)), signer_(std::move(signer)), env_(env) {}

  // The verified principal `name`: NotFound if absent, DataLoss if its row fails its tag.
  absl::StatusOr<Principal> Load(std::string_view name) {
    BULWARK_ASSIGN_OR_RETURN(std::optional<PrincipalRow> row, rows_->FindPrincipal(name));
    if (!row) return absl::NotFoundError(absl::StrCat("no principal ", ToAbsl(name)));
    BULWARK_RETURN_IF_ERROR(VerifyRow(*signer_, *row));
    return DecodePrincipal(*row);
  }

  // Signs every row of a store made before rows were signed (once: at the upgrade).
  absl::Status AdoptUnsignedRows() {
    BULWARK_ASSIGN_OR_RETURN(std::vector<PrincipalRow> principals, rows_->ListPrincipals());
    BULWARK_ASSIGN_OR_RETURN(std::vector<ApiKeyRow> keys, rows_->ListKeys(""));
    for (PrincipalRow& row : principals) SignRow(*signer_, &row);
    for (ApiKeyRow& row : keys) SignRow(*signer_, &row);
    BULWARK_RETURN_IF_ERROR(rows_->Update(principals, keys));
    return rows_->FinishSigningUpgrade();
  }

  std::unique_ptr<AccessRepository> rows_;
  std::unique_ptr<RowSigner> signer_;
  Env* const env_;
};

PrincipalRegistry::PrincipalRegistry(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PrincipalRegistry::~PrincipalRegistry() = default;

absl::StatusOr<std::unique_ptr<PrincipalRegistry>> PrincipalRegistry::Open(
    const std::filesystem::path& db_path, Env* env, std::filesystem::path keyring_path) {
  if (env == nullptr) return absl::InvalidArgumentError("PrincipalRegistry needs an Env");
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<AccessRepository> rows,
                           OpenAccessRepository(StoreLayout::ForDatabase(db_path).dir().string()));
  if (keyring_path.empty()) keyring_path = StoreLayout::ForDatabase(db_path).keyring();
  auto signer = RowSigner::Load(keyring_path);
  if (!signer.ok()) {
    return absl::Status(signer.status().code(), absl::StrCat("principal registry needs the store's keyring: ",
                                                             signer.status().message()));
  }
  auto impl = std::make_unique<Impl>(std::move(rows), *std::move(signer), env);
  if (impl->rows_->upgraded_from_unsigned()) BULWARK_RETURN_IF_ERROR(impl->AdoptUnsignedRows());
  return std::unique_ptr<PrincipalRegistry>(new PrincipalRegistry(std::move(impl)));
}

absl::Status PrincipalRegistry::AddPrincipal(const Principal& principal) {
  BULWARK_RETURN_IF_ERROR(ValidatePrincipalName(principal.name));
  if (principal.revoked) return absl::InvalidArgumentError("a new principal cannot be revoked");
  BULWARK_ASSIGN_OR_RETURN(std::vector<std::string> grants, NormalizeGrants(principal.namespaces));
  PrincipalRow row{principal.name, std::string(ToString(principal.role)), nlohmann::json(grants).dump(),
                   false, impl_->env_->NowMicros()};
  SignRow(*impl_->signer_, &row);
  absl::Status s = impl_->rows_->InsertPrincipal(row);
  if (s.code() == absl::StatusCode::kAlreadyExists) {
    return absl::AlreadyExistsError(absl::StrCat("principal ", principal.name, " already exists"));
  }
  return s;
}

absl::Status PrincipalRegistry::RevokePrincipal(std::string_view name) {
  BULWARK_ASSIGN_OR_RETURN(std::optional<PrincipalRow> row, impl_->rows_->FindPrincipal(name));
  if (!row) return absl::NotFoundError(absl::StrCat("no principal ", ToAbsl(name)));
  BULWARK_ASSIGN_OR_RETURN(std::vector<ApiKeyRow> keys, impl_->rows_->ListKeys(name));
  // Revocation only ever turns access off, so it is applied (and re-signed) even to a row whose
  // tag fails: an operator revoking a tampered principal must not be refused.
  row->revoked = true;
  SignRow(*impl_->signer_, &*row);
  for (ApiKeyRow& key : keys) {
    key.revoked = true;
    SignRow(*impl_->signer_, &key);
  }
  return impl_->rows_->Update({*row}, keys);
}

absl::StatusOr<Principal> PrincipalRegistry::GetPrincipal(std::string_view name) { return impl_->Load(name); }

absl::StatusOr<std::vector<Principal>> PrincipalRegistry::ListPrincipals() {
  BULWARK_ASSIGN_OR_RETURN(std::vector<PrincipalRow> rows, impl_->rows_->ListPrincipals());
  std::vector<Principal> out;
  for (const PrincipalRow& row : rows) {
    BULWARK_RETURN_IF_ERROR(VerifyRow(*impl_->signer_, row));
    BULWARK_ASSIGN_OR_RETURN(Principal p, DecodePrincipal(row));
    out.push_back(std::move(p));
  }
  return out;
}

absl::StatusOr<bool> PrincipalRegistry::HasActiveAdmin() {
  BULWARK_ASSIGN_OR_RETURN(std::vector<ApiKeyRow> keys, impl_->rows_->ListKeys(""));
  for (const ApiKeyRow& key : keys) {
    if (key.revoked || !VerifyRow(*impl_->signer_, key).ok()) continue;
    absl::StatusOr<Principal> owner = impl_->Load(key.principal);
    if (owner.ok() && owner->IsAdmin()) return true;
  }
  return false;
}

absl::StatusOr<std::string> PrincipalRegistry::CreateKey(std::string_view principal) {
  BULWARK_ASSIGN_OR_RETURN(Principal owner, impl_->Load(principal));
  if (owner.revoked) {
    return absl::FailedPreconditionError(absl::StrCat("principal ", ToAbsl(principal), " is revoked"));
  }
  std::array<uint8_t, kKeyIdBytes> id_bytes;
  std::array<uint8_t, kSecretBytes> secret_bytes;
  for (int attempt = 0; attempt < kKeyIdAttempts; ++attempt) {
    impl_->env_->RandomBytes(id_bytes);
    impl_->env_->RandomBytes(secret_bytes);
    ApiKeyRow row{HexEncode(id_bytes), std::string(principal), "", impl_->env_->NowMicros(), false};
    std::string secret = HexEncode(secret_bytes);
    OPENSSL_cleanse(secret_bytes.data(), secret_bytes.size());
    row.secret_sha256 = Sha256Hex(secret);
    SignRow(*impl_->signer_, &row);
    absl::Status s = impl_->rows_->InsertKey(row);
    if (s.ok()) {
      std::string key = absl::StrCat(ToAbsl(kKeyPrefix), row.key_id, "_", secret);
      OPENSSL_cleanse(secret.data(), secret.size());
      return key;
    }
    OPENSSL_cleanse(secret.data(), secret.size());
    if (s.code() != absl::StatusCode::kAlreadyExists) return s;
    // The key id is taken: draw another.
  }
  return absl::InternalError("could not draw an unused API key id; is the random source broken?");
}

absl::Status PrincipalRegistry::RevokeKey(std::string_view key_id) {
  BULWARK_ASSIGN_OR_RETURN(std::optional<ApiKeyRow> row, impl_->rows_->FindKey(key_id));
  if (!row) return absl::NotFoundError(absl::StrCat("no API key ", ToAbsl(key_id)));
  row->revoked = true;  // applied even to a row whose tag fails (see RevokePrincipal)
  SignRow(*impl_->signer_, &*row);
  return impl_->rows_->Update({}, {*row});
}

absl::StatusOr<std::vector<ApiKeyInfo>> PrincipalRegistry::ListKeys(std::string_view principal) {
  BULWARK_RETURN_IF_ERROR(impl_->Load(principal).status());
  BULWARK_ASSIGN_OR_RETURN(std::vector<ApiKeyRow> rows, impl_->rows_->ListKeys(principal));
  std::vector<ApiKeyInfo> out;
  for (const ApiKeyRow& row : rows) {
    BULWARK_RETURN_IF_ERROR(VerifyRow(*impl_->signer_, row));
    out.push_back(KeyInfoOf(row));
  }
  return out;
}

absl::StatusOr<AccessVerifyReport> PrincipalRegistry::Verify() {
  AccessVerifyReport report;
  BULWARK_ASSIGN_OR_RETURN(std::vector<PrincipalRow> principals, impl_->rows_->ListPrincipals());
  BULWARK_ASSIGN_OR_RETURN(std::vector<ApiKeyRow> keys, impl_->rows_->ListKeys(""));
  report.principals = principals.size();
  report.keys = keys.size();
  for (const PrincipalRow& row : principals) {
    absl::Status s = VerifyRow(*impl_->signer_, row);
    if (s.ok()) s = DecodePrincipal(row).status();
    if (!s.ok()) report.problems.push_back(std::string(s.message()));
  }
  for (const ApiKeyRow& row : keys) {
    if (absl::Status s = VerifyRow(*impl_->signer_, row); !s.ok())
      report.problems.push_back(std::string(s.message()));
  }
  return report;
}

nlohmann::json ToJson(const AccessVerifyReport& report) {
  return {{"principals", report.principals},
          {"keys", report.keys},
          {"problems", report.problems},
          {"ok", report.ok()}};
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
  BULWARK_ASSIGN_OR_RETURN(std::optional<ApiKeyRow> key, impl_->rows_->FindKey(key_id));
  if (!key) return InvalidKey();
  const std::string& stored_hash = key->secret_sha256;
  if (stored_hash.size() != presented_hash.size() ||
      CRYPTO_memcmp(stored_hash.data(), presented_hash.data(), presented_hash.size()) != 0) {
    return InvalidKey();
  }
  // A key or principal row that fails its tag or does not decode fails closed, with the same
  // message (verify reports which row).
  if (key->revoked || !VerifyRow(*impl_->signer_, *key).ok()) return InvalidKey();
  absl::StatusOr<Principal> principal = impl_->Load(key->principal);
  if (!principal.ok()) {
    if (principal.status().code() == absl::StatusCode::kUnavailable) return principal.status();
    return InvalidKey();
  }
  if (principal->revoked) return InvalidKey();
  return principal;
}

}  // namespace bulwark

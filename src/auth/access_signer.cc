// The access-control rows' signed encodings (see access_signer.h).
#include "auth/access_signer.h"

#include <absl/strings/str_cat.h>

#include "provenance/signer.h"

namespace bulwark {
namespace {

constexpr std::string_view kPrincipalDomain = "bulwark.principal.v1";
constexpr std::string_view kApiKeyDomain = "bulwark.api_key.v1";

}  // namespace

std::string PrincipalRowEncoding(const PrincipalRow& row, uint32_t key_id) {
  std::string out(kPrincipalDomain);
  AppendEncodingField(&out, absl::StrCat(key_id));
  AppendEncodingField(&out, row.name);
  AppendEncodingField(&out, row.role);
  AppendEncodingField(&out, row.grants);
  AppendEncodingField(&out, row.revoked ? "1" : "0");
  AppendEncodingField(&out, absl::StrCat(row.created_at_us));
  return out;
}

std::string ApiKeyRowEncoding(const ApiKeyRow& row, uint32_t key_id) {
  std::string out(kApiKeyDomain);
  AppendEncodingField(&out, absl::StrCat(key_id));
  AppendEncodingField(&out, row.key_id);
  AppendEncodingField(&out, row.principal);
  AppendEncodingField(&out, row.secret_sha256);
  AppendEncodingField(&out, absl::StrCat(row.created_at_us));
  AppendEncodingField(&out, row.revoked ? "1" : "0");
  return out;
}

void SignRow(RowSigner& signer, PrincipalRow* row) {
  std::tie(row->sign_key_id, row->tag) =
      signer.Sign([row](uint32_t key_id) { return PrincipalRowEncoding(*row, key_id); });
}

void SignRow(RowSigner& signer, ApiKeyRow* row) {
  std::tie(row->sign_key_id, row->tag) =
      signer.Sign([row](uint32_t key_id) { return ApiKeyRowEncoding(*row, key_id); });
}

absl::Status VerifyRow(RowSigner& signer, const PrincipalRow& row) {
  return signer.Verify(absl::StrCat("principal ", row.name), row.sign_key_id, row.tag,
                       [&row](uint32_t key_id) { return PrincipalRowEncoding(row, key_id); });
}

absl::Status VerifyRow(RowSigner& signer, const ApiKeyRow& row) {
  return signer.Verify(absl::StrCat("API key ", row.key_id), row.sign_key_id, row.tag,
                       [&row](uint32_t key_id) { return ApiKeyRowEncoding(row, key_id); });
}

}  // namespace bulwark

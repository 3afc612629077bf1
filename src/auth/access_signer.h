// The signed encodings of the access-control rows (issue #18 point 6), so that an edit of
// bulwark.db — a reader's role set to admin, a grant added, an API key row inserted or a revoked
// key switched back on — is refused when a key authenticates and reported by verify. Signed and
// checked with a RowSigner (provenance/row_signer.h) under the store's keyring; each field as
// AppendEncodingField (8-byte little-endian length, then the bytes), numbers in decimal, revoked
// as "0"/"1":
//   principal: "bulwark.principal.v1" key_id name role grants revoked created_at_us
//   API key:   "bulwark.api_key.v1"   key_id key_id principal secret_sha256 created_at_us revoked
//
// What a tag does not cover: a deleted row (a deleted principal or key cannot authenticate: that
// fails safe), and an older signed row put back in place of a newer one of the same name (e.g. a
// revoked key's row replaced by its earlier, unrevoked row): doc/security.md, residual risks.
#pragma once

#include <absl/status/status.h>

#include <cstdint>
#include <string>

#include "provenance/row_signer.h"
#include "storage/access_repository.h"

namespace bulwark {

std::string PrincipalRowEncoding(const PrincipalRow& row, uint32_t key_id);
std::string ApiKeyRowEncoding(const ApiKeyRow& row, uint32_t key_id);

// Set the row's sign_key_id and tag under the signer's newest key.
void SignRow(RowSigner& signer, PrincipalRow* row);
void SignRow(RowSigner& signer, ApiKeyRow* row);
// OK when the row's tag is right; DataLoss naming the row otherwise.
[[nodiscard]] absl::Status VerifyRow(RowSigner& signer, const PrincipalRow& row);
[[nodiscard]] absl::Status VerifyRow(RowSigner& signer, const ApiKeyRow& row);

}  // namespace bulwark

// RowSigner: HMAC-SHA256 tags for the store's rows other than entries and history events — the
// access-control rows (auth/access_signer.h) and the query gates' policies (gate/gate_store.h) —
// under the store's keyring, so that an edit of bulwark.db outside Bulwark is refused and reported
// by verify (issue #18 point 6). Each kind of row has its own encoding with its own domain string,
// built with AppendEncodingField (provenance/signer.h); this class signs and checks such encodings.
//
// It holds its own copy of the keyring file: rows are signed with the newest key it has, and a
// row naming a key the copy does not know yet (a rotation made by another process) makes it re-read
// the file once. Thread-safe.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "provenance/keyring.h"

namespace bulwark {

class RowSigner {
 public:
  // The canonical encoding of a row under a key id.
  using Encoding = std::function<std::string(uint32_t key_id)>;

  // Reads the keyring at `keyring_path`; its errors (NotFound, PermissionDenied, DataLoss) as
  // Keyring::Load, and FailedPrecondition for a keyring without keys.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<RowSigner>> Load(
      const std::filesystem::path& keyring_path);

  // The newest key's id and the tag of `encode(id)` under it (an empty tag if OpenSSL fails).
  std::pair<uint32_t, std::string> Sign(const Encoding& encode);
  // OK when `tag` is the tag of `encode(key_id)` under `key_id`; DataLoss naming `what` (never the
  // expected tag) when it is missing, names an unknown key or does not match.
  [[nodiscard]] absl::Status Verify(std::string_view what, uint32_t key_id, std::string_view tag,
                                    const Encoding& encode);

 private:
  RowSigner(std::filesystem::path path, Keyring keyring)
      : path_(std::move(path)), keyring_(std::move(keyring)) {}

  const std::filesystem::path path_;
  absl::Mutex mu_;  // guards keyring_ (a re-read replaces it)
  Keyring keyring_ ABSL_GUARDED_BY(mu_);
};

}  // namespace bulwark

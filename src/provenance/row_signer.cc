// RowSigner (see row_signer.h).
#include "provenance/row_signer.h"

#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>

#include "core/status_macros.h"
#include "provenance/signer.h"

namespace bulwark {

absl::StatusOr<std::unique_ptr<RowSigner>> RowSigner::Load(const std::filesystem::path& keyring_path) {
  auto keyring = Keyring::Load(keyring_path);
  BULWARK_RETURN_IF_ERROR(keyring.status());
  if (keyring->newest_key_id() == 0) {
    return absl::FailedPreconditionError(absl::StrCat("keyring ", keyring_path.string(), " has no keys"));
  }
  return std::unique_ptr<RowSigner>(new RowSigner(keyring_path, *std::move(keyring)));
}

std::pair<uint32_t, std::string> RowSigner::Sign(const Encoding& encode) {
  absl::MutexLock lock(&mu_);
  return Signer(&keyring_).NewestTag(encode);
}

absl::Status RowSigner::Verify(std::string_view what, uint32_t key_id, std::string_view tag,
                               const Encoding& encode) {
  absl::MutexLock lock(&mu_);
  if (key_id > keyring_.newest_key_id() && key_id <= kMaxKeyringKeys) {
    auto reloaded = Keyring::Load(path_);
    if (reloaded.ok()) keyring_ = *std::move(reloaded);
  }
  return Signer(&keyring_).CheckTag([what] { return std::string(what); }, key_id, tag, encode);
}

}  // namespace bulwark

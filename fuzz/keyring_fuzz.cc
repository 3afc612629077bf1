// libFuzzer target for the keyring file (provenance/keyring.h, doc/keyring_format.md): any bytes
// in keyring.json either load as a keyring whose key ids are 1..n (n <= kMaxKeyringKeys) with a
// newest key that Find returns, or are refused with DataLoss — never a crash, a hang or another
// status.
//
//   scripts/fuzz [SECONDS]
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "provenance/keyring.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  char path[] = "/tmp/bulwark-keyring-fuzz-XXXXXX";
  const int fd = mkstemp(path);  // mode 0600, as Load requires
  if (fd < 0) return 0;
  const bool written = write(fd, data, size) == static_cast<ssize_t>(size);
  close(fd);
  if (written) {
    auto keyring = bulwark::Keyring::Load(path);
    if (keyring.ok()) {
      const std::vector<bulwark::KeyInfo> keys = keyring->List();
      if (keys.empty() || keys.size() > bulwark::kMaxKeyringKeys) std::abort();
      for (size_t i = 0; i < keys.size(); ++i) {
        if (keys[i].id != i + 1) std::abort();
      }
      if (keyring->newest_key_id() != keys.size() || keyring->Find(keyring->newest_key_id()) == nullptr)
        std::abort();
    } else if (keyring.status().code() != absl::StatusCode::kDataLoss) {
      std::abort();
    }
  }
  unlink(path);
  return 0;
}

// Keyring: numbered 256-bit HMAC keys kept in one file with mode 0600 (SMSR Component 1,
// DESIGN 4.2). New writes sign with the newest key; every key still verifies, so rotation never
// invalidates existing entries.
//
// File format (doc/keyring_format.md): a JSON object
//   {"format": "bulwark.keyring", "version": 1,
//    "keys": [{"id": 1, "created_at_us": 1700000000000000, "key": "<64 hex chars>"}, ...]}
// Ids are 1, 2, 3, ... in order. The file is replaced atomically (write temp, fsync, rename).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <vector>

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include "bulwark/env.h"

namespace bulwark {

using HmacKey = std::array<uint8_t, 32>;

struct KeyInfo {
  uint32_t id = 0;
  int64_t created_at_us = 0;
};

class Keyring {
 public:
  // Creates a new keyring file holding key 1 drawn from env->RandomBytes. AlreadyExists if the
  // file exists; the file is created with mode 0600 (never wider, whatever the umask).
  [[nodiscard]] static absl::StatusOr<Keyring> Create(const std::filesystem::path& path, Env* env);

  // Loads and validates a keyring file. NotFound if missing; DataLoss if malformed (bad JSON,
  // wrong format/version, non-consecutive ids, a key that is not 64 hex chars); PermissionDenied
  // if the file is readable or writable by group or others.
  [[nodiscard]] static absl::StatusOr<Keyring> Load(const std::filesystem::path& path);

  // Adds a new newest key and rewrites the file atomically. Returns the new key id.
  [[nodiscard]] absl::StatusOr<uint32_t> Rotate(Env* env);

  uint32_t newest_key_id() const;
  // The key with this id, or nullptr.
  const HmacKey* Find(uint32_t key_id) const;
  std::vector<KeyInfo> List() const;
  const std::filesystem::path& path() const { return path_; }

 private:
  struct StoredKey {
    KeyInfo info;
    HmacKey key;
  };
  absl::Status Save() const;

  std::filesystem::path path_;
  std::vector<StoredKey> keys_;
};

}  // namespace bulwark

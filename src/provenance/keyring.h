// Keyring: numbered 256-bit HMAC keys kept in one file with mode 0600 (SMSR Component 1,
// DESIGN 4.2). New writes sign with the newest key; every key still verifies, so rotation never
// invalidates existing entries.
//
// File format (doc/keyring_format.md): a JSON object
//   {"format": "bulwark.keyring", "version": 1,
//    "keys": [{"id": 1, "created_at_us": 1700000000000000, "key": "<64 hex chars>"}, ...]}
// Ids are 1, 2, 3, ... in order. The file is replaced atomically (write temp, fsync, rename).
//
// A Keyring object is not thread-safe: Rotate must not run concurrently with any other call on the
// same object (the owner guards it). Key material is wiped from memory when a key is destroyed.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

#include "bulwark/env.h"

namespace bulwark {

using HmacKey = std::array<uint8_t, 32>;

// Load refuses keyring files larger than this before reading them (a real keyring with
// kMaxKeyringKeys keys is about 400 KiB).
inline constexpr size_t kMaxKeyringFileBytes = size_t{1} << 20;
// At most this many keys; Rotate returns ResourceExhausted beyond it.
inline constexpr uint32_t kMaxKeyringKeys = 4096;

struct KeyInfo {
  uint32_t id = 0;
  int64_t created_at_us = 0;
};

class Keyring {
 public:
  // An empty keyring: newest_key_id() is 0 and Find returns nullptr. Use Create or Load.
  Keyring() = default;

  // Creates a new keyring file holding key 1 drawn from env->RandomBytes, stamped with
  // env->NowMicros(). The file is created with open(O_CREAT|O_EXCL, 0600) and fchmod 0600 (never
  // wider, whatever the umask), then the file and its directory are fsynced. AlreadyExists if
  // anything exists at `path` (it is left untouched); NotFound if the directory is missing; another
  // errno-derived status if writing fails (a partially written file is removed).
  [[nodiscard]] static absl::StatusOr<Keyring> Create(const std::filesystem::path& path, Env* env);

  // Loads and validates a keyring file. NotFound if missing; InvalidArgument if not a regular file;
  // PermissionDenied if the file is readable or writable by group or others (mode & 077) or cannot
  // be opened; DataLoss if malformed: larger than kMaxKeyringFileBytes (checked before reading),
  // bad JSON, wrong format/version, no keys or more than kMaxKeyringKeys, ids not 1, 2, 3, ..., a
  // created_at_us that is not an int64, a key that is not 64 hex chars, or an unknown member.
  [[nodiscard]] static absl::StatusOr<Keyring> Load(const std::filesystem::path& path);

  // Adds a new newest key (env->RandomBytes, env->NowMicros) and rewrites the file atomically:
  // temp file 0600 in the same directory, fsync, rename over the keyring, fsync the directory.
  // Returns the new key id. Holds an exclusive flock on "<path>.lock" while it runs and re-reads the
  // file first: FailedPrecondition if the file no longer holds exactly this object's keys (another
  // process rotated it; Load again and retry) or if this keyring is empty; ResourceExhausted at
  // kMaxKeyringKeys; the Load errors if the file became unreadable; an errno-derived status if
  // writing fails. On any error the file and this object are unchanged, except when only the final
  // directory fsync fails: then both already hold the new key and that fsync error is returned.
  // Pointers returned by Find before a successful Rotate are invalidated.
  [[nodiscard]] absl::StatusOr<uint32_t> Rotate(Env* env);

  // The id new signatures use, or 0 for an empty keyring.
  uint32_t newest_key_id() const;
  // The key with this id, or nullptr.
  const HmacKey* Find(uint32_t key_id) const;
  std::vector<KeyInfo> List() const;
  const std::filesystem::path& path() const { return path_; }

 private:
  // One key; the key bytes are wiped (OPENSSL_cleanse) when a StoredKey is destroyed, including
  // the copies a vector leaves behind when it grows.
  struct StoredKey {
    StoredKey() = default;
    StoredKey(const StoredKey&) = default;
    StoredKey& operator=(const StoredKey&) = default;
    ~StoredKey();

    KeyInfo info;
    HmacKey key{};
  };

  // Reads and validates the file at `path` (the Load checks).
  static absl::StatusOr<std::vector<StoredKey>> ReadKeys(const std::filesystem::path& path);
  // Parses and validates the JSON text of a keyring file; `path` is only used in messages.
  static absl::StatusOr<std::vector<StoredKey>> ParseKeys(std::string_view text,
                                                          const std::filesystem::path& path);
  // Atomically replaces the file at path_ with `keys` (temp file 0600, fsync, rename). The caller
  // fsyncs the directory.
  absl::Status Save(const std::vector<StoredKey>& keys) const;

  std::filesystem::path path_;
  std::vector<StoredKey> keys_;
};

}  // namespace bulwark

// Keyring: numbered 256-bit HMAC keys kept in one file with mode 0600 (SMSR Component 1,
// DESIGN 4.2). New writes sign with the newest key; every key still verifies, so rotation never
// invalidates existing entries.
//
// File format (doc/keyring_format.md): a JSON object
//   {"format": "bulwark.keyring", "version": 1,
//    "keys": [{"id": 1, "created_at_us": 1700000000000000, "key": "<64 hex chars>"}, ...]}
// Ids are 1, 2, 3, ... in order. The file is replaced atomically (write temp, fsync, rename).
//
// A Keyring object is thread-safe: it has its own lock, so readers (signers, verifiers) may use it
// while Rotate runs or while the owner replaces it in place with a re-read file (move assignment).
// Find hands out a shared reference to the key, which stays valid after a rotation or a re-read.
// Key material is wiped from memory when the last reference to a key is dropped.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
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
  // Moving locks `other` (and, for assignment, this object): a reader of this object sees the old
  // keys or the new ones, never a mix. `other` is left empty.
  Keyring(Keyring&& other);
  Keyring& operator=(Keyring&& other);
  Keyring(const Keyring&) = delete;
  Keyring& operator=(const Keyring&) = delete;

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
  // Rotations of one object run one at a time; readers are blocked only while the new key list is
  // swapped in.
  [[nodiscard]] absl::StatusOr<uint32_t> Rotate(Env* env) ABSL_LOCKS_EXCLUDED(rotate_mu_, mu_);

  // The id new signatures use, or 0 for an empty keyring.
  uint32_t newest_key_id() const ABSL_LOCKS_EXCLUDED(mu_);
  // The key with this id, or nullptr. The reference keeps the key alive (and unchanged) after a
  // rotation or a re-read of this object.
  std::shared_ptr<const HmacKey> Find(uint32_t key_id) const ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<KeyInfo> List() const ABSL_LOCKS_EXCLUDED(mu_);
  std::filesystem::path path() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // One key; the key bytes are wiped (OPENSSL_cleanse) when a StoredKey is destroyed. Keys are
  // never copied: a key list holds shared references, so a rotation copies pointers only.
  struct StoredKey {
    StoredKey() = default;
    StoredKey(const StoredKey&) = delete;
    StoredKey& operator=(const StoredKey&) = delete;
    ~StoredKey();

    KeyInfo info;
    HmacKey key{};
  };

  using KeyList = std::vector<std::shared_ptr<const StoredKey>>;

  // Reads and validates the file at `path` (the Load checks).
  static absl::StatusOr<KeyList> ReadKeys(const std::filesystem::path& path);
  // Parses and validates the JSON text of a keyring file; `path` is only used in messages.
  static absl::StatusOr<KeyList> ParseKeys(std::string_view text, const std::filesystem::path& path);
  // Atomically replaces the file at `path` with `keys` (temp file 0600, fsync, rename). The caller
  // fsyncs the directory.
  static absl::Status Save(const std::filesystem::path& path, const KeyList& keys);

  // Serializes Rotate calls (and move assignment) on this object; taken before mu_.
  absl::Mutex rotate_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;
  std::filesystem::path path_ ABSL_GUARDED_BY(mu_);
  KeyList keys_ ABSL_GUARDED_BY(mu_);
};

}  // namespace bulwark

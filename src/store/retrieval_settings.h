// RetrievalSettings: which ranking each namespace's searches use (`retrieval: vector | hybrid`,
// issue #19 point 2), persisted in the store's metadata table under "retrieval/<namespace>" so
// `bulwark retrieval set` in one process and `bulwark serve` in another agree. A namespace without
// its own setting uses the store's default (StoreOptions::retrieval_config "default").
//
// A setting written by another process is seen within `refresh_ms` (the store's
// other_writers_check_ms; < 0: only at the first search of the namespace). Thread-safe.
//
// Every setting is signed under the store's keyring (issue #18 point 6 (iii)): the row's value is
// {"retrieval": "vector"|"hybrid", "key_id": n, "tag": hex} with tag = HMAC-SHA256(key[key_id],
// "bulwark.retrieval.v1" || f(key_id) || f(namespace) || f(retrieval)), f as in
// doc/entry_format.md. An edited or unsigned setting is DataLoss: searches of the namespace fail
// closed, and Verify names it. A deleted setting is not detected: the namespace then uses the
// store's default ranking (which ranking is used changes no verification).
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bulwark/env.h"
#include "storage/storage_backend.h"
#include "store/hybrid_ranking.h"

namespace bulwark {

class Keyring;
class Signer;

class RetrievalSettings {
 public:
  // `backend`, `keyring` and `env` must outlive the settings.
  RetrievalSettings(StorageBackend* backend, const Keyring* keyring, Retrieval default_retrieval,
                    int refresh_ms, Env* env);
  ~RetrievalSettings();

  // Once, after an upgrade from a store whose settings were not signed (schema version < 5):
  // signs every setting written before, then clears the store's mark. Returns how many.
  [[nodiscard]] absl::StatusOr<int64_t> SignSettingsFromBeforeSigning();
  // Every stored setting that does not decode or verify: (namespace, reason).
  [[nodiscard]] absl::StatusOr<std::vector<std::pair<std::string, std::string>>> Verify();

  // The namespace's ranking. DataLoss for a stored value that is not "vector" or "hybrid"; the
  // backend's errors.
  [[nodiscard]] absl::StatusOr<Retrieval> Get(std::string_view name_space);
  // The namespace's own setting, or nullopt when it follows the default.
  [[nodiscard]] absl::StatusOr<std::optional<Retrieval>> Stored(std::string_view name_space);
  // Persists the namespace's setting. InvalidArgument for a malformed namespace.
  [[nodiscard]] absl::Status Set(std::string_view name_space, Retrieval retrieval);

  Retrieval default_retrieval() const { return default_; }

 private:
  struct Cached {
    Retrieval retrieval;
    int64_t read_at_us;
  };
  // The setting in the stored value `value` of `name_space`, checked. DataLoss if it does not.
  absl::StatusOr<Retrieval> Decode(std::string_view name_space, std::string_view value) const;
  std::string Encode(std::string_view name_space, Retrieval retrieval) const;

  StorageBackend* backend_;
  std::unique_ptr<Signer> signer_;
  const Retrieval default_;
  const int refresh_ms_;
  Env* env_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Cached> cache_ ABSL_GUARDED_BY(mu_);
};

}  // namespace bulwark

// RetrievalSettings: which ranking each namespace's searches use (`retrieval: vector | hybrid`,
// issue #19 point 2), persisted in the store's metadata table under "retrieval/<namespace>" so
// `bulwark retrieval set` in one process and `bulwark serve` in another agree. A namespace without
// its own setting uses the store's default (StoreOptions::retrieval_config "default").
//
// A setting written by another process is seen within `refresh_ms` (the store's
// other_writers_check_ms; < 0: only at the first search of the namespace). Thread-safe.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>

#include <optional>
#include <string>
#include <string_view>

#include "bulwark/env.h"
#include "storage/storage_backend.h"
#include "store/hybrid_ranking.h"

namespace bulwark {

class RetrievalSettings {
 public:
  // `backend` and `env` must outlive the settings.
  RetrievalSettings(StorageBackend* backend, Retrieval default_retrieval, int refresh_ms, Env* env)
      : backend_(backend), default_(default_retrieval), refresh_ms_(refresh_ms), env_(env) {}

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
  StorageBackend* backend_;
  const Retrieval default_;
  const int refresh_ms_;
  Env* env_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Cached> cache_ ABSL_GUARDED_BY(mu_);
};

}  // namespace bulwark

// GateRegistry: the fitted gates that searches consult, read from GateStore and remembered for
// `ttl_ms`, so a search does not touch the database and a gate fitted by another process (the
// CLI, while `bulwark serve` runs) takes effect within ttl. Thread-safe.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>

#include <memory>
#include <string>
#include <string_view>

#include "bulwark/env.h"
#include "gate/gate_store.h"

namespace bulwark {

class GateRegistry {
 public:
  // `store` and `env` must outlive the registry. ttl_ms 0 reads the database every time.
  GateRegistry(GateStore* store, Env* env, int ttl_ms = 1000)
      : store_(store), env_(env), ttl_us_(ttl_ms * 1000LL) {}

  // The gate of `name_space`, or null if it has none. DataLoss for a damaged stored gate.
  [[nodiscard]] absl::StatusOr<std::shared_ptr<const StoredGate>> Get(std::string_view name_space);
  // Forgets the remembered gate of `name_space` (after Save or Remove in this process).
  void Invalidate(std::string_view name_space);

 private:
  struct Cached {
    std::shared_ptr<const StoredGate> gate;  // null: no gate
    int64_t loaded_at_us = 0;
  };
  GateStore* store_;
  Env* env_;
  int64_t ttl_us_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Cached> cache_ ABSL_GUARDED_BY(mu_);
};

}  // namespace bulwark

// GateRepository: the stored rows of the fitted query gates, one per namespace, as the bytes the
// GateStore signs and checks (gate/gate_store.h). It keeps rows and knows nothing of gate modes or
// models. Contract for every implementation: Save replaces the namespace's row atomically; reads
// see committed rows only. Every method may also return Unavailable (busy, I/O).
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bulwark {

struct GateRow {
  std::string name_space;
  std::string mode;      // as the gate spells it
  std::string embedder;  // the embedder fingerprint at fit time
  int64_t fitted_at_us = 0;
  std::string source;        // JSON object: what the gate was fitted on
  std::string model;         // the serialized GateModel
  uint32_t sign_key_id = 0;  // 0 with an empty tag: written before rows were signed
  std::string tag;
};

class GateRepository {
 public:
  virtual ~GateRepository() = default;
  // Inserts or replaces the row of row.name_space.
  [[nodiscard]] virtual absl::Status Save(const GateRow& row) = 0;
  // nullopt if the namespace has no gate.
  [[nodiscard]] virtual absl::StatusOr<std::optional<GateRow>> Find(std::string_view name_space) = 0;
  // NotFound if the namespace has no gate.
  [[nodiscard]] virtual absl::Status Remove(std::string_view name_space) = 0;
  // True while the store holds rows made before rows were signed (an upgraded store) that the
  // caller has not yet signed: it signs every row (List, Save) and then calls
  // FinishSigningUpgrade, after which this is false in every process (afterwards an unsigned row
  // is a forged one).
  virtual bool upgraded_from_unsigned() const = 0;
  // Records that the rows of an upgraded store are signed (durably; idempotent).
  [[nodiscard]] virtual absl::Status FinishSigningUpgrade() = 0;
  // Every row (for the one-time signing of an upgraded store and for verify).
  [[nodiscard]] virtual absl::StatusOr<std::vector<GateRow>> List() = 0;
};

}  // namespace bulwark

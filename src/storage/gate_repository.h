// GateRepository: the stored rows of the fitted query gates, one per namespace, as the bytes the
// GateStore signs and checks (gate/gate_store.h). It keeps rows and knows nothing of gate modes or
// models. Contract for every implementation: Save replaces the namespace's row atomically; reads
// see committed rows only. Every method may also return Unavailable (busy, I/O).
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <functional>
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

// The signed list of the namespaces that have a gate (issue #18 point 6 (ii)): a row deleted by
// hand is still named here, so its namespace fails closed instead of running without its policy.
struct GateManifest {
  std::vector<std::string> namespaces;  // sorted
  uint32_t sign_key_id = 0;
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

  // --- The manifest. Contract: with a signer set, Save and Remove replace the manifest, signed
  // over the namespaces that have a row after their change, in their own transaction (under the
  // write lock, so two writers never leave a manifest that misses a row).
  using ManifestSigner = std::function<void(GateManifest* manifest)>;  // sets sign_key_id and tag
  virtual void SetManifestSigner(ManifestSigner signer) = 0;
  // The stored manifest; nullopt if none was written. DataLoss if it does not decode.
  [[nodiscard]] virtual absl::StatusOr<std::optional<GateManifest>> Manifest() = 0;
  // True while the store has no manifest yet because it was made before manifests (an upgraded
  // store, marked by its migration): the caller writes one (WriteManifest), once.
  virtual bool manifest_pending() const = 0;
  // Writes the manifest of the rows as they are now and clears the pending mark, in one
  // transaction. FailedPrecondition without a signer.
  [[nodiscard]] virtual absl::Status WriteManifest() = 0;
};

}  // namespace bulwark

// GateStore: the fitted query gate of each namespace, kept in table `query_gates` of the store's
// database (bulwark.db; layout in doc/gate_format.md), so a gate survives restarts and every
// process that opens the store (the CLI, `bulwark serve`) sees the same one.
//
// A row holds the namespace's gate policy (the mode searches use unless a request asks for a
// stricter one), the embedder fingerprint the gate was fitted under, when it was fitted, what it
// was fitted on, and the serialized GateModel (magic, version, checksum: a damaged row is DataLoss,
// never a silently different gate). Every row carries an HMAC tag under the store's keyring
// (provenance/row_signer.h) over
//   "bulwark.query_gate.v1" key_id namespace mode embedder fitted_at_us source model
// so a policy switched off with SQL (mode 'reject' -> 'off') or a model swapped in is DataLoss —
// searches of that namespace fail closed — and verify reports it. A signed manifest of the
// namespaces that have a gate (GateRepository::Manifest), replaced in the transaction of every
// save and removal, makes a row deleted by hand DataLoss too. The rows are a GateRepository
// (storage/storage_opener.h). Thread-safe.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gate/gate_model.h"
#include "gate/query_gate.h"
#include "provenance/row_signer.h"
#include "storage/gate_repository.h"

namespace bulwark {

struct StoredGate {
  std::string name_space;
  GateMode mode = GateMode::kFlag;  // the namespace's policy
  std::string embedder;             // EmbedderFingerprint::ToString() at fit time
  int64_t fitted_at_us = 0;
  nlohmann::json source = nlohmann::json::object();  // what it was fitted on, e.g. {"benign": "file q.txt"}
  std::shared_ptr<const GateModel> model;
};

class GateStore {
 public:
  // Opens the gate repository (storage/storage_opener.h) of the store whose database file is
  // `db_path` (the store is its directory; the file name is the layout's),
  // signing with the keyring at `keyring_path` (default: the store's, beside the database); a
  // table made before rows were signed is upgraded and its rows signed once. NotFound if there is
  // no database file or keyring; Unavailable / DataLoss as OpenExistingDatabase and Keyring::Load.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<GateStore>> Open(
      const std::filesystem::path& db_path, std::filesystem::path keyring_path = {});
  ~GateStore();

  // Inserts or replaces the gate of gate.name_space (durable on return).
  [[nodiscard]] absl::Status Save(const StoredGate& gate);
  // The gate of `name_space`, nullopt if none. DataLoss if the stored row is damaged or fails its
  // tag.
  [[nodiscard]] absl::StatusOr<std::optional<StoredGate>> Load(std::string_view name_space);
  // Removes the gate of `name_space`; NotFound if there is none.
  [[nodiscard]] absl::Status Remove(std::string_view name_space);
  // One message per row that fails its tag or does not decode (for `bulwark verify`).
  [[nodiscard]] absl::StatusOr<std::vector<std::string>> Verify();

 private:
  GateStore(std::unique_ptr<GateRepository> rows, std::unique_ptr<RowSigner> signer)
      : rows_(std::move(rows)), signer_(std::move(signer)) {}
  absl::StatusOr<StoredGate> Decode(const GateRow& row);
  // The namespaces the verified manifest names (none while an upgraded store has none yet).
  // DataLoss if the manifest is missing or does not verify.
  absl::StatusOr<std::vector<std::string>> ManifestNamespaces();

  std::unique_ptr<GateRepository> rows_;
  std::unique_ptr<RowSigner> signer_;
};

}  // namespace bulwark

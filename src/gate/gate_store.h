// GateStore: the fitted query gate of each namespace, kept in table `query_gates` of the store's
// database (bulwark.db; layout in doc/gate_format.md), so a gate survives restarts and every
// process that opens the store (the CLI, `bulwark serve`) sees the same one.
//
// A row holds the namespace's gate policy (the mode searches use unless a request asks for a
// stricter one), the embedder fingerprint the gate was fitted under, when it was fitted, what it
// was fitted on, and the serialized GateModel (magic, version, checksum: a damaged row is DataLoss,
// never a silently different gate). Thread-safe.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "gate/gate_model.h"
#include "gate/query_gate.h"

struct sqlite3;

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
  // Opens the table in the existing store database at `db_path` (creating the table if needed).
  // NotFound if there is no database file; Unavailable / DataLoss as OpenExistingDatabase.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<GateStore>> Open(const std::filesystem::path& db_path);
  ~GateStore();

  // Inserts or replaces the gate of gate.name_space (durable on return).
  [[nodiscard]] absl::Status Save(const StoredGate& gate);
  // The gate of `name_space`, nullopt if none. DataLoss if the stored row is damaged.
  [[nodiscard]] absl::StatusOr<std::optional<StoredGate>> Load(std::string_view name_space);
  // Removes the gate of `name_space`; NotFound if there is none.
  [[nodiscard]] absl::Status Remove(std::string_view name_space);

 private:
  explicit GateStore(sqlite3* db) : db_(db) {}
  std::mutex mu_;  // serializes use of db_
  sqlite3* db_;
};

}  // namespace bulwark

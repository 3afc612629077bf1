// AuditLog: which memories fed which answer (DESIGN 4.9). Every search appends a record; an
// operator reads them back by time, principal, session or namespace.
//
// Records are group-committed: Append queues the record and returns; a background thread writes
// queued records in one transaction at least every `flush_interval_ms` (and Flush() forces it).
// A crash can lose at most the records of the last interval; entries themselves are unaffected.
// Persistence: table `audit` in the store's SQLite file (its own connection). Thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <nlohmann/json.hpp>

namespace bulwark {

struct AuditRecord {
  int64_t seq = 0;  // assigned when written
  int64_t at_us = 0;
  std::string principal;
  std::string session;     // X-Bulwark-Session, may be empty
  std::string name_space;
  std::string operation;   // "search" (and later "answer")
  std::string query_hash;  // SHA-256 hex of the query text; the query itself is not kept
  std::vector<std::string> returned_ids;
  nlohmann::json detail = nlohmann::json::object();  // e.g. gate decision and score (issue #5)
};

struct AuditQuery {
  std::optional<std::string> principal;
  std::optional<std::string> session;
  std::optional<std::string> name_space;
  std::optional<std::string> entry_id;  // records that returned this entry
  int64_t since_us = 0;
  int limit = 100;  // 1 .. 10000, newest first
};

class AuditLog {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<AuditLog>> Open(const std::filesystem::path& db_path,
                                                                     int flush_interval_ms = 50);
  ~AuditLog();  // flushes

  void Append(AuditRecord record);
  [[nodiscard]] absl::Status Flush();
  [[nodiscard]] absl::StatusOr<std::vector<AuditRecord>> Query(const AuditQuery& query);

 private:
  class Impl;
  explicit AuditLog(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

nlohmann::json ToJson(const AuditRecord& record);

}  // namespace bulwark

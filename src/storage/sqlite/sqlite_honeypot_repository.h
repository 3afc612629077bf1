// SqliteHoneypotRepository: HoneypotRepository in the store's main database file (bulwark.db),
// through its own connection, in tables it creates if absent (honeypot_runs, honeypot_blocks,
// honeypot_settings, honeypot_intent; doc/store_format.md). Creating them is the whole upgrade: a store made
// before them opens unchanged and the schema version is not bumped.
#pragma once

#include <absl/synchronization/mutex.h>

#include <filesystem>
#include <memory>

#include "storage/honeypot_repository.h"

struct sqlite3;

namespace bulwark {

class SqliteHoneypotRepository final : public HoneypotRepository {
 public:
  // Opens the existing database at `path` and creates the tables if absent. NotFound if there is
  // no such file; the database's errors otherwise.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteHoneypotRepository>> Open(
      const std::filesystem::path& path);
  ~SqliteHoneypotRepository() override;

  absl::StatusOr<int64_t> AddRun(const HoneypotRun& run) override;
  absl::Status ScanRuns(std::string_view name_space,
                        const std::function<absl::Status(const HoneypotRun&)>& visit) override;
  absl::StatusOr<int64_t> RemoveRuns(std::string_view name_space, int64_t at_us) override;
  absl::Status PutSetting(const HoneypotSetting& setting) override;
  absl::Status ScanSettings(const std::function<absl::Status(const HoneypotSetting&)>& visit) override;
  absl::Status PutBlock(const HoneypotBlock& block) override;
  absl::Status DeleteBlock(std::string_view key) override;
  absl::Status ScanBlocks(const std::function<absl::Status(const HoneypotBlock&)>& visit) override;
  absl::Status PutIntentTable(const HoneypotIntentTable& table) override;
  absl::StatusOr<int64_t> DeleteIntentTable(std::string_view name_space) override;
  absl::Status ScanIntentTables(
      const std::function<absl::Status(const HoneypotIntentTable&)>& visit) override;

 private:
  explicit SqliteHoneypotRepository(sqlite3* db) : db_(db) {}
  absl::Mutex mu_;  // serializes all use of db_
  sqlite3* db_ ABSL_GUARDED_BY(mu_);
};

}  // namespace bulwark

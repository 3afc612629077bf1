// HoneypotRepository: the persistent state of MemPot honeypots (DESIGN 4.7, issue #13): one row
// per fit run (its metrics, the memories it covered and the pots it wrote, for `honeypots show`
// and stack mode), the session monitor's blocked keys, so that a block survives a restart, and
// each namespace's extraction-intent table (the query-text evidence the serve path adds).
// The pots themselves are entries (kind = honeypot) in the entry store; this holds what is about
// them. The honeypot layer owns the meaning of every text and byte string; a repository stores
// them and bounds what it hands back.
//
// Contract for every implementation: each call is one transaction; rows of one namespace never
// reach another; a failed call changes nothing.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace bulwark {

// One fit run of a namespace.
struct HoneypotRun {
  int64_t run_id = 0;  // assigned by the repository, increasing
  std::string name_space;
  int64_t at_us = 0;
  int batch = 1;              // 1 for the first run, +1 per stacked run
  std::string metrics;        // JSON object (FitResult::metrics plus the run's settings)
  std::string covered_ids;    // JSON array of the memory ids the run covered
  std::string pot_ids;        // JSON array of the entry ids of the pots it wrote
  int64_t removed_at_us = 0;  // when `honeypots remove` retired it; 0 while current
};

// One blocked monitor key: its bytes (honeypot::AppendKeyBytes) and its encoded state
// (honeypot::EncodeKeyState), with the namespace for listing.
struct HoneypotBlock {
  std::string name_space;
  std::string key;
  std::string state;
};

// The monitor settings of one namespace (HoneypotGuard): its mode and observation size.
struct HoneypotSetting {
  std::string name_space;
  std::string mode;  // "off" | "monitor" | "block" (the guard validates it)
  int k_obs = 4;
};

// The extraction-intent table of a namespace (honeypot::IntentCalibration::ToJson, calibrated by
// `honeypots fit`), signed by the layer above (retrieval/honeypot_intent_table.h): the repository
// stores the text, the key id and the tag and hands them back as stored.
struct HoneypotIntentTable {
  std::string name_space;
  int64_t run_id = 0;  // the fit run it was calibrated with
  std::string table;   // JSON object
  int64_t sign_key_id = 0;
  std::string tag;  // bytes
};

class HoneypotRepository {
 public:
  // Limits on what a repository accepts and hands back (stored bytes are untrusted).
  static constexpr size_t kMaxRunTextBytes = 64 << 20;
  static constexpr size_t kMaxKeyBytes = 1 << 20;
  static constexpr size_t kMaxStateBytes = 1024;
  static constexpr size_t kMaxIntentTableBytes = 1 << 20;
  static constexpr size_t kMaxTagBytes = 64;

  virtual ~HoneypotRepository() = default;

  // Appends a run (run_id and removed_at_us of `run` are ignored); returns its run id.
  // InvalidArgument for a text over kMaxRunTextBytes.
  [[nodiscard]] virtual absl::StatusOr<int64_t> AddRun(const HoneypotRun& run) = 0;
  // Every run of the namespace (removed ones too), oldest first. DataLoss for a stored row over
  // the limits.
  [[nodiscard]] virtual absl::Status ScanRuns(
      std::string_view name_space, const std::function<absl::Status(const HoneypotRun&)>& visit) = 0;
  // Marks every current run of the namespace removed at `at_us`; returns how many.
  [[nodiscard]] virtual absl::StatusOr<int64_t> RemoveRuns(std::string_view name_space, int64_t at_us) = 0;

  // Inserts or replaces the namespace's setting. InvalidArgument for k_obs outside [1, 64] or a
  // mode longer than 16 bytes.
  [[nodiscard]] virtual absl::Status PutSetting(const HoneypotSetting& setting) = 0;
  // Every setting, by namespace. DataLoss for a stored row out of range.
  [[nodiscard]] virtual absl::Status ScanSettings(
      const std::function<absl::Status(const HoneypotSetting&)>& visit) = 0;

  // Inserts or replaces the block of `block.key`. InvalidArgument over the limits.
  [[nodiscard]] virtual absl::Status PutBlock(const HoneypotBlock& block) = 0;
  // Deletes the block of `key`; NotFound if there is none.
  [[nodiscard]] virtual absl::Status DeleteBlock(std::string_view key) = 0;
  // Every block, by key. DataLoss for a stored row over the limits.
  [[nodiscard]] virtual absl::Status ScanBlocks(
      const std::function<absl::Status(const HoneypotBlock&)>& visit) = 0;

  // Inserts or replaces the namespace's intent table. InvalidArgument for an empty namespace, a
  // table over kMaxIntentTableBytes, a tag over kMaxTagBytes or a key id outside [0, 2^32).
  [[nodiscard]] virtual absl::Status PutIntentTable(const HoneypotIntentTable& table) = 0;
  // Deletes the namespace's intent table; returns how many were deleted (0 or 1).
  [[nodiscard]] virtual absl::StatusOr<int64_t> DeleteIntentTable(std::string_view name_space) = 0;
  // Every intent table, by namespace. DataLoss for a stored row over the limits.
  [[nodiscard]] virtual absl::Status ScanIntentTables(
      const std::function<absl::Status(const HoneypotIntentTable&)>& visit) = 0;
};

}  // namespace bulwark

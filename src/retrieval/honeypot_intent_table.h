// The extraction-intent table of a namespace, kept with its honeypot fit (issue #13 point 3;
// honeypot/intent_evidence.h): `bulwark honeypots fit` calibrates the grammar's per-category LLR
// table on the fit's benign and attack queries and stores it here; the serve path's HoneypotGuard
// reads it and adds its evidence to the namespace's SPRT, as `eval sessions` does.
//
// Stored in the HoneypotRepository's intent row of the namespace, signed under the store's keyring
// like the honeypot settings (retrieval/honeypot_settings.h):
//   tag = HMAC-SHA256(key[key_id], "bulwark.honeypot_intent.v1" || f(key_id) || f(namespace)
//         || f(run_id) || f(the table's JSON text as stored))
// with f as in doc/entry_format.md. An edited, moved (to another namespace) or unsigned row is
// DataLoss; so is a table whose categories are not the compiled-in grammar's (the grammar changed
// since the fit: refit).
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "honeypot/intent_evidence.h"
#include "storage/honeypot_repository.h"

namespace bulwark {

class Keyring;
class Signer;

// A verified table with the run it was calibrated with.
struct StoredIntentTable {
  int64_t run_id = 0;
  std::shared_ptr<const honeypot::IntentEvidence> evidence;
};

// Signs, stores and verifies intent tables. Thread-safe as the repository is.
class IntentTableStore {
 public:
  // `repository` and `keyring` must outlive the store.
  IntentTableStore(HoneypotRepository* repository, const Keyring* keyring);
  ~IntentTableStore();

  // Signs and stores the namespace's table (replacing any). InvalidArgument for a malformed
  // namespace or a table that is not the default grammar's; the repository's errors.
  [[nodiscard]] absl::Status Put(std::string_view name_space, int64_t run_id,
                                 const honeypot::IntentCalibration& table);
  // Deletes the namespace's table; returns how many were deleted (0 or 1). The repository's errors.
  [[nodiscard]] absl::StatusOr<int64_t> Delete(std::string_view name_space);
  // Every stored table, by namespace: `visit` gets the verified table or the DataLoss of one that
  // does not verify or decode. Stops at the first error `visit` returns; the repository's errors.
  [[nodiscard]] absl::Status Scan(
      const std::function<absl::Status(std::string_view name_space,
                                       const absl::StatusOr<StoredIntentTable>&)>& visit) const;

 private:
  absl::StatusOr<StoredIntentTable> Decode(const HoneypotIntentTable& row) const;

  HoneypotRepository* repository_;
  std::unique_ptr<Signer> signer_;
  std::shared_ptr<const honeypot::IntentGrammar> grammar_;  // the default grammar, parsed once
};

}  // namespace bulwark

// The honeypot monitor's per-namespace setting (issue #13 point 3; HoneypotGuard): the mode, the
// observation size, the per-round estimator (MemPot Eq. 17, Eq. 18, or the calibrated count LLR of
// the namespace's current fit run, research/mempot.md 2.5) and the SPRT's H0 policy and error
// budgets (Eq. 5). `bulwark honeypots mode` and PUT /v1/admin/honeypots/settings write it; a
// running server reads it again within its refresh interval.
//
// Stored in the store's metadata table under "honeypot_setting/<namespace>", signed under the
// store's keyring like the retrieval settings (store/retrieval_settings.h): the value is
//   {"setting": {...GuardSetting::ToJson()...}, "key_id": n, "tag": hex}
// with tag = HMAC-SHA256(key[key_id], "bulwark.honeypot_setting.v1" || f(key_id) || f(namespace)
// || f(the setting's JSON as nlohmann::json::dump() writes it)), f as in doc/entry_format.md. An
// edited or unsigned value is DataLoss. A namespace without a signed setting uses the older
// unsigned `honeypot_settings` row (mode and k_obs only) if it has one, else the server's defaults.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "honeypot/llr_estimator.h"
#include "honeypot/sprt.h"

namespace bulwark {

class Keyring;
class Signer;
class StorageBackend;

enum class HoneypotMode { kOff, kMonitor, kBlock };
std::string_view ToString(HoneypotMode mode);
// "off" | "monitor" | "block"; InvalidArgument otherwise.
[[nodiscard]] absl::StatusOr<HoneypotMode> ParseHoneypotMode(std::string_view name);

struct GuardSetting {
  HoneypotMode mode = HoneypotMode::kMonitor;
  int k_obs = 4;  // 1 .. 64
  // count (Eq. 17) | similarity (Eq. 18) | count_calibrated (the table of the namespace's newest
  // current fit run, `indexed.calibrated_count_llr`). global_similarity (Eq. 19) needs the store's
  // K_g best pot and memory cosines, which the read path does not compute: not a product setting.
  honeypot::LlrEstimatorKind estimator = honeypot::LlrEstimatorKind::kCount;
  double calibration_cap = 0;  // count_calibrated: clamp the table to [-cap, cap]; 0 = none; < 20
  honeypot::LowerBoundary h0 = honeypot::LowerBoundary::kRestart;
  double alpha = 0.1;  // the SPRT's error budgets: 0 < alpha, beta < 1, alpha + beta < 1
  double beta = 0.1;
  // Add the extraction-intent grammar's evidence (honeypot/intent_evidence.h) with the table the
  // namespace's fit stored (retrieval/honeypot_intent_table.h); a namespace without a stored table
  // has pot evidence alone. On by default: the table is calibrated on the operator's own benign
  // queries and one request alone never blocks (the table's cap).
  bool intent = true;
  bool operator==(const GuardSetting&) const = default;

  // {"mode", "k_obs", "estimator", "calibration_cap", "h0", "alpha", "beta", "intent"}.
  nlohmann::json ToJson() const;
  // Fields absent from `j` keep the values of `base`. InvalidArgument for an unknown field, a
  // wrong type or a value out of range (Validate).
  [[nodiscard]] static absl::StatusOr<GuardSetting> FromJson(const nlohmann::json& j,
                                                             const GuardSetting& base);
  // InvalidArgument for a value out of the ranges above.
  [[nodiscard]] absl::Status Validate() const;
};

// The signed settings in the metadata table. Thread-safe (the backend is).
class GuardSettingStore {
 public:
  // `backend` and `keyring` must outlive the store.
  GuardSettingStore(StorageBackend* backend, const Keyring* keyring);
  ~GuardSettingStore();

  // Signs and stores the namespace's setting. InvalidArgument for a malformed namespace or an
  // invalid setting; the backend's errors.
  [[nodiscard]] absl::Status Put(std::string_view name_space, const GuardSetting& setting);
  // Every stored setting, by namespace: `visit` gets the decoded setting or the DataLoss of one
  // that does not decode or verify. Stops at the first error `visit` returns.
  [[nodiscard]] absl::Status Scan(
      const std::function<absl::Status(std::string_view name_space, const absl::StatusOr<GuardSetting>&)>&
          visit) const;

 private:
  std::string Encode(std::string_view name_space, const GuardSetting& setting) const;
  absl::StatusOr<GuardSetting> Decode(std::string_view name_space, std::string_view value) const;

  StorageBackend* backend_;
  std::unique_ptr<Signer> signer_;
};

}  // namespace bulwark

// ScreenedOutcomes: the gate's typed outcome (GateOutcome) of every entry a store screens while
// this object observes it, by entry id. In-process evaluation (bulwark-lab eval poisoning, eval
// detect, eval adaptive) reads per-detector scores from here rather than parsing the entries'
// JSON reports.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/synchronization/mutex.h>

#include <optional>
#include <string>
#include <string_view>

#include "detect/write_defenses.h"
#include "detect/write_gate.h"

namespace bulwark {

class ScreenedOutcomes {
 public:
  // Observes `defenses` (not owned; must outlive this object) until destruction. At most one
  // observer per WriteDefenses; create it before the writes to observe.
  explicit ScreenedOutcomes(WriteDefenses* defenses);
  ~ScreenedOutcomes();
  ScreenedOutcomes(const ScreenedOutcomes&) = delete;
  ScreenedOutcomes& operator=(const ScreenedOutcomes&) = delete;

  // The outcome of the entry's latest screening (an update screens again); nullopt for an entry
  // not screened while observed.
  std::optional<GateOutcome> Find(std::string_view entry_id) const;

 private:
  WriteDefenses* defenses_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, GateOutcome> outcomes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace bulwark

// DefenseState: the per-namespace state the write-time detectors read: each namespace's rolling
// query history (fed by searches) and its calibration (set by `bulwark calibrate`). Thread-safe;
// histories live as long as this object, so references handed out stay valid.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/synchronization/mutex.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "detect/calibration.h"
#include "detect/query_history.h"

namespace bulwark {

class DefenseState {
 public:
  DefenseState(size_t dim, size_t history_capacity) : dim_(dim), capacity_(history_capacity) {}

  // The namespace's history, created empty on first use.
  QueryHistory& History(std::string_view name_space);
  // nullptr if the namespace has none yet.
  const QueryHistory* FindHistory(std::string_view name_space) const;
  std::vector<std::string> HistoryNamespaces() const;

  // nullptr before calibration.
  std::shared_ptr<const NamespaceCalibration> Calibration(std::string_view name_space) const;
  // Also attaches the calibration's reference set to the namespace's history (creating it), so
  // that its rows carry their Lemma 8 ceilings.
  void SetCalibration(std::string_view name_space, std::shared_ptr<const NamespaceCalibration> calibration);

  // The history and the calibration together, under one lookup (what the gate does per write).
  struct Snapshot {
    const QueryHistory* history = nullptr;
    std::shared_ptr<const NamespaceCalibration> calibration;
  };
  Snapshot Lookup(std::string_view name_space) const;

  size_t dim() const { return dim_; }

 private:
  struct Namespace {
    std::unique_ptr<QueryHistory> history;
    std::shared_ptr<const NamespaceCalibration> calibration;
  };
  Namespace& SlotLocked(std::string_view name_space)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);  // requires mu_ held exclusively

  const size_t dim_;
  const size_t capacity_;
  absl::Mutex set_calibration_mu_;  // one SetCalibration at a time: ceilings match the last one set
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Namespace> namespaces_ ABSL_GUARDED_BY(mu_);
};

}  // namespace bulwark

// VersionChecker: checks a sequence of change-feed versions for gaps and reorderings (issue #17
// point 2: "per-namespace versions are gap-free and commit-ordered; followers apply them in
// order"), for the fault tests and for `verify`.
//
// Two modes. kWholeStore: the events observed are the whole history read in order from the first
// version (the store's versions are history seqs, change_feed.h): every version must be the
// previous one + 1, starting at `first_expected`. kSubsequence: the events are what one reader
// saw or applied of some namespaces (a follower): versions must strictly increase, store-wide and
// per namespace, but may skip the versions of namespaces it does not follow; ComparePerNamespace
// then tells whether it skipped any of its own.
//
// The checker remembers only the last version per namespace and the first kMaxProblems problems,
// so it can watch a long run. Not thread-safe.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/postgresql/change_feed.h"

namespace bulwark {

struct VersionReport {
  int64_t events = 0;                 // versions observed
  int64_t last_version = 0;           // the highest observed (0 if none)
  int64_t gaps = 0;                   // kWholeStore: versions missing between two observed ones
  int64_t reorderings = 0;            // a version not above the one before (store-wide or in its namespace)
  int64_t duplicates = 0;             // a version observed twice in a row
  std::vector<std::string> problems;  // the first kMaxProblems, readable
  bool ok() const { return gaps == 0 && reorderings == 0 && duplicates == 0; }
};

class VersionChecker {
 public:
  enum class Mode { kWholeStore, kSubsequence };
  static constexpr size_t kMaxProblems = 20;

  explicit VersionChecker(Mode mode, int64_t first_expected = 1) : mode_(mode), expected_(first_expected) {}

  // Notes the next version observed, of `name_space`.
  void Observe(int64_t version, std::string_view name_space);
  const VersionReport& report() const { return report_; }

 private:
  void Problem(std::string text);

  const Mode mode_;
  int64_t expected_;  // kWholeStore: the next version due
  int64_t previous_ = 0;
  absl::flat_hash_map<std::string, int64_t> last_by_namespace_;
  VersionReport report_;
};

// Reads the whole history of the store through `feed` (batches of `batch` events) and checks it in
// kWholeStore mode: the report of a store whose versions are gap-free and in order is ok().
// The feed's errors.
[[nodiscard]] absl::StatusOr<VersionReport> CheckStoreVersions(ChangeFeed& feed, int batch = 1000);

// Compares what a reader applied of `name_space` (its versions in the order applied) with the
// namespace's versions in the store up to `through` (read through `feed`): OK-report if equal;
// otherwise problems naming the first version skipped, reordered or repeated. The feed's errors.
[[nodiscard]] absl::StatusOr<VersionReport> CompareWithStore(ChangeFeed& feed, std::string_view name_space,
                                                             const std::vector<int64_t>& applied,
                                                             int64_t through);

}  // namespace bulwark

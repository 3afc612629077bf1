// Rendezvous (highest-random-weight) placement of namespaces on replicas (issue #17 point 2;
// Thaler and Ravishankar, "Using name-based mappings to increase hit rates", IEEE/ACM ToN 1998).
// Each replica r gets the weight w(ns, r) = XXH3_64(ns, seed = XXH3_64(r)) for a namespace ns;
// the namespace is held by the R replicas of highest weight, the first of them its leader, the
// others its followers. So each of N replicas holds about R/N of the namespaces (and of their
// vectors), every replica computes the same placement from the same replica list (in any order,
// no coordination), and when a replica joins or leaves only the namespaces that gain or lose it
// move: about R/N of them, the minimum (a namespace's order over the other replicas never
// changes).
//
// Deterministic across processes and builds: XXH3 is specified bit for bit (xxHash 0.8), and
// equal weights (a 2^-64 event) are ordered by replica id.
#pragma once

#include <absl/status/statusor.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bulwark {

// The longest replica id accepted (bytes).
inline constexpr size_t kMaxReplicaIdBytes = 256;

class RendezvousPlacement {
 public:
  // A placement over `replicas` (their order does not matter). InvalidArgument if the list is
  // empty, or an id is empty, longer than kMaxReplicaIdBytes, or repeated.
  [[nodiscard]] static absl::StatusOr<RendezvousPlacement> Create(std::vector<std::string> replicas);

  // The min(copies, N) replicas that hold `name_space`, highest weight first (the first is its
  // leader). Fewer than `copies` only when there are fewer replicas; empty for copies == 0.
  std::vector<std::string> Place(std::string_view name_space, size_t copies) const;
  // The weight w(name_space, replica i) of the file comment (exposed for tests).
  uint64_t Weight(std::string_view name_space, size_t i) const;

  size_t size() const { return replicas_.size(); }

 private:
  RendezvousPlacement() = default;
  // (id, seed = XXH3_64(id)), sorted by id.
  std::vector<std::pair<std::string, uint64_t>> replicas_;
};

}  // namespace bulwark

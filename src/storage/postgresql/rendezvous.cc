// Rendezvous placement (see rendezvous.h).
#include "storage/postgresql/rendezvous.h"

#include <absl/strings/str_cat.h>
#include <xxhash.h>

#include <algorithm>

namespace bulwark {

absl::StatusOr<RendezvousPlacement> RendezvousPlacement::Create(std::vector<std::string> replicas) {
  if (replicas.empty()) return absl::InvalidArgumentError("a placement needs at least one replica");
  std::sort(replicas.begin(), replicas.end());
  for (size_t i = 0; i < replicas.size(); ++i) {
    if (replicas[i].empty()) return absl::InvalidArgumentError("a replica id is empty");
    if (replicas[i].size() > kMaxReplicaIdBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("a replica id is longer than ", kMaxReplicaIdBytes, " bytes"));
    }
    if (i > 0 && replicas[i] == replicas[i - 1])
      return absl::InvalidArgumentError(absl::StrCat("replica id ", replicas[i], " is listed twice"));
  }
  RendezvousPlacement placement;
  placement.replicas_.reserve(replicas.size());
  for (std::string& id : replicas) {
    const uint64_t seed = XXH3_64bits(id.data(), id.size());
    placement.replicas_.emplace_back(std::move(id), seed);
  }
  return placement;
}

uint64_t RendezvousPlacement::Weight(std::string_view name_space, size_t i) const {
  return XXH3_64bits_withSeed(name_space.data(), name_space.size(), replicas_[i].second);
}

std::vector<std::string> RendezvousPlacement::Place(std::string_view name_space, size_t copies) const {
  const size_t n = std::min(copies, replicas_.size());
  // (weight, index); replicas_ is sorted by id, so on equal weights the lower index (id) wins.
  std::vector<std::pair<uint64_t, size_t>> ranked;
  ranked.reserve(replicas_.size());
  for (size_t i = 0; i < replicas_.size(); ++i) ranked.emplace_back(Weight(name_space, i), i);
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(n), ranked.end(),
                    [](const auto& a, const auto& b) {
                      return a.first != b.first ? a.first > b.first : a.second < b.second;
                    });
  std::vector<std::string> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(replicas_[ranked[i].second].first);
  return out;
}

}  // namespace bulwark

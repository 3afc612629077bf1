// DefenseStateRepository: the write-time defenses' persistent state per namespace (DESIGN 4.5):
// MemSAD's rolling query history H (the embeddings of recent searches) and the namespace's
// calibration. The defenses own the meaning of both; a repository stores rows and text.
//
// Contract for every implementation: each call is one transaction; rows of one namespace never
// reach another; a failed call changes nothing.
#pragma once

#include <absl/status/status.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

namespace bulwark {

class DefenseStateRepository {
 public:
  virtual ~DefenseStateRepository() = default;

  // Query history rows of a namespace: appends `rows` with sequence numbers first_sequence..,
  // drops rows numbered below keep_from_sequence, and with `replace` first drops every row of the
  // namespace; one transaction.
  [[nodiscard]] virtual absl::Status SaveQueryHistory(std::string_view name_space, uint64_t first_sequence,
                                                      std::span<const std::vector<float>> rows,
                                                      uint64_t keep_from_sequence, bool replace) = 0;
  // Every stored query, by namespace then sequence number.
  [[nodiscard]] virtual absl::Status ScanQueryHistory(
      const std::function<absl::Status(std::string_view, uint64_t, std::vector<float>)>& visit) = 0;
  // The namespace's calibration (JSON text), replacing any earlier one.
  [[nodiscard]] virtual absl::Status PutCalibration(std::string_view name_space,
                                                    std::string_view calibration) = 0;
  [[nodiscard]] virtual absl::Status ScanCalibrations(
      const std::function<absl::Status(std::string_view, std::string_view)>& visit) = 0;
};

}  // namespace bulwark

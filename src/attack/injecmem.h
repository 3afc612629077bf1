// InjecMEM (MemSAD paper Sec. 3, 6.1): a single-interaction attacker. In one interaction (one
// AddBatch, as an agent's "remember these notes" tool call commits) it stores 3 x n_base
// broad-anchor entries built from 8 templates: each pairs the payload with generic vocabulary
// that many unrelated queries share (when / where / who, meetings, documents, accounts,
// settings...), so that the anchors are retrieved by a broad set of queries rather than one topic.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attack/attack.h"
#include "store/memory_store.h"

namespace bulwark::attack {

struct InjecMemOptions {
  int base_count = 5;  // n_base, 1 .. 100
  int multiplier = 3;  // entries = multiplier * n_base (MemSAD Sec. 6.1: 3 x n_base = 15), 1 .. 10
  uint64_t seed = 0;
};

inline constexpr int kInjecMemTemplates = 8;

// The anchor entries (metadata {"attack": "injecmem", "template": i}), deterministic in the seed.
// InvalidArgument for an empty payload or options out of range.
[[nodiscard]] absl::StatusOr<std::vector<NewEntry>> BuildInjecMemAnchors(std::string_view payload,
                                                                         const InjecMemOptions& options);

struct InjecMemResult {
  std::vector<Entry> stored;  // as the store returned them (state shows quarantine)
  int quarantined = 0;
};

// Builds the anchors and stores them in one AddBatch as `principal` -- the agent's "remember
// these notes" tool call, so `marker` (the agent's write path, e.g. watermarking) applies if set.
// Errors: those above and of AddBatch.
[[nodiscard]] absl::StatusOr<InjecMemResult> RunInjecMem(MemoryStore& store, std::string_view name_space,
                                                         std::string_view payload,
                                                         const InjecMemOptions& options,
                                                         std::string_view principal = "attacker",
                                                         const TextMarker& marker = {});

}  // namespace bulwark::attack

// The two signed rows of the store's meta table that every backend writes the same bytes for: the
// history chain's head (kHistoryHeadKey, storage_backend.h) and the query gates' manifest
// (kGateManifestKey, gate_repository.h). JSON objects with hex-encoded byte strings:
//
//   head      {"seq": int, "link": hex, "key_id": uint32, "tag": hex}
//   manifest  {"namespaces": [string, ...], "key_id": uint32, "tag": hex}
//
// Decoding is defensive: anything else is DataLoss (never a partial value), since the bytes were
// read back from storage that may have been edited.
#pragma once

#include <absl/status/statusor.h>

#include <optional>
#include <string>
#include <string_view>

#include "storage/gate_repository.h"
#include "storage/storage_backend.h"

namespace bulwark {

std::string EncodeHistoryHead(const HistoryHead& head);
[[nodiscard]] absl::StatusOr<std::optional<HistoryHead>> DecodeHistoryHead(std::string_view value);

std::string EncodeGateManifest(const GateManifest& manifest);
[[nodiscard]] absl::StatusOr<std::optional<GateManifest>> DecodeGateManifest(std::string_view value);

}  // namespace bulwark

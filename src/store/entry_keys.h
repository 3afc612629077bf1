// Client-chosen entry keys and expiry: two reserved members of an entry's metadata (issue #15
// point 1; doc/entry_format.md, "Reserved metadata").
//
//   "bulwark.key"            a string, unique among the live (active or quarantined) entries of a
//                            namespace: add with a key upserts, GET /v1/memories?key= finds it
//   "bulwark.expires_at_us"  an integer, microseconds since the epoch: from then on the entry is
//                            never returned, and the expiry sweeper purges it
//
// They live in the metadata so the entry's HMAC tag covers them without any change to the
// canonical encoding (doc/entry_format.md): a reader never sees an attacker-changed key or expiry,
// and stores made before them open and verify unchanged. Clients may not write members whose
// name starts with "bulwark." themselves; the service sets these two from the request's `key` and
// `expires_at_us` fields.
#pragma once

#include <absl/status/status.h>
#include <absl/strings/str_cat.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "bulwark/entry.h"
#include "core/text_validation.h"

namespace bulwark {

inline constexpr std::string_view kReservedMetadataPrefix = "bulwark.";
inline constexpr char kEntryKeyField[] = "bulwark.key";
inline constexpr char kExpiresAtField[] = "bulwark.expires_at_us";
inline constexpr size_t kMaxEntryKeyBytes = 256;

// The entry's key, if its metadata has a string "bulwark.key".
std::optional<std::string> EntryKey(const Entry& entry);
// The entry's expiry, if its metadata has an integer "bulwark.expires_at_us".
std::optional<int64_t> ExpiresAtUs(const Entry& entry);
// True if the entry has an expiry at or before `now_us`.
bool IsExpired(const Entry& entry, int64_t now_us);

// OK for a key of 1..256 bytes of valid UTF-8 without control characters; InvalidArgument else.
[[nodiscard]] absl::Status ValidateEntryKey(std::string_view key);
// InvalidArgument naming the first top-level member of `metadata` whose name starts with
// "bulwark." (reserved for the store); OK otherwise.
[[nodiscard]] absl::Status CheckNoReservedMetadata(const nlohmann::json& metadata);
// Copies the reserved members of `from` into `to` (an update keeps the entry's key and expiry).
void CarryReservedMetadata(const nlohmann::json& from, nlohmann::json* to);

// Definitions (header-only: the request parser, which links no store code, uses them too).

inline std::optional<std::string> EntryKey(const Entry& entry) {
  auto it = entry.metadata.find(kEntryKeyField);
  if (it == entry.metadata.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

inline std::optional<int64_t> ExpiresAtUs(const Entry& entry) {
  auto it = entry.metadata.find(kExpiresAtField);
  if (it == entry.metadata.end() || !it->is_number_integer()) return std::nullopt;
  if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return INT64_MAX;
  return it->get<int64_t>();
}

inline bool IsExpired(const Entry& entry, int64_t now_us) {
  const std::optional<int64_t> expires = ExpiresAtUs(entry);
  return expires && *expires <= now_us;
}

inline absl::Status ValidateEntryKey(std::string_view key) {
  if (key.empty() || key.size() > kMaxEntryKeyBytes || !IsValidUtf8(key)) {
    return absl::InvalidArgumentError("key must be 1 to 256 bytes of UTF-8");
  }
  for (unsigned char c : key) {
    if (c < 0x20 || c == 0x7f) return absl::InvalidArgumentError("key must not contain control characters");
  }
  return absl::OkStatus();
}

inline absl::Status CheckNoReservedMetadata(const nlohmann::json& metadata) {
  if (!metadata.is_object()) return absl::OkStatus();
  for (const auto& [name, value] : metadata.items()) {
    if (std::string_view(name).starts_with(kReservedMetadataPrefix)) {
      return absl::InvalidArgumentError(
          absl::StrCat("metadata member \"", name,
                       "\" is reserved (names starting with \"bulwark.\" are "
                       "set by the store: use the key and expires_at_us fields)"));
    }
  }
  return absl::OkStatus();
}

inline void CarryReservedMetadata(const nlohmann::json& from, nlohmann::json* to) {
  if (!from.is_object() || !to->is_object()) return;
  for (const auto& [name, value] : from.items()) {
    if (std::string_view(name).starts_with(kReservedMetadataPrefix)) (*to)[name] = value;
  }
}

}  // namespace bulwark

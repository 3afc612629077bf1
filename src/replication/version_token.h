// VersionToken: read-your-writes across replicas (issue #17 point 2; doc/scale-out.md, "Replication").
// A write answers with the token of the version it committed (its namespace and the seq of its
// newest history event, change_feed.h); a read that carries the token (`min_version`) is served
// by a replica only once that replica applied the namespace up to that version
// (Follower::WaitForVersion), so a client reads its own writes whichever replica it reaches.
//
// The text form is "bw1.<namespace, unpadded base64url>.<version, decimal>": opaque to clients,
// safe in a header or a query string. It is not signed: a forged token can only make a read wait
// for a version (bounded by the read's deadline) or name a namespace the caller must still be
// authorized for; it grants nothing. Parsing is bounded: at most kMaxVersionTokenBytes, the
// namespace at most 256 bytes, the version 1 .. 2^63 - 1 in at most 19 digits.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace bulwark {

inline constexpr size_t kMaxVersionTokenBytes = 512;

struct VersionToken {
  std::string name_space;
  int64_t version = 0;  // a history seq, >= 1

  // The text form (see the file comment). The caller passes a valid namespace and version.
  std::string Encode() const;
  // Parses a token. InvalidArgument (naming what is wrong, never echoing more than the first
  // bytes) for anything but a well-formed token with a 1..256-byte namespace and a version >= 1.
  [[nodiscard]] static absl::StatusOr<VersionToken> Decode(std::string_view text);

  friend bool operator==(const VersionToken&, const VersionToken&) = default;
};

}  // namespace bulwark

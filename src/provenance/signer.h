// Signer: HMAC-SHA256 provenance tags over the canonical encoding of an entry (SMSR
// Component 1, DESIGN 4.2). tag = HMAC-SHA256(key[key_id], CanonicalEncoding(entry, key_id)).
// The byte format and what the tag does and does not cover are in doc/entry_format.md.
#pragma once

#include <absl/functional/function_ref.h>
#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "bulwark/entry.h"
#include "provenance/keyring.h"

namespace bulwark {

// The domain string that starts every canonical encoding (no length prefix: it is fixed).
inline constexpr std::string_view kEntryDomain = "bulwark.entry.v1";
// Length of a tag in bytes (the SHA-256 output).
inline constexpr size_t kTagBytes = 32;

// The byte string that is signed: the domain string "bulwark.entry.v1" followed by every field,
// each as a 8-byte little-endian length and then its bytes, in this order:
//   key_id (decimal), namespace, id, text, metadata (nlohmann dump of the object: keys sorted, no
//   spaces), principal, source, kind, state (the lowercase names of ToString), created_at_us
//   (decimal), updated_at_us (decimal), embedding (the floats as little-endian IEEE-754 bytes).
// Length prefixes make the encoding injective: no two distinct entries encode alike.
// `tag` and `report` are not encoded. If the metadata holds a string that is not valid UTF-8 (which
// dump refuses), the metadata field is the byte 0xFF followed by nlohmann's to_cbor of it; a dump
// never starts with 0xFF, so this stays injective. Never throws.
std::string CanonicalEncoding(const Entry& entry, uint32_t key_id);

// The domain string that starts every history event's canonical encoding.
inline constexpr std::string_view kHistoryDomain = "bulwark.history.v1";

// The byte string signed for a history event, in the same form as CanonicalEncoding: the domain
// string "bulwark.history.v1", then each field as an 8-byte little-endian length and its bytes:
//   key_id (decimal), namespace, entry_id, event, actor, at_us (decimal), detail (as metadata is
//   encoded above, 0xFF + CBOR for a detail with invalid UTF-8).
// `seq` is not encoded: the database assigns it when the event is inserted. Never throws.
std::string EventEncoding(const HistoryEvent& event, uint32_t key_id);

// Appends one field of a canonical encoding: its length as 8 little-endian bytes, then its bytes
// (the form every encoding above uses; shared with the audit log's record encoding).
void AppendEncodingField(std::string* out, std::string_view bytes);

// HMAC-SHA256 of `message` under `key` (any length, RFC 2104) via OpenSSL's EVP_MAC, reusing a
// context already keyed with `key` when this thread has one: the function the signer uses, exposed
// for the RFC 4231 known-answer tests. Returns the 32 raw tag bytes; Internal if OpenSSL fails.
[[nodiscard]] absl::StatusOr<std::string> HmacSha256(std::span<const uint8_t> key, std::string_view message);

class Signer {
 public:
  // `keyring` must outlive the signer.
  explicit Signer(const Keyring* keyring) : keyring_(keyring) {}

  // Sets entry->key_id to the newest key and entry->tag to the 32-byte tag. If the keyring is
  // empty or OpenSSL fails, sets key_id to the newest id (0 if empty) and clears the tag, so the
  // entry fails Verify rather than carrying a wrong tag.
  void Sign(Entry* entry) const;

  // OK when entry.tag is the correct tag under key entry.key_id. DataLoss when the tag is missing,
  // has the wrong length, names an unknown key, or does not match (compared in constant time
  // with CRYPTO_memcmp); the message says which and names the entry, never the expected tag.
  // Internal if OpenSSL fails.
  [[nodiscard]] absl::Status Verify(const Entry& entry) const;

  // The same for a history event: Sign sets event->key_id and event->tag; Verify checks them.
  void Sign(HistoryEvent* event) const;
  [[nodiscard]] absl::Status Verify(const HistoryEvent& event) const;

  // The same for any other signed record (e.g. the access-control rows, auth/access_signer.h),
  // given its canonical encoding under a key id:
  // the tag of `encode(key_id)` under the newest key, and that key's id; an empty tag if the
  // keyring is empty or OpenSSL fails.
  std::pair<uint32_t, std::string> NewestTag(const std::function<std::string(uint32_t)>& encode) const;
  // OK when `tag` is the tag of `encode(key_id)` under key `key_id`; DataLoss naming `what()` if
  // not (called only then: verification is on every search's path).
  [[nodiscard]] absl::Status CheckTag(const std::function<std::string()>& what, uint32_t key_id,
                                      std::string_view tag,
                                      const std::function<std::string(uint32_t)>& encode) const;

 private:
  // NewestTag and CheckTag over an encoding the callback returns as a view (valid until the tag
  // is computed): the entry and event paths encode into a buffer their thread reuses.
  std::pair<uint32_t, std::string> NewestTagOver(absl::FunctionRef<std::string_view(uint32_t)> encode) const;
  [[nodiscard]] absl::Status CheckTagOver(const std::function<std::string()>& what, uint32_t key_id,
                                          std::string_view tag,
                                          absl::FunctionRef<std::string_view(uint32_t)> encode) const;

  const Keyring* keyring_;
};

}  // namespace bulwark

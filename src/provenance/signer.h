// Signer: HMAC-SHA256 provenance tags over the canonical encoding of an entry (SMSR
// Component 1, DESIGN 4.2). tag = HMAC-SHA256(key[key_id], CanonicalEncoding(entry, key_id)).
#pragma once

#include <cstdint>
#include <string>

#include <absl/status/status.h>

#include "bulwark/entry.h"
#include "provenance/keyring.h"

namespace bulwark {

// The byte string that is signed: the domain string "bulwark.entry.v1" followed by every field,
// each as a 8-byte little-endian length and then its bytes, in this order:
//   key_id (decimal), namespace, id, text, metadata (nlohmann dump of the object: keys sorted, no
//   spaces), principal, source, kind, state, created_at_us (decimal), updated_at_us (decimal),
//   embedding (the floats as little-endian IEEE-754 bytes).
// Length prefixes make the encoding injective: no two distinct entries encode alike.
std::string CanonicalEncoding(const Entry& entry, uint32_t key_id);

class Signer {
 public:
  // `keyring` must outlive the signer.
  explicit Signer(const Keyring* keyring) : keyring_(keyring) {}

  // Sets entry->key_id to the newest key and entry->tag to the 32-byte tag.
  void Sign(Entry* entry) const;

  // OK when entry.tag is the correct tag under key entry.key_id. DataLoss when the tag is missing,
  // has the wrong length, names an unknown key, or does not match (compared in constant time
  // with CRYPTO_memcmp).
  [[nodiscard]] absl::Status Verify(const Entry& entry) const;

 private:
  const Keyring* keyring_;
};

}  // namespace bulwark

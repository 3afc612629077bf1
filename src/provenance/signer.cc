// HMAC-SHA256 provenance tags: the canonical byte encoding of an entry (doc/entry_format.md), the
// HMAC itself (OpenSSL's EVP_MAC), and signing and constant-time verification.
#include "provenance/signer.h"

#include <absl/functional/function_ref.h>
#include <absl/strings/str_cat.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

#include "core/json_tree.h"
#include "core/json_writer.h"
#include "core/status_macros.h"

namespace bulwark {
namespace {

static_assert(std::numeric_limits<float>::is_iec559 && sizeof(float) == 4,
              "the canonical encoding stores floats as IEEE-754 binary32");

// Appends `value` as 8 bytes, least significant first.
void AppendU64LE(std::string* out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

// Appends one field: its length as 8 little-endian bytes, then its bytes.
void AppendField(std::string* out, std::string_view bytes) {
  AppendU64LE(out, bytes.size());
  out->append(bytes);
}

// The metadata field: the compact dump (keys sorted by std::map), or 0xFF + CBOR when the value
// holds a string that is not valid UTF-8 and dump refuses it (see CanonicalEncoding in signer.h).
// Written with JsonWriter when it can (about twice as fast as dump for an add's event detail);
// dump itself decides every other case.
std::string MetadataBytes(const nlohmann::json& metadata) {
  if (metadata.is_object() && metadata.empty()) return "{}";  // most entries: dump's bytes, no serializer
  {
    std::string out;
    JsonWriter w(&out);
    if (WriteJsonTree(w, metadata, InvalidJsonText::kRefuse)) return out;
  }
  try {
    return metadata.dump();
  } catch (const nlohmann::json::exception&) {
    std::string out(1, '\xff');
    nlohmann::json::to_cbor(metadata, out);
    return out;
  }
}

// Appends the embedding field: its byte length, then each float as 4 little-endian bytes.
void AppendEmbedding(std::string* out, const std::vector<float>& embedding) {
  AppendU64LE(out, embedding.size() * sizeof(float));
  if constexpr (std::endian::native == std::endian::little) {
    out->append(reinterpret_cast<const char*>(embedding.data()), embedding.size() * sizeof(float));
  } else {
    for (float f : embedding) {
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof(bits));
      for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
    }
  }
}

// The HMAC implementation, fetched from OpenSSL's default provider once per process (a fetch per
// call, as the one-shot HMAC() does, costs more than hashing a whole entry); nullptr if the
// provider has none. EVP_MAC objects are immutable and safe to share between threads.
EVP_MAC* HmacMethod() {
  static EVP_MAC* const method = EVP_MAC_fetch(nullptr, OSSL_MAC_NAME_HMAC, nullptr);
  return method;
}

// HMAC contexts already keyed, for one thread: keying a context (hashing the padded key twice,
// fetching SHA-256) cost as much as hashing a whole entry, and a search verifies every candidate
// under the same one or two keys. EVP_MAC_init with a null key restarts a context under the key it
// has. A few keys are kept; the least recently used is replaced. The copies of the keys and the
// contexts' key state are cleared when the thread ends.
class KeyedHmacContexts {
 public:
  KeyedHmacContexts() = default;
  KeyedHmacContexts(const KeyedHmacContexts&) = delete;
  KeyedHmacContexts& operator=(const KeyedHmacContexts&) = delete;
  ~KeyedHmacContexts() {
    for (Slot& slot : slots_) Clear(slot);
  }

  // A context ready for EVP_MAC_update under `key`; nullptr if OpenSSL fails.
  EVP_MAC_CTX* Start(std::span<const uint8_t> key) {
    ++clock_;
    for (Slot& slot : slots_) {
      if (slot.ctx != nullptr && slot.key.size() == key.size() &&
          CRYPTO_memcmp(slot.key.data(), key.data(), key.size()) == 0) {
        slot.last_used = clock_;
        return EVP_MAC_init(slot.ctx, nullptr, 0, nullptr) == 1 ? slot.ctx : nullptr;
      }
    }
    Slot& slot = *std::min_element(slots_.begin(), slots_.end(),
                                   [](const Slot& a, const Slot& b) { return a.last_used < b.last_used; });
    Clear(slot);
    EVP_MAC* method = HmacMethod();
    if (method == nullptr || (slot.ctx = EVP_MAC_CTX_new(method)) == nullptr) return nullptr;
    static const uint8_t kEmptyKey = 0;  // OpenSSL wants a non-null key pointer even for no bytes
    char digest[] = "SHA256";
    const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                                 OSSL_PARAM_construct_end()};
    if (EVP_MAC_init(slot.ctx, key.empty() ? &kEmptyKey : key.data(), key.size(), params) != 1) {
      Clear(slot);
      return nullptr;
    }
    slot.key.assign(key.begin(), key.end());
    slot.last_used = clock_;
    return slot.ctx;
  }

 private:
  struct Slot {
    std::vector<uint8_t> key;
    EVP_MAC_CTX* ctx = nullptr;
    uint64_t last_used = 0;
  };
  static void Clear(Slot& slot) {
    EVP_MAC_CTX_free(slot.ctx);  // clears the HMAC state it held
    slot.ctx = nullptr;
    if (!slot.key.empty()) OPENSSL_cleanse(slot.key.data(), slot.key.size());
    slot.key.clear();
    slot.last_used = 0;
  }

  std::array<Slot, 4> slots_;
  uint64_t clock_ = 0;
};

std::string Describe(const Entry& entry) { return absl::StrCat("entry ", entry.name_space, "/", entry.id); }

// Appends CanonicalEncoding(entry, key_id) to `out`.
void AppendCanonicalEncoding(std::string* out_ptr, const Entry& entry, uint32_t key_id) {
  std::string& out = *out_ptr;
  const std::string metadata = MetadataBytes(entry.metadata);
  // 12 fields of 8-byte length plus their bytes (the small ones are at most 24 bytes each).
  out.reserve(out.size() + kEntryDomain.size() + 12 * 8 + 7 * 24 + entry.name_space.size() + entry.id.size() +
              entry.text.size() + metadata.size() + entry.principal.size() +
              entry.embedding.size() * sizeof(float));
  out.append(kEntryDomain);
  AppendField(&out, absl::StrCat(key_id));
  AppendField(&out, entry.name_space);
  AppendField(&out, entry.id);
  AppendField(&out, entry.text);
  AppendField(&out, metadata);
  AppendField(&out, entry.principal);
  AppendField(&out, ToString(entry.source));
  AppendField(&out, ToString(entry.kind));
  AppendField(&out, ToString(entry.state));
  AppendField(&out, absl::StrCat(entry.created_at_us));
  AppendField(&out, absl::StrCat(entry.updated_at_us));
  AppendEmbedding(&out, entry.embedding);
}

// Appends EventEncoding(event, key_id) to `out`.
void AppendEventEncoding(std::string* out_ptr, const HistoryEvent& event, uint32_t key_id) {
  std::string& out = *out_ptr;
  const std::string detail = MetadataBytes(event.detail);
  out.reserve(out.size() + kHistoryDomain.size() + 7 * 8 + 2 * 24 + event.name_space.size() +
              event.entry_id.size() + event.event.size() + event.actor.size() + detail.size());
  out.append(kHistoryDomain);
  AppendField(&out, absl::StrCat(key_id));
  AppendField(&out, event.name_space);
  AppendField(&out, event.entry_id);
  AppendField(&out, event.event);
  AppendField(&out, event.actor);
  AppendField(&out, absl::StrCat(event.at_us));
  AppendField(&out, detail);
}

// The encoding a tag is computed over, built in a buffer this thread reuses: an entry's encoding
// is about 2 KB (its vector), and allocating and freeing that per signature or verification cost
// about a fifth of the HMAC itself. The view is valid until the thread's next call.
std::string_view ThreadEncoding(absl::FunctionRef<void(std::string*)> append) {
  thread_local std::string buffer;
  buffer.clear();
  append(&buffer);
  return buffer;
}

}  // namespace

std::string CanonicalEncoding(const Entry& entry, uint32_t key_id) {
  std::string out;
  AppendCanonicalEncoding(&out, entry, key_id);
  return out;
}

void AppendEncodingField(std::string* out, std::string_view bytes) { AppendField(out, bytes); }

absl::StatusOr<std::string> HmacSha256(std::span<const uint8_t> key, std::string_view message) {
  // OpenSSL wants non-null pointers even for empty inputs.
  static const uint8_t kEmpty = 0;
  const auto* data = message.empty() ? &kEmpty : reinterpret_cast<const unsigned char*>(message.data());
  thread_local KeyedHmacContexts contexts;
  EVP_MAC_CTX* ctx = contexts.Start(key);
  std::string tag(EVP_MAX_MD_SIZE, '\0');
  size_t tag_len = 0;
  if (ctx == nullptr || EVP_MAC_update(ctx, data, message.size()) != 1 ||
      EVP_MAC_final(ctx, reinterpret_cast<unsigned char*>(tag.data()), &tag_len, tag.size()) != 1 ||
      tag_len != kTagBytes) {
    return absl::InternalError("OpenSSL HMAC-SHA256 failed");
  }
  tag.resize(tag_len);
  return tag;
}

std::string EventEncoding(const HistoryEvent& event, uint32_t key_id) {
  std::string out;
  AppendEventEncoding(&out, event, key_id);
  return out;
}

std::pair<uint32_t, std::string> Signer::NewestTag(const std::function<std::string(uint32_t)>& encode) const {
  std::string bytes;
  return NewestTagOver([&](uint32_t key_id) -> std::string_view {
    bytes = encode(key_id);
    return bytes;
  });
}

absl::Status Signer::CheckTag(const std::function<std::string()>& what, uint32_t key_id, std::string_view tag,
                              const std::function<std::string(uint32_t)>& encode) const {
  std::string bytes;
  return CheckTagOver(what, key_id, tag, [&](uint32_t id) -> std::string_view {
    bytes = encode(id);
    return bytes;
  });
}

std::pair<uint32_t, std::string> Signer::NewestTagOver(
    absl::FunctionRef<std::string_view(uint32_t)> encode) const {
  const uint32_t key_id = keyring_->newest_key_id();
  const std::shared_ptr<const HmacKey> key = keyring_->Find(key_id);
  if (key == nullptr) return {key_id, ""};
  absl::StatusOr<std::string> tag = HmacSha256(*key, encode(key_id));
  return {key_id, tag.ok() ? *std::move(tag) : ""};
}

absl::Status Signer::CheckTagOver(const std::function<std::string()>& what, uint32_t key_id,
                                  std::string_view tag,
                                  absl::FunctionRef<std::string_view(uint32_t)> encode) const {
  if (tag.empty()) {
    return absl::DataLossError(absl::StrCat(what(), ": missing provenance tag"));
  }
  if (tag.size() != kTagBytes) {
    return absl::DataLossError(
        absl::StrCat(what(), ": provenance tag has ", tag.size(), " bytes, want ", kTagBytes));
  }
  const std::shared_ptr<const HmacKey> key = keyring_->Find(key_id);
  if (key == nullptr) {
    return absl::DataLossError(absl::StrCat(what(), ": provenance tag names unknown key id ", key_id));
  }
  BULWARK_ASSIGN_OR_RETURN(std::string expected, HmacSha256(*key, encode(key_id)));
  const bool match = CRYPTO_memcmp(expected.data(), tag.data(), kTagBytes) == 0;
  OPENSSL_cleanse(expected.data(), expected.size());
  if (!match) {
    return absl::DataLossError(absl::StrCat(what(), ": provenance tag does not match under key ", key_id));
  }
  return absl::OkStatus();
}

void Signer::Sign(Entry* entry) const {
  std::tie(entry->key_id, entry->tag) = NewestTagOver([entry](uint32_t key_id) {
    return ThreadEncoding([&](std::string* out) { AppendCanonicalEncoding(out, *entry, key_id); });
  });
}

absl::Status Signer::Verify(const Entry& entry) const {
  return CheckTagOver(
      [&entry] { return Describe(entry); }, entry.key_id, entry.tag,
      [&entry](uint32_t key_id) {
        return ThreadEncoding([&](std::string* out) { AppendCanonicalEncoding(out, entry, key_id); });
      });
}

void Signer::Sign(HistoryEvent* event) const {
  std::tie(event->key_id, event->tag) = NewestTagOver([event](uint32_t key_id) {
    return ThreadEncoding([&](std::string* out) { AppendEventEncoding(out, *event, key_id); });
  });
}

absl::Status Signer::Verify(const HistoryEvent& event) const {
  return CheckTagOver(
      [&event] {
        return absl::StrCat("history event ", event.seq, " (", event.event, ") of entry ", event.name_space,
                            "/", event.entry_id);
      },
      event.key_id, event.tag,
      [&event](uint32_t key_id) {
        return ThreadEncoding([&](std::string* out) { AppendEventEncoding(out, event, key_id); });
      });
}

}  // namespace bulwark
